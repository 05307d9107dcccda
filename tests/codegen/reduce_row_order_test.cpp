// Split rows in alternating row order (ReduceConfig.alternate_row_order), on the CPU:
// the phases of dsl::reduce_phases, run block by block by the test interpreter, give
// exactly reference::reduce's bits and the forward phases' bits (memcmp), for every
// blocks_per_row, odd row counts and lengths; phase 1 (RMSNorm's normalize, softmax's
// exp partials) really starts on the last row and phase 2 (softmax's normalize) on the
// first; the backward phases are named _rev and take rows last; they compile for both
// targets; and the knob's errors name the field.
#include <gtest/gtest.h>

#include <cstring>

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
using testing::run_reduce_phases;

using testing::same_bits;

std::string where(const ReduceDesc& d, const ReduceConfig& c, int64_t rows, int64_t cols) {
  return absl::StrFormat("%s warps=%d ept=%d blocks_per_row=%d alternate=%d rows=%d cols=%d", dsl::to_string(d),
                         c.warps, c.elems_per_thread, c.blocks_per_row, c.alternate_row_order ? 1 : 0, rows, cols);
}

dsl::reference::ReduceProblem problem(DType in, int64_t rows, int64_t cols, bool adversarial) {
  dsl::reference::ReduceProblem p{.rows = rows, .cols = cols, .x = {}, .w = {}};
  const size_t n = static_cast<size_t>(rows * cols);
  const uint32_t seed = static_cast<uint32_t>(rows * 7919 + cols);
  p.x = adversarial ? testing::adversarial_bits(in, n, seed, /*specials=*/cols % 2 == 1, 6, -9)
                    : testing::plain_bits(in, n, seed, -8.0f, 8.0f);
  p.w = testing::plain_bits(in, static_cast<size_t>(cols), 99u, 0.5f, 1.5f);
  p.eps = 1e-5f;
  return p;
}

