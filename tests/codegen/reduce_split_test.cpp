// Split rows (ReduceConfig.blocks_per_row), on the CPU: the kernels of
// dsl::reduce_phases, run block by block by the test interpreter (ops with
// codegen's semantics, reduces through simulate_plan, which LowerReduce emits), give
// exactly reference::reduce's bits for every blocks_per_row, on adversarial rows
// (NaN, inf, -0.0, subnormals, cancellation) and odd lengths; the unsplit kernel
// does too. Also: the knob's errors name the field, the PTX of a split row stores
// each strip result and folds them in order, and the runner's split rule. (Split
// columns: column_split_test.cpp.)
#include <gtest/gtest.h>

#include <bit>
#include <random>
#include <regex>
#include <set>
#include <sstream>

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
using dsl::TreeOrder;
using testing::Buffers;

// Adversarial rows at this test's scales (large: 2^10, small: 2^-9).
std::vector<uint32_t> adversarial_bits(DType t, size_t n, uint32_t seed, bool specials) {
  return testing::adversarial_bits(t, n, seed, specials, 10, -9);
}
using testing::plain_bits;

using testing::run_reduce_phases;

std::string where(const ReduceDesc& d, const ReduceConfig& c, int64_t rows, int64_t cols) {
  return absl::StrFormat("%s warps=%d ept=%d blocks_per_row=%d rows=%d cols=%d", dsl::to_string(d),
                         c.warps, c.elems_per_thread, c.blocks_per_row, rows, cols);
}

