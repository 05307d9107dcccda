// GPU test (label gpu) of ReduceConfig.whole_strips: the cluster kernel for rows whose
// length is a multiple of the strip (no per-element masks; a kept strip guarded by its
// one flag j < n) gives exactly the CPU reference's bits (memcmp) on the device, for
// RMSNorm and softmax, bf16 on the bench's 256 x 131072 and f32 / f16 / bf16 on rows of
// 1 strip (blocks holding only strips past the row's end) and 37 strips (a rest loop and
// a fold of two whole groups of 16 and a partial one), warps 16 x 4 and 8 x 8, P = 2, 4,
// 8, keeping 0 strips, 1 and the block's share in shared memory and 1 in registers. Row 2
// of each problem has NaN, +-inf, subnormals, -0.0 and +-L. Each case prints a line with
// its time to stderr. Also one block a row on rows of whole passes (OneBlock...). Without a
// device the tests print [SKIP] <reason>.
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

class ReduceWholeStripsGpuTest : public testing::SeededGpuTest {
 protected:
  // The cases of one op: returns how many ran and matched.
  int cases(ReduceOp op) {
    int ran = 0;
    struct Shape {
      DType dtype;
      int64_t rows, cols;
    };
    for (Shape s : {Shape{DType::kBF16, 256, 131072}, Shape{DType::kF32, 3, 4096}, Shape{DType::kF16, 3, 37 * 4096},
                    Shape{DType::kBF16, 3, 37 * 4096}}) {
      const ReduceDesc d{.op = op, .in_dtype = s.dtype, .out_dtype = s.dtype, .strip = 4096};
      const auto p = testing::fused_gpu_problem(d, s.rows, s.cols, rng_);
      auto ref = dsl::reference::reduce(d, p);
      EXPECT_TRUE(ref.ok()) << ref.status();
      if (!ref.ok()) return ran;
      const int64_t strips = dsl::strip_count(d, p.cols);
      for (ReduceConfig base : {ReduceConfig{.warps = 16, .elems_per_thread = 4},
                                ReduceConfig{.warps = 8, .elems_per_thread = 8}}) {
        for (int parts : {2, 4, 8}) {
          ReduceConfig c = base;
          c.blocks_per_row = parts;
          c.cluster_rows = true;
          c.whole_strips = true;
          c.keep_in_shared = true;
          const int64_t share = (strips - 1) / parts + 1;
          const int64_t most = dsl::max_keep_passes(d, c);
          struct Keep {
            int64_t passes;
            bool shared;
          };
          std::vector<Keep> keeps = {{0, false}, {1, true}, {std::min(share, std::min<int64_t>(most, 8)), true}, {1, false}};
          for (Keep k : keeps) {
            c.keep_passes = static_cast<int>(k.passes);
            c.keep_in_shared = k.shared && k.passes > 0;
            const std::string where = absl::StrFormat(
                "%s warps=%d elems=%d P=%d keep=%d%s whole_strips rows=%d cols=%d seed=%d", dsl::to_string(d), c.warps,
                c.elems_per_thread, parts, k.passes, c.keep_in_shared ? " shared" : "", p.rows, p.cols, seed_);
            std::fprintf(stderr, "[case] %s ...", where.c_str());
            std::fflush(stderr);
            const auto t0 = std::chrono::steady_clock::now();
            auto got = testing::run_reduce(device_, d, c, p);
            std::fprintf(stderr, " %.0f ms\n",
                         std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
            EXPECT_TRUE(got.ok()) << where << ": " << got.status();
            if (!got.ok()) return ran;
            const std::string diff = testing::first_difference(*got, *ref);  // memcmp
            if (!diff.empty()) {
              ADD_FAILURE() << where << ": " << diff;
              return ran;
            }
            ++ran;
          }
        }
      }
    }
    return ran;
  }
};

// One block a row on rows of whole passes: RMSNorm, softmax and sum, bf16 2048 x 16384
// (the bench's row) and f32 / f16 3 x 8192; 16 x 4 keeping none and 4 passes in shared
// memory (on 3 x 8192, whose passes are 4096, the last 2 past the row's end), 8 x 8
// keeping 1 in registers; each memcmp-equal to the reference.
TEST_F(ReduceWholeStripsGpuTest, OneBlockMatchesTheReference) {
  int ran = 0;
  struct Shape {
    DType dtype;
    int64_t rows, cols;
  };
  for (ReduceOp op : {ReduceOp::kRmsNorm, ReduceOp::kSoftmax, ReduceOp::kSum}) {
    for (Shape s : {Shape{DType::kBF16, 2048, 16384}, Shape{DType::kF32, 3, 8192}, Shape{DType::kF16, 3, 8192}}) {
      const ReduceDesc d{.op = op, .in_dtype = s.dtype, .out_dtype = s.dtype, .strip = 4096};
      const auto p = testing::fused_gpu_problem(d, s.rows, s.cols, rng_);
      auto ref = dsl::reference::reduce(d, p);
      ASSERT_TRUE(ref.ok()) << ref.status();
      const bool two_pass = op != ReduceOp::kSum;
      for (ReduceConfig c : {ReduceConfig{.warps = 16, .elems_per_thread = 4},
                             ReduceConfig{.warps = 16, .elems_per_thread = 4, .keep_passes = 4, .keep_in_shared = true},
                             ReduceConfig{.warps = 8, .elems_per_thread = 8, .keep_passes = 1}}) {
        if (!two_pass && c.keep_passes > 0) continue;
        c.whole_strips = true;
        const std::string where = absl::StrFormat("%s warps=%d elems=%d keep=%d%s whole_strips rows=%d cols=%d seed=%d",
                                                  dsl::to_string(d), c.warps, c.elems_per_thread, c.keep_passes,
                                                  c.keep_in_shared ? " shared" : "", p.rows, p.cols, seed_);
        std::fprintf(stderr, "[case] %s\n", where.c_str());
        auto got = testing::run_reduce(device_, d, c, p);
        ASSERT_TRUE(got.ok()) << where << ": " << got.status();
        EXPECT_EQ(testing::first_difference(*got, *ref), "") << where;  // memcmp
        ++ran;
      }
    }
  }
  EXPECT_EQ(ran, (2 * 3 + 1) * 3);
}

TEST_F(ReduceWholeStripsGpuTest, RmsNormMatchesTheReference) {
  EXPECT_EQ(cases(ReduceOp::kRmsNorm), 4 * 2 * 3 * 4);
}

TEST_F(ReduceWholeStripsGpuTest, SoftmaxMatchesTheReference) {
  EXPECT_EQ(cases(ReduceOp::kSoftmax), 4 * 2 * 3 * 4);
}

}  // namespace
}  // namespace fixbits
