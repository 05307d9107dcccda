// Rows a block takes in turn (ReduceConfig.rows_per_block), on the CPU: the one kernel
// of a kept-in-registers RMSNorm / softmax with R > 1, and of one whose next row is
// staged in shared memory (keep_in_shared: a double buffer), run block by block by the
// test interpreter over grid rows/R, gives exactly reference::reduce's bits (pinned,
// memcmp) and exactly the R = 1 kernel's bits (pinned and free order) for R = 2, 3, 4
// and 64, rows that do and do not fill the last block, rows shorter and longer than the
// kept passes, with specials, and for whole_strips rows; each block writes exactly its
// own rows; the kernel takes rows last, is named _rb<R>, compiles for both targets, and
// its double buffer takes two slot sets of dynamic shared memory; and the knob's errors
// name the field.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "codegen/Compile.h"
#include "dsl/reference/Reference.h"
#include "dsl/tile/ReduceProgram.h"
#include "tests/codegen/ProgramInterpreter.h"
#include "tests/codegen/ReduceInputs.h"
#include "tests/codegen/ReducePhases.h"

namespace fixbits {
namespace {

using dsl::ReduceConfig;
using dsl::ReduceDesc;
using dsl::ReduceOp;
using testing::Buffers;

using testing::run_one_kernel;
using testing::same_bits;

std::string where(const ReduceDesc& d, const ReduceConfig& c, int64_t rows, int64_t cols, bool specials) {
  return absl::StrFormat(
      "%s warps=%d ept=%d keep=%d shared=%d rows_per_block=%d whole=%d rows=%d cols=%d specials=%d",
      dsl::to_string(d), c.warps, c.elems_per_thread, c.keep_passes, c.keep_in_shared ? 1 : 0, c.rows_per_block,
      c.whole_strips ? 1 : 0, rows, cols, specials ? 1 : 0);
}

TEST(ReduceRowsPerBlock, BitIdenticalToReferenceAndToOneRowABlock) {
  int cases = 0;
  for (ReduceOp op : {ReduceOp::kRmsNorm, ReduceOp::kSoftmax}) {
    for (DType in : {DType::kF32, DType::kBF16, DType::kF16}) {
      for (dsl::TreeOrder order : {dsl::TreeOrder::kPinned, dsl::TreeOrder::kFree}) {
        const ReduceDesc d{.op = op, .in_dtype = in, .out_dtype = in, .order = order, .strip = 256};
        // Pass extents 256 (pinned: the strip) or 64 / 512 (free); keep 2 or 1 passes, so
        // rows of 1, 257 and 700 columns are shorter than, past, and well past them.
        for (ReduceConfig base : {ReduceConfig{.warps = 1, .elems_per_thread = 2, .keep_passes = 2},
                                  ReduceConfig{.warps = 2, .elems_per_thread = 8, .keep_passes = 1}}) {
          for (auto [rows, cols] : {std::pair<int64_t, int64_t>{1, 257}, {5, 1}, {7, 700}, {8, 257}}) {
            for (bool specials : {false, true}) {
              const uint32_t seed = static_cast<uint32_t>(rows * 31 + cols);
              const auto p = testing::fused_row_problem(d, rows, cols, seed, specials);
              auto one = run_one_kernel(d, base, p);
              ASSERT_TRUE(one.ok()) << where(d, base, rows, cols, specials) << ": " << one.status();
              absl::StatusOr<std::vector<uint32_t>> ref;
              if (order == dsl::TreeOrder::kPinned) {
                ref = dsl::reference::reduce(d, p);
                ASSERT_TRUE(ref.ok()) << ref.status();
                ASSERT_TRUE(same_bits(*one, *ref)) << where(d, base, rows, cols, specials);
              }
              for (int r : {2, 3, 4, 64}) {
                for (bool shared : {false, true}) {
                  ReduceConfig c = base;
                  c.rows_per_block = r;
                  c.keep_in_shared = shared;
                  auto got = run_one_kernel(d, c, p);
                  ASSERT_TRUE(got.ok()) << where(d, c, rows, cols, specials) << ": " << got.status();
                  ASSERT_TRUE(same_bits(*got, *one)) << where(d, c, rows, cols, specials) << ": not R = 1's bits";
                  if (ref.ok()) {
                    ASSERT_TRUE(same_bits(*got, *ref)) << where(d, c, rows, cols, specials);
                  }
                  ++cases;
                }
              }
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 2 * 3 * 2 * 2 * 4 * 2 * 4 * 2);
}

TEST(ReduceRowsPerBlock, WholeStripRowsBitIdenticalToReference) {
  int cases = 0;
  for (ReduceOp op : {ReduceOp::kRmsNorm, ReduceOp::kSoftmax}) {
    const ReduceDesc d{.op = op, .in_dtype = DType::kBF16, .out_dtype = DType::kBF16, .strip = 128};
    // Pass extent 128; 2 kept passes: rows of one pass (the second kept pass past the row),
    // two, and five (three more passes in the loops).
    for (bool shared : {false, true}) {
      const ReduceConfig c{.warps = 2, .elems_per_thread = 2, .keep_passes = 2, .keep_in_shared = shared,
                           .whole_strips = true, .rows_per_block = 3};
      for (int64_t cols : {128, 256, 640}) {
        for (bool specials : {false, true}) {
          const auto p = testing::fused_row_problem(d, 7, cols, static_cast<uint32_t>(cols + 5), specials);
          auto ref = dsl::reference::reduce(d, p);
          ASSERT_TRUE(ref.ok()) << ref.status();
          auto got = run_one_kernel(d, c, p);
          ASSERT_TRUE(got.ok()) << where(d, c, 7, cols, specials) << ": " << got.status();
          EXPECT_TRUE(same_bits(*got, *ref)) << where(d, c, 7, cols, specials);
          ++cases;
        }
      }
    }
  }
  EXPECT_EQ(cases, 2 * 2 * 3 * 2);
}

TEST(ReduceRowsPerBlock, EachBlockWritesExactlyItsOwnRows) {
  const ReduceDesc d{.op = ReduceOp::kSoftmax, .in_dtype = DType::kBF16, .out_dtype = DType::kBF16, .strip = 256};
  const ReduceConfig c{.warps = 1, .elems_per_thread = 2, .keep_passes = 2, .rows_per_block = 3};
  const auto p = testing::fused_row_problem(d, 7, 300, 11u, false);
  auto prog = dsl::reduce(d, c);
  ASSERT_TRUE(prog.ok()) << prog.status();
  EXPECT_EQ(prog->grid, "rows/3");
  EXPECT_EQ(*dsl::grid_blocks(prog->grid, 7, 300, 1), 3);
  EXPECT_EQ(*dsl::grid_blocks(prog->grid, 6, 300, 1), 2);
  EXPECT_EQ(*dsl::grid_blocks(prog->grid, 0, 300, 1), 0);
  for (int64_t block = 0; block < 3; ++block) {
    Buffers mem = testing::reduce_buffers(d, p);
    ASSERT_TRUE(testing::run_block(*prog, block, {{"cols", p.cols}, {"rows", p.rows}}, {}, mem, 32).ok());
    std::vector<int64_t> written;
    for (int64_t r = 0; r < p.rows; ++r) {
      bool any = false;
      for (int64_t k = 0; k < p.cols; ++k) any |= mem["y"].bits[static_cast<size_t>(r * p.cols + k)] != 0xdeadu;
      if (any) written.push_back(r);
    }
    std::vector<int64_t> want;
    for (int64_t r = 3 * block; r < std::min<int64_t>(3 * block + 3, 7); ++r) want.push_back(r);
    EXPECT_EQ(written, want) << "block " << block;
  }
}

TEST(ReduceRowsPerBlock, TakesRowsLastIsNamedAndCompilesForBothTargets) {
  const ReduceConfig c{.warps = 2, .elems_per_thread = 4, .keep_passes = 2, .rows_per_block = 4};
  auto rms = dsl::reduce_phases({.op = ReduceOp::kRmsNorm, .strip = 256}, c);
  ASSERT_TRUE(rms.ok()) << rms.status();
  EXPECT_EQ(testing::phase_list(*rms), "fixbits_rmsnorm_f32_f32_pinned_s256_w2_e4_k2_rb4@rows/4(x,w,y,cols,eps,rows,) ");
  auto sm = dsl::reduce_phases({.op = ReduceOp::kSoftmax, .strip = 256}, c);
  ASSERT_TRUE(sm.ok()) << sm.status();
  EXPECT_EQ(testing::phase_list(*sm), "fixbits_softmax_f32_f32_pinned_s256_w2_e4_k2_rb4@rows/4(x,y,cols,rows,) ");
  for (codegen::Target t : {codegen::Target::kNvptxSm90a, codegen::Target::kAmdgpuGfx942}) {
    for (bool shared : {false, true}) {
      ReduceConfig tc = c;
      tc.lanes = t == codegen::Target::kAmdgpuGfx942 ? 64 : 32;
      tc.keep_in_shared = shared;
      for (ReduceOp op : {ReduceOp::kRmsNorm, ReduceOp::kSoftmax}) {
        const dsl::ReduceDesc d{.op = op, .in_dtype = DType::kBF16, .out_dtype = DType::kBF16, .strip = 256};
        auto prog = dsl::reduce(d, tc);
        ASSERT_TRUE(prog.ok()) << prog.status();
        auto k = codegen::compile(*prog, t);
        ASSERT_TRUE(k.ok()) << prog->name << ": " << k.status();
        EXPECT_FALSE(k->text.empty());
        // The double buffer: two slot sets of the 2 kept passes of bf16 (a pass is 256
        // elements on 32 lanes, 512 on 64); kept in registers, none.
        const int64_t q = tc.lanes == 32 ? 256 : 512;
        ASSERT_EQ(dsl::pass_extent(d, tc), q);
        EXPECT_EQ(k->dynamic_shared_bytes, shared ? 2 * 2 * q * 2 : 0) << prog->name;
      }
    }
  }
}

TEST(ReduceRowsPerBlock, KnobErrorsNameTheField) {
  const auto msg = testing::phases_message;
  const ReduceDesc sm{.op = ReduceOp::kSoftmax, .strip = 256};
  EXPECT_EQ(msg(sm, {.warps = 2, .keep_passes = 1, .rows_per_block = 2}), "ok");
  for (int r : {0, 65, -1}) {
    EXPECT_EQ(msg(sm, {.warps = 2, .keep_passes = 1, .rows_per_block = r}),
              absl::StrFormat("ReduceConfig.rows_per_block %d is not in [1, 64] (consecutive rows one block "
                              "takes; 1: one row a block).", r));
  }
  const std::string needs = "ReduceConfig.rows_per_block 2 applies to rms_norm and softmax rows in one block";
  auto refused = [&](const ReduceDesc& d, ReduceConfig c, const std::string& got_part) {
    const std::string m = msg(d, c);
    EXPECT_NE(m.find(needs), std::string::npos) << m;
    EXPECT_NE(m.find(got_part), std::string::npos) << m;
  };
  refused(sm, {.warps = 2, .rows_per_block = 2}, "keep_passes 0");
  EXPECT_EQ(msg(sm, {.warps = 2, .keep_passes = 1, .keep_in_shared = true, .rows_per_block = 2}), "ok");
  refused(sm, {.warps = 2, .keep_passes = 1, .keep_in_shared = true, .stage_exp = true, .rows_per_block = 2},
          "stage_exp true");
  // keep_in_shared with R > 1: two rows' slot sets must fit the shared limit, and a row's
  // kept x the registers it is read into. 3 passes of 16384 f32 (32 warps x 16) are 192
  // KiB, under the 200 KiB limit once, not twice.
  const ReduceDesc wide{.op = ReduceOp::kSoftmax, .strip = 16384};
  EXPECT_EQ(msg(wide, {.warps = 32, .elems_per_thread = 16, .keep_passes = 3, .keep_in_shared = true}), "ok");
  const std::string twice = msg(wide, {.warps = 32, .elems_per_thread = 16, .keep_passes = 3,
                                       .keep_in_shared = true, .rows_per_block = 2});
  EXPECT_NE(twice.find("ReduceConfig.keep_passes 3 with keep_in_shared keeps 2 rows (rows_per_block > 1) x 3 x "
                       "16384 elements of f32 = 393216 bytes"), std::string::npos) << twice;
  EXPECT_EQ(dsl::max_keep_passes(wide, {.warps = 32, .elems_per_thread = 16, .keep_in_shared = true}), 3);
  EXPECT_EQ(dsl::max_keep_passes(wide, {.warps = 32, .elems_per_thread = 16, .keep_in_shared = true,
                                        .rows_per_block = 2}), 1);
  // 2 passes of 2048 over one warp are 128 values a thread, past the 64 registers.
  const ReduceDesc one_warp{.op = ReduceOp::kSoftmax, .strip = 2048};
  EXPECT_EQ(msg(one_warp, {.warps = 1, .elems_per_thread = 64, .keep_passes = 2, .keep_in_shared = true}), "ok");
  const std::string regs = msg(one_warp, {.warps = 1, .elems_per_thread = 64, .keep_passes = 2,
                                          .keep_in_shared = true, .rows_per_block = 2});
  EXPECT_NE(regs.find("ReduceConfig.keep_passes 2 keeps 2 x 64 = 128 values of x per thread"), std::string::npos)
      << regs;
  EXPECT_NE(regs.find("reads each row's kept x into registers"), std::string::npos) << regs;
  refused(sm, {.warps = 2, .blocks_per_row = 2, .keep_passes = 1, .cluster_rows = true, .rows_per_block = 2},
          "blocks_per_row 2");
  refused({.op = ReduceOp::kSum, .strip = 256}, {.warps = 2, .rows_per_block = 2}, "op=sum");
  refused({.op = ReduceOp::kSoftmax, .axis = dsl::ReduceAxis::kColumn, .strip = 256},
          {.warps = 2, .rows_per_block = 2}, "axis=column");
}

}  // namespace
}  // namespace fixbits