TEST(ReduceSplit, SumMaxMinBitIdenticalToReferenceForEveryBlocksPerRow) {
  int cases = 0;
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin}) {
    for (DType in : {DType::kF32, DType::kBF16}) {
      for (int64_t strip : {int64_t{128}, int64_t{1024}}) {
        ReduceDesc d{.op = op, .in_dtype = in, .out_dtype = DType::kF32, .strip = strip};
        for (int64_t cols : {int64_t{1}, int64_t{127}, int64_t{1025}, int64_t{3 * 1024 + 5}, int64_t{9000}}) {
          const int64_t rows = 3;
          dsl::reference::ReduceProblem p{.rows = rows, .cols = cols, .x = {}, .w = {}};
          p.x = adversarial_bits(in, static_cast<size_t>(rows * cols), static_cast<uint32_t>(cols + strip),
                                 /*specials=*/cols % 2 == 1);
          auto ref = dsl::reference::reduce(d, p);
          ASSERT_TRUE(ref.ok()) << ref.status();
          for (ReduceConfig c : {ReduceConfig{.warps = 1, .elems_per_thread = 4},
                                 ReduceConfig{.warps = 4, .elems_per_thread = 1}}) {
            for (int bpr : {1, 2, 3, 7}) {
              c.blocks_per_row = bpr;
              auto got = run_reduce_phases(d, c, p);
              ASSERT_TRUE(got.ok()) << where(d, c, rows, cols) << ": " << got.status();
              ASSERT_EQ(*got, *ref) << where(d, c, rows, cols);
              ++cases;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 3 * 2 * 2 * 5 * 2 * 4);
}

TEST(ReduceSplit, RmsNormAndSoftmaxBitIdenticalToReferenceForEveryBlocksPerRow) {
  for (ReduceOp op : {ReduceOp::kRmsNorm, ReduceOp::kSoftmax}) {
    for (DType in : {DType::kF32, DType::kBF16}) {
      ReduceDesc d{.op = op, .in_dtype = in, .out_dtype = in, .strip = 256};
      for (int64_t cols : {int64_t{1}, int64_t{255}, int64_t{257}, int64_t{2000}}) {
        const int64_t rows = 2;
        dsl::reference::ReduceProblem p{.rows = rows, .cols = cols, .x = {}, .w = {}};
        p.x = plain_bits(in, static_cast<size_t>(rows * cols), static_cast<uint32_t>(cols), -8.0f, 8.0f);
        p.w = plain_bits(in, static_cast<size_t>(cols), 99u, 0.5f, 1.5f);
        p.eps = 1e-5f;
        auto ref = dsl::reference::reduce(d, p);
        ASSERT_TRUE(ref.ok()) << ref.status();
        for (ReduceConfig c : {ReduceConfig{.warps = 1, .elems_per_thread = 8},
                               ReduceConfig{.warps = 2, .elems_per_thread = 2}}) {
          for (int bpr : {1, 2, 5}) {
            c.blocks_per_row = bpr;
            auto got = run_reduce_phases(d, c, p);
            ASSERT_TRUE(got.ok()) << where(d, c, rows, cols) << ": " << got.status();
            ASSERT_EQ(*got, *ref) << where(d, c, rows, cols);
          }
        }
      }
    }
  }
}

// The unsplit RMSNorm/softmax walk their elementwise pass in chunks of the block
// extent, not of the (larger) strip: the bits stay the reference's.
TEST(ReduceSplit, UnsplitFusedFormsWithStripAboveBlockExtentMatchReference) {
  for (ReduceOp op : {ReduceOp::kRmsNorm, ReduceOp::kSoftmax}) {
    ReduceDesc d{.op = op, .in_dtype = DType::kBF16, .out_dtype = DType::kBF16, .strip = 4096};
    const ReduceConfig c{.warps = 4, .elems_per_thread = 8};  // block extent 1024 < strip
    dsl::reference::ReduceProblem p{.rows = 2, .cols = 5000, .x = {}, .w = {}};
    p.x = plain_bits(d.in_dtype, 10000, 5u, -4.0f, 4.0f);
    p.w = plain_bits(d.in_dtype, 5000, 6u, 0.5f, 1.5f);
    auto ref = dsl::reference::reduce(d, p);
    ASSERT_TRUE(ref.ok());
    auto prog = dsl::reduce(d, c);
    ASSERT_TRUE(prog.ok()) << prog.status();
    EXPECT_NE(tile::to_string(*prog).find("arange 1024"), std::string::npos)
        << "the elementwise pass should use the block extent";
    auto got = run_reduce_phases(d, c, p);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, *ref);
  }
}

TEST(ReduceSplit, LongOddRowSplitOverManyBlocks) {
  ReduceDesc d{.op = ReduceOp::kSum, .in_dtype = DType::kBF16, .out_dtype = DType::kF32, .strip = 4096};
  dsl::reference::ReduceProblem p{.rows = 1, .cols = 1000003, .x = {}, .w = {}};
  p.x = adversarial_bits(d.in_dtype, 1000003, 11u, false);
  auto ref = dsl::reference::reduce(d, p);
  ASSERT_TRUE(ref.ok());
  auto got = run_reduce_phases(d, {.warps = 8, .elems_per_thread = 8, .blocks_per_row = 64}, p);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, *ref);
}

TEST(ReduceSplit, KnobErrorsNameTheField) {
  ReduceDesc d{.strip = 1024};
  auto msg = [&](const ReduceDesc& desc, ReduceConfig c) {
    auto r = dsl::reduce_phases(desc, c);
    return r.ok() ? std::string("ok") : std::string(r.status().message());
  };
  EXPECT_EQ(msg(d, {.blocks_per_row = 0}),
            "ReduceConfig.blocks_per_row 0 is not in [1, 1024] (blocks sharing a row, or a column group "
            "of a pinned column sum/max/min).");
  EXPECT_NE(msg(d, {.blocks_per_row = 1025}).find("ReduceConfig.blocks_per_row 1025 is not in [1, 1024]"),
            std::string::npos);
  // A pinned column sum splits its column groups (tests/codegen/column_split_test.cpp);
  // a column softmax does not.
  ReduceDesc col = d;
  col.axis = dsl::ReduceAxis::kColumn;
  EXPECT_EQ(msg(col, {.blocks_per_row = 2}), "ok");
  col.op = ReduceOp::kSoftmax;
  EXPECT_NE(msg(col, {.blocks_per_row = 2}).find("blocks_per_row 2 splits a pinned column sum"), std::string::npos);
  ReduceDesc free = d;
  free.order = TreeOrder::kFree;
  EXPECT_NE(msg(free, {.blocks_per_row = 2}).find("blocks_per_row 2 needs order=pinned"), std::string::npos);
  EXPECT_NE(msg(d, {.warps = 16, .elems_per_thread = 4, .blocks_per_row = 2})
                .find("elems_per_thread*lanes*warps (4*32*16 = 2048) at most the strip 1024"),
            std::string::npos);
  auto one = dsl::reduce(d, {.blocks_per_row = 2});
  ASSERT_FALSE(one.ok());
  EXPECT_NE(std::string(one.status().message()).find("dsl::reduce_phases"), std::string::npos);
  // blocks_per_row = 1 is the unsplit kernel, unchanged.
  auto phases = dsl::reduce_phases(d, {});
  ASSERT_TRUE(phases.ok());
  ASSERT_EQ(phases->size(), 1u);
  EXPECT_EQ((*phases)[0], *dsl::reduce(d, {}));
}

TEST(ReduceSplit, PhasesHaveTheDocumentedNamesGridsAndParameters) {
  const ReduceConfig c{.warps = 2, .elems_per_thread = 4, .blocks_per_row = 4};
  auto sum = dsl::reduce_phases({.op = ReduceOp::kSum, .strip = 1024}, c);
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(testing::phase_list(*sum),
            "fixbits_sum_f32_f32_pinned_s1024_w2_e4_p4_partials@row_blocks(x,ws,cols,) "
            "fixbits_sum_f32_f32_pinned_s1024_w2_e4_p4_fold@rows(ws,y,cols,) ");
  auto rms = dsl::reduce_phases({.op = ReduceOp::kRmsNorm, .strip = 1024}, c);
  ASSERT_TRUE(rms.ok());
  EXPECT_EQ(testing::phase_list(*rms),
            "fixbits_rmsnorm_f32_f32_pinned_s1024_w2_e4_p4_partials@row_blocks(x,ws,cols,) "
            "fixbits_rmsnorm_f32_f32_pinned_s1024_w2_e4_p4_normalize@row_blocks(x,w,ws,y,cols,eps,) ");
  auto sm = dsl::reduce_phases({.op = ReduceOp::kSoftmax, .strip = 1024}, c);
  ASSERT_TRUE(sm.ok());
  EXPECT_EQ(testing::phase_list(*sm),
            "fixbits_softmax_f32_f32_pinned_s1024_w2_e4_p4_maxpart@row_blocks(x,wsm,cols,) "
            "fixbits_softmax_f32_f32_pinned_s1024_w2_e4_p4_exppart@row_blocks(x,wsm,wss,cols,) "
            "fixbits_softmax_f32_f32_pinned_s1024_w2_e4_p4_normalize@row_blocks(x,wsm,wss,y,cols,) ");
}

// The PTX of a split row sum: the partials kernel ends each strip with one f32 store
// to the workspace after its tree; the fold kernel issues its 16 workspace loads
// before the first add and chains the adds, each on the previous result.
TEST(ReduceSplit, PtxStoresEachStripAndFoldsInOrder) {
  auto phases = dsl::reduce_phases({.op = ReduceOp::kSum, .in_dtype = DType::kBF16, .strip = 2048},
                                   {.warps = 8, .elems_per_thread = 8, .blocks_per_row = 4});
  ASSERT_TRUE(phases.ok()) << phases.status();
  ASSERT_EQ(phases->size(), 2u);
  auto partials = codegen::compile((*phases)[0], codegen::Target::kNvptxSm90a);
  auto fold = codegen::compile((*phases)[1], codegen::Target::kNvptxSm90a);
  ASSERT_TRUE(partials.ok()) << partials.status();
  ASSERT_TRUE(fold.ok()) << fold.status();
  const std::string& pt = partials->text;
  const size_t bar = pt.find("bar.sync");
  const size_t st = pt.find("st.global.b32");
  ASSERT_NE(bar, std::string::npos);
  ASSERT_NE(st, std::string::npos) << pt;
  EXPECT_LT(bar, st) << "the strip result is stored after the cross-warp tree";
  EXPECT_NE(pt.find("ld.global.v4.b32"), std::string::npos) << "bf16 loads should be 16 bytes";
  EXPECT_EQ(pt.find("atom."), std::string::npos);

  // The fold: a loop over whole groups of 16 strip results (16 unmasked workspace loads,
  // then 16 chained adds), then one partial group (16 loads in their own guarded blocks,
  // before the combine block) whose adds a_k = a_{k-1} + v_k are continued by a selp
  // that keeps either a_{k-1} or a_k (the lane past n keeps the running value).
  std::istringstream in(fold->text);
  std::string line;
  std::regex add_re(R"(add\.rn\.f32\s+(%r\d+),\s*(%r\d+),\s*(%r\d+);)");
  std::regex selp_re(R"(selp\.f32\s+(%r\d+),\s*(%r\d+),\s*(%r\d+),)");
  std::set<std::string> chain_vals;
  std::string last;
  int chain = 0, adds = 0, loads = 0;
  while (std::getline(in, line)) {
    std::smatch m;
    if (line.find("ld.global.b32") != std::string::npos) ++loads;
    if (std::regex_search(line, m, selp_re)) {
      if (chain_vals.count(m[2]) && chain_vals.count(m[3])) {
        last = m[1];
        chain_vals.insert(last);
      }
    } else if (std::regex_search(line, m, add_re)) {
      ++adds;
      if (!last.empty() && (m[2] == last || m[3] == last)) ++chain;
      last = m[1];
      chain_vals.insert(last);
    }
  }
  EXPECT_EQ(loads, 2 * 16);
  EXPECT_EQ(adds, 2 * 16);
  EXPECT_EQ(chain, adds - 1) << fold->text;
  EXPECT_EQ(fold->text.find("shfl"), std::string::npos) << "the fold is one thread's chain";
}

}  // namespace
}  // namespace fixbits
