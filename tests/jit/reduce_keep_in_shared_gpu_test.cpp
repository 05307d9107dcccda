// GPU test (label gpu) of ReduceConfig.keep_in_shared: the kept passes of a fused
// RMSNorm / softmax row (one block per row) and the kept strips of a cluster row held in
// shared memory (cp.async copies, read back at each use) give exactly the CPU
// reference's bits (memcmp), and the bits of the same configuration kept in registers or
// not kept at all. Seven tests, so the first ones' verdicts come back even from a short
// device call: the bench's cluster case for RMSNorm, then for softmax, each at 8 x 8 and
// at 16 x 4 (bf16, strip 4096, P = 2, 4, 8, K = 1 and the block's whole share, each
// also with min_blocks_per_sm 4 (registers capped, spills at 8 x 8), on 256 x 131072,
// 1 x 1000003, 3 x 4099 and 1 x 1), then one block per row (f32 / bf16 / f16, strip 1024,
// K = 1, 2 and the shared bound, rows shorter than, equal to, between and longer than the
// kept passes), and softmax with its kept e_i in shared memory too (stage_exp: the
// cluster case at 8 x 8, and one block per row). Row 2 of
// each problem has NaN, +-inf, subnormals, -0.0 and +-L. Each case
// prints a line with its time to stderr. Without a device every test prints [SKIP] <reason>.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "dsl/reference/Reference.h"
#include "gtest/gtest.h"
#include "tests/jit/ReduceGpuRun.h"
#include "tests/jit/SeededGpuTest.h"