TEST(ReduceRowOrder, AlternatingPhasesBitIdenticalToReferenceAndToForwardPhases) {
  int cases = 0;
  for (ReduceOp op : {ReduceOp::kRmsNorm, ReduceOp::kSoftmax}) {
    for (DType in : {DType::kF32, DType::kBF16, DType::kF16}) {
      const ReduceDesc d{.op = op, .in_dtype = in, .out_dtype = in, .strip = 256};
      for (auto [rows, cols] : {std::pair<int64_t, int64_t>{1, 1000}, {3, 1}, {3, 257}, {5, 2000}, {4, 1024}}) {
        for (bool adversarial : {false, true}) {
          const auto p = problem(in, rows, cols, adversarial);
          auto ref = dsl::reference::reduce(d, p);
          ASSERT_TRUE(ref.ok()) << ref.status();
          for (ReduceConfig c : {ReduceConfig{.warps = 1, .elems_per_thread = 8},
                                 ReduceConfig{.warps = 2, .elems_per_thread = 2}}) {
            for (int bpr : {2, 3, 5}) {
              c.blocks_per_row = bpr;
              c.alternate_row_order = false;
              auto forward = run_reduce_phases(d, c, p);
              ASSERT_TRUE(forward.ok()) << where(d, c, rows, cols) << ": " << forward.status();
              c.alternate_row_order = true;
              auto alternating = run_reduce_phases(d, c, p);
              ASSERT_TRUE(alternating.ok()) << where(d, c, rows, cols) << ": " << alternating.status();
              ASSERT_TRUE(same_bits(*alternating, *ref)) << where(d, c, rows, cols);
              ASSERT_TRUE(same_bits(*alternating, *forward)) << where(d, c, rows, cols);
              ++cases;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 2 * 3 * 5 * 2 * 2 * 3);
}

// Runs blocks [0, P) of phase `phase` after every earlier phase ran whole, and returns
// the rows whose y (or, for softmax's exp partials, wss) those P blocks wrote.
std::vector<int64_t> rows_written_by_first_blocks(const ReduceDesc& d, const ReduceConfig& c,
                                                  const dsl::reference::ReduceProblem& p, size_t phase) {
  auto phases = dsl::reduce_phases(d, c);
  EXPECT_TRUE(phases.ok()) << phases.status();
  if (!phases.ok() || phase >= phases->size()) return {};
  Buffers mem = testing::reduce_buffers(d, p);
  const std::map<std::string, int64_t> ints = {{"cols", p.cols}, {"rows", p.rows}};
  const std::map<std::string, float> floats = {{"eps", p.eps}};
  for (size_t i = 0; i < phase; ++i) {
    for (int64_t b = 0; b < p.rows * c.blocks_per_row; ++b) {
      EXPECT_TRUE(testing::run_block((*phases)[i], b, ints, floats, mem, c.lanes).ok());
    }
  }
  const Buffers before = mem;
  for (int64_t b = 0; b < c.blocks_per_row; ++b) {
    EXPECT_TRUE(testing::run_block((*phases)[phase], b, ints, floats, mem, c.lanes).ok());
  }
  const bool exp_partials = d.op == ReduceOp::kSoftmax && phase == 1;
  const char* out = exp_partials ? "wss" : "y";
  const int64_t per_row = exp_partials ? dsl::strip_count(d, p.cols) : p.cols;
  std::vector<int64_t> rows;
  for (int64_t r = 0; r < p.rows; ++r) {
    for (int64_t k = 0; k < per_row; ++k) {
      const size_t i = static_cast<size_t>(r * per_row + k);
      if (mem[out].bits[i] != before.at(out).bits[i]) {
        rows.push_back(r);
        break;
      }
    }
  }
  return rows;
}

TEST(ReduceRowOrder, EachPhaseStartsWhereThePhaseBeforeEnded) {
  const auto p = problem(DType::kBF16, 5, 1000, false);
  for (bool alternate : {false, true}) {
    const ReduceConfig c{.warps = 2, .elems_per_thread = 2, .blocks_per_row = 3, .alternate_row_order = alternate};
    const std::vector<int64_t> last = {4}, first = {0};
    const ReduceDesc rms{.op = ReduceOp::kRmsNorm, .in_dtype = DType::kBF16, .out_dtype = DType::kBF16, .strip = 256};
    EXPECT_EQ(rows_written_by_first_blocks(rms, c, p, 1), alternate ? last : first) << "rms_norm normalize";
    const ReduceDesc sm{.op = ReduceOp::kSoftmax, .in_dtype = DType::kBF16, .out_dtype = DType::kBF16, .strip = 256};
    EXPECT_EQ(rows_written_by_first_blocks(sm, c, p, 1), alternate ? last : first) << "softmax exp partials";
    EXPECT_EQ(rows_written_by_first_blocks(sm, c, p, 2), first) << "softmax normalize: forward again";
  }
}

TEST(ReduceRowOrder, BackwardPhasesAreNamedRevTakeRowsLastAndCompile) {
  const ReduceConfig c{.warps = 2, .elems_per_thread = 4, .blocks_per_row = 4, .alternate_row_order = true};
  auto rms = dsl::reduce_phases({.op = ReduceOp::kRmsNorm, .strip = 1024}, c);
  ASSERT_TRUE(rms.ok()) << rms.status();
  EXPECT_EQ(testing::phase_list(*rms),
            "fixbits_rmsnorm_f32_f32_pinned_s1024_w2_e4_p4_partials@row_blocks(x,ws,cols,) "
            "fixbits_rmsnorm_f32_f32_pinned_s1024_w2_e4_p4_normalize_rev@row_blocks(x,w,ws,y,cols,eps,rows,) ");
  auto sm = dsl::reduce_phases({.op = ReduceOp::kSoftmax, .strip = 1024}, c);
  ASSERT_TRUE(sm.ok()) << sm.status();
  EXPECT_EQ(testing::phase_list(*sm),
            "fixbits_softmax_f32_f32_pinned_s1024_w2_e4_p4_maxpart@row_blocks(x,wsm,cols,) "
            "fixbits_softmax_f32_f32_pinned_s1024_w2_e4_p4_exppart_rev@row_blocks(x,wsm,wss,cols,rows,) "
            "fixbits_softmax_f32_f32_pinned_s1024_w2_e4_p4_normalize@row_blocks(x,wsm,wss,y,cols,) ");
  // The forward phases are the very programs of the forward order (a runner shares them).
  ReduceConfig forward = c;
  forward.alternate_row_order = false;
  auto sm_forward = dsl::reduce_phases({.op = ReduceOp::kSoftmax, .strip = 1024}, forward);
  ASSERT_TRUE(sm_forward.ok());
  EXPECT_EQ((*sm)[0], (*sm_forward)[0]);
  EXPECT_EQ((*sm)[2], (*sm_forward)[2]);
  EXPECT_FALSE((*sm)[1] == (*sm_forward)[1]);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(dsl::phase_walks_rows_backward(c, i), i == 1) << i;
    EXPECT_FALSE(dsl::phase_walks_rows_backward(forward, i)) << i;
  }
  // No new op: the backward kernels lower for both targets.
  for (codegen::Target t : {codegen::Target::kNvptxSm90a, codegen::Target::kAmdgpuGfx942}) {
    ReduceConfig tc = c;
    tc.lanes = t == codegen::Target::kAmdgpuGfx942 ? 64 : 32;
    for (ReduceOp op : {ReduceOp::kRmsNorm, ReduceOp::kSoftmax}) {
      auto phases = dsl::reduce_phases({.op = op, .in_dtype = DType::kBF16, .out_dtype = DType::kBF16, .strip = 1024}, tc);
      ASSERT_TRUE(phases.ok()) << phases.status();
      auto k = codegen::compile((*phases)[1], t);
      ASSERT_TRUE(k.ok()) << (*phases)[1].name << ": " << k.status();
      EXPECT_FALSE(k->text.empty());
    }
  }
}

TEST(ReduceRowOrder, KnobErrorsNameTheField) {
  const auto msg = testing::phases_message;
  const ReduceDesc rms{.op = ReduceOp::kRmsNorm, .strip = 1024};
  EXPECT_EQ(msg(rms, {.warps = 2, .blocks_per_row = 2, .alternate_row_order = true}), "ok");
  EXPECT_EQ(msg(rms, {.warps = 2, .alternate_row_order = true}),
            "ReduceConfig.alternate_row_order applies to split rows run as separate kernels (blocks_per_row "
            "> 1 without cluster_rows: a later kernel reads the rows again); here blocks_per_row is 1.");
  EXPECT_NE(msg(rms, {.warps = 2, .blocks_per_row = 2, .cluster_rows = true, .alternate_row_order = true})
                .find("ReduceConfig.alternate_row_order applies to split rows run as separate kernels"),
            std::string::npos);
  EXPECT_NE(msg(rms, {.warps = 2, .blocks_per_row = 2, .cluster_rows = true, .alternate_row_order = true})
                .find("here blocks_per_row is 2 with cluster_rows."),
            std::string::npos);
  EXPECT_NE(msg({.op = ReduceOp::kSum, .strip = 1024}, {.warps = 2, .blocks_per_row = 2, .alternate_row_order = true})
                .find("ReduceConfig.alternate_row_order applies to rms_norm and softmax"),
            std::string::npos);
  EXPECT_NE(msg({.op = ReduceOp::kSum, .axis = dsl::ReduceAxis::kColumn, .strip = 1024},
                {.warps = 2, .blocks_per_row = 2, .alternate_row_order = true})
                .find("ReduceConfig.alternate_row_order applies to rms_norm and softmax"),
            std::string::npos);
  EXPECT_NE(msg({.op = ReduceOp::kSoftmax, .axis = dsl::ReduceAxis::kColumn, .strip = 1024},
                {.warps = 2, .blocks_per_row = 2, .alternate_row_order = true})
                .find("ReduceConfig.alternate_row_order needs axis=row"),
            std::string::npos);
  auto one = dsl::reduce(rms, {.alternate_row_order = true});
  ASSERT_FALSE(one.ok());
  EXPECT_NE(std::string(one.status().message()).find("ReduceConfig.alternate_row_order"), std::string::npos);
}

}  // namespace
}  // namespace fixbits