namespace fixbits {
namespace {

using dsl::ReduceConfig;
using dsl::ReduceDesc;
using dsl::ReduceOp;

class ReduceKeepInSharedGpuTest : public testing::SeededGpuTest {
 protected:
  // Each case's line goes to stderr before it runs and with its time after, so a device
  // call cut short (a hang, the call's limit) still names the case it stopped in.
  absl::StatusOr<std::vector<uint32_t>> run(const ReduceDesc& d, const ReduceConfig& cfg,
                                            const dsl::reference::ReduceProblem& p, const std::string& where) {
    std::fprintf(stderr, "[case] %s ...", where.c_str());
    std::fflush(stderr);
    const auto t0 = std::chrono::steady_clock::now();
    auto out = testing::run_reduce(device_, d, cfg, p);
    std::fprintf(stderr, " %.0f ms\n",
                 std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    return out;
  }
  dsl::reference::ReduceProblem problem(const ReduceDesc& d, int64_t rows, int64_t cols) {
    return testing::fused_gpu_problem(d, rows, cols, rng_);
  }
  // `got` against `want` (memcmp), naming the first differing element.
  static void expect_same(const std::vector<uint32_t>& got, const std::vector<uint32_t>& want,
                          const std::string& what) {
    const std::string diff = testing::first_difference(got, want);
    if (!diff.empty()) ADD_FAILURE() << what << ": " << diff;
  }
  // The bench's cluster case of one op (bf16, strip 4096), K = 1 and the block's share up
  // to 8 strips: each kept strip is unrolled code, and K = 25 took 20-45 s a kernel to
  // build on the H200 (session 18), so the one test of both ops passed its call's limit;
  // one block per row covers K = 10 and 20. Returns the cases run.
  int cluster_cases(ReduceOp op, ReduceConfig base) {
    int cases = 0;
    const ReduceDesc d{.op = op, .in_dtype = DType::kBF16, .out_dtype = DType::kBF16, .strip = 4096};
    struct Shape {
      int64_t rows, cols;
    };
    for (Shape s : {Shape{256, 131072}, Shape{1, 1000003}, Shape{3, 4099}, Shape{1, 1}}) {
      const auto p = problem(d, s.rows, s.cols);
      const auto r0 = std::chrono::steady_clock::now();
      auto ref = dsl::reference::reduce(d, p);
      std::fprintf(stderr, "[reference] %s %dx%d %.0f ms\n", dsl::to_string(d).c_str(), static_cast<int>(s.rows),
                   static_cast<int>(s.cols),
                   std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - r0).count());
      EXPECT_TRUE(ref.ok()) << ref.status();
      if (!ref.ok()) return cases;
      const int64_t strips = dsl::strip_count(d, p.cols);
      {
        for (int parts : {2, 4, 8}) {
          ReduceConfig c = base;
          c.blocks_per_row = parts;
          c.cluster_rows = true;
          c.keep_in_shared = true;
          c.keep_passes = 1;
          const int64_t most = dsl::max_keep_passes(d, c);
          const int64_t share = (strips - 1) / parts + 1;
          // The block's whole share (up to 25 strips at 1 x 1000003): such kernels build
          // in about 2 s since the codegen skips LLVM's strength reduction past 8,000
          // instructions (17-44 s before, when this test kept at most 8).
          std::vector<int64_t> keeps = {1, std::min(most, share)};
          keeps.erase(std::unique(keeps.begin(), keeps.end()), keeps.end());
          for (int64_t keep : keeps) {
            // And asking for 4 blocks an SM (registers capped, spilling at 8 x 8).
            for (int min_blocks : {0, 4}) {
              c.keep_passes = static_cast<int>(keep);
              c.min_blocks_per_sm = min_blocks;
              const std::string where = absl::StrFormat(
                  "%s warps=%d elems=%d P=%d keep=%d shared%s min_blocks=%d rows=%d cols=%d seed=%d",
                  dsl::to_string(d), c.warps, c.elems_per_thread, parts, keep, c.stage_exp ? " stage_exp" : "",
                  min_blocks, p.rows, p.cols, seed_);
              auto got = run(d, c, p, where);
              EXPECT_TRUE(got.ok()) << where << ": " << got.status();
              if (!got.ok()) return cases;
              expect_same(*got, *ref, where + " vs reference");
              ++cases;
            }
          }
        }
      }
    }
    return cases;
  }
};

// One test an op and warps x elements, so that run side by side (each test in its own
// process: scripts/next_device_calls.sh gputests) the slowest is about half of one op's
// two configurations (softmax's took 135 s on the H100, session 23). Each runs at least
// 4 shapes x 3 P x 2 blocks-an-SM requests (the 1 x 1 shape has one keep).
constexpr ReduceConfig k8x8{.warps = 8, .elems_per_thread = 8};
constexpr ReduceConfig k16x4{.warps = 16, .elems_per_thread = 4};

TEST_F(ReduceKeepInSharedGpuTest, TheBenchClusterCaseMatchesTheReferenceAt8x8) {
  EXPECT_GE(cluster_cases(ReduceOp::kRmsNorm, k8x8), 4 * 3 * 2);
}

TEST_F(ReduceKeepInSharedGpuTest, TheBenchClusterCaseMatchesTheReferenceAt16x4) {
  EXPECT_GE(cluster_cases(ReduceOp::kRmsNorm, k16x4), 4 * 3 * 2);
}

TEST_F(ReduceKeepInSharedGpuTest, SoftmaxClusterCaseMatchesTheReferenceAt8x8) {
  EXPECT_GE(cluster_cases(ReduceOp::kSoftmax, k8x8), 4 * 3 * 2);
}

TEST_F(ReduceKeepInSharedGpuTest, SoftmaxClusterCaseMatchesTheReferenceAt16x4) {
  EXPECT_GE(cluster_cases(ReduceOp::kSoftmax, k16x4), 4 * 3 * 2);
}

// Softmax's cluster rows with their share's e_i in shared memory too (stage_exp; the
// candidates have them since session 31).
TEST_F(ReduceKeepInSharedGpuTest, SoftmaxClusterCaseWithItsExpsStagedMatchesTheReferenceAt8x8) {
  EXPECT_GE(cluster_cases(ReduceOp::kSoftmax, {.warps = 8, .elems_per_thread = 8, .stage_exp = true}), 4 * 3 * 2);
}

TEST_F(ReduceKeepInSharedGpuTest, OneBlockPerRowMatchesRegistersAndTheReference) {
  int cases = 0;
  for (ReduceOp op : {ReduceOp::kRmsNorm, ReduceOp::kSoftmax}) {
    for (DType in : {DType::kF32, DType::kBF16, DType::kF16}) {
      const ReduceDesc d{.op = op, .in_dtype = in, .out_dtype = in, .strip = 1024};
      ReduceConfig c{.warps = 4, .elems_per_thread = 8, .keep_passes = 1, .keep_in_shared = true};  // Q = 1024
      const int64_t q = dsl::pass_extent(d, c);
      const int64_t most = dsl::max_keep_passes(d, c);  // 10 (f32), 20 (bf16 / f16)
      for (int64_t cols : {int64_t{1}, int64_t{33}, q - 1, q + 3, 3 * q + 5, most * q, most * q + 3}) {
        const auto p = problem(d, 5, cols);
        auto ref = dsl::reference::reduce(d, p);
        ASSERT_TRUE(ref.ok()) << ref.status();
        for (int64_t keep : {int64_t{1}, int64_t{2}, most}) {
          c.keep_passes = static_cast<int>(keep);
          const std::string where = absl::StrFormat("%s warps=%d elems=%d keep=%d shared cols=%d seed=%d",
                                                    dsl::to_string(d), c.warps, c.elems_per_thread, keep, cols, seed_);
          auto got = run(d, c, p, where);
          ASSERT_TRUE(got.ok()) << where << ": " << got.status();
          expect_same(*got, *ref, where + " vs reference");
          if (keep <= dsl::max_keep_passes(d, {.warps = 4, .elems_per_thread = 8})) {
            ReduceConfig regs = c;
            regs.keep_in_shared = false;
            auto kept = run(d, regs, p, where + " (registers)");
            ASSERT_TRUE(kept.ok()) << where << " (registers): " << kept.status();
            expect_same(*got, *kept, where + " vs kept in registers");
          }
          ++cases;
        }
      }
    }
  }
  EXPECT_EQ(cases, 2 * 3 * 7 * 3);
}

// ReduceConfig.stage_exp: softmax's kept e_i in shared memory too, read back by the
// outputs (tests/jit/reduce_stage_exp_test on the CPU). Every dtype, one block a row,
// K = 1, 2 and the bound (which counts the e_i's 4 bytes), memcmp-equal to the reference
// and to the same kernel computing the outputs' exps again; then the bench's 2048 x 16384
// candidate's shape (bf16, strip 4096, 8 x 8, the row's 4 passes, whole strips).
TEST_F(ReduceKeepInSharedGpuTest, SoftmaxWithItsExpsStagedMatchesTheReference) {
  int cases = 0;
  for (DType in : {DType::kF32, DType::kBF16, DType::kF16}) {
    const ReduceDesc d{.op = ReduceOp::kSoftmax, .in_dtype = in, .out_dtype = in, .strip = 1024};
    ReduceConfig c{.warps = 4, .elems_per_thread = 8, .keep_passes = 1, .keep_in_shared = true,
                   .stage_exp = true};  // Q = 1024
    const int64_t q = dsl::pass_extent(d, c);
    const int64_t most = dsl::max_keep_passes(d, c);  // 25 (f32), 33 (bf16 / f16)
    for (int64_t cols : {int64_t{1}, int64_t{33}, q + 3, 3 * q + 5, most * q + 3}) {
      const auto p = problem(d, 5, cols);
      auto ref = dsl::reference::reduce(d, p);
      ASSERT_TRUE(ref.ok()) << ref.status();
      for (int64_t keep : {int64_t{1}, int64_t{2}, most}) {
        c.keep_passes = static_cast<int>(keep);
        const std::string where = absl::StrFormat("%s warps=%d elems=%d keep=%d stage_exp cols=%d seed=%d",
                                                  dsl::to_string(d), c.warps, c.elems_per_thread, keep, cols, seed_);
        auto got = run(d, c, p, where);
        ASSERT_TRUE(got.ok()) << where << ": " << got.status();
        expect_same(*got, *ref, where + " vs reference");
        ReduceConfig again = c;
        again.stage_exp = false;
        auto recomputed = run(d, again, p, where + " (exps again)");
        ASSERT_TRUE(recomputed.ok()) << where << " (exps again): " << recomputed.status();
        expect_same(*got, *recomputed, where + " vs the exps computed again");
        ++cases;
      }
    }
  }
  const ReduceDesc d{.op = ReduceOp::kSoftmax, .in_dtype = DType::kBF16, .out_dtype = DType::kBF16, .strip = 4096};
  const ReduceConfig c{.warps = 8, .elems_per_thread = 8, .keep_passes = 4, .keep_in_shared = true,
                       .min_blocks_per_sm = 2, .whole_strips = true, .divide_by_reciprocal = true, .stage_exp = true};
  const auto p = problem(d, 7, 16384);
  auto ref = dsl::reference::reduce(d, p);
  ASSERT_TRUE(ref.ok()) << ref.status();
  const std::string where = absl::StrFormat("%s 8x8 keep=4 mb=2 ws rd stage_exp 7x16384 seed=%d", dsl::to_string(d),
                                            seed_);
  auto got = run(d, c, p, where);
  ASSERT_TRUE(got.ok()) << where << ": " << got.status();
  expect_same(*got, *ref, where + " vs reference");
  EXPECT_EQ(cases + 1, 3 * 5 * 3 + 1);
}

}  // namespace
}  // namespace fixbits
