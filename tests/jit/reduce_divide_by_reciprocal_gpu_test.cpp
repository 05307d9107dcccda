// GPU test (label gpu) of ReduceConfig.divide_by_reciprocal: softmax's e_i / s as one
// reciprocal and two fmas a register (the division in a branch outside their range) gives
// exactly the CPU reference's bits (memcmp) on the device. f32 / f16 / bf16, rows of whole
// passes (the bench's 16 x 4 and 8 x 8 winners, keeping 1 pass in registers) and masked
// rows (4 x 4, 2 x 1), one block a row, and the cluster kernel (P 2, keep 1 in shared).
// Besides the plain and adversarial rows of fused_gpu_problem (row 2: NaN, +-inf, -0.0,
// subnormals), row 0 spreads over [-100, 0], so many e_i lie in [2^-144, 2^-100) and take
// the branch, and row 1 is -inf on every third element (a masked score: e_i = +0, which
// stays on the fma path). Without a device the tests print [SKIP] <reason>.
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "dsl/FloatFormat.h"
#include "dsl/reference/Reference.h"
#include "gtest/gtest.h"
#include "tests/jit/ReduceGpuRun.h"
#include "tests/jit/SeededGpuTest.h"

namespace fixbits {
namespace {

using dsl::ReduceConfig;
using dsl::ReduceDesc;

class ReduceDivideByReciprocalGpuTest : public testing::SeededGpuTest {
 protected:
  // fused_gpu_problem with rows 0 and 1 replaced as the header says.
  dsl::reference::ReduceProblem problem(const ReduceDesc& d, int64_t rows, int64_t cols) {
    dsl::reference::ReduceProblem p = testing::fused_gpu_problem(d, rows, cols, rng_);
    std::uniform_real_distribution<float> spread(-100.0f, 0.0f);
    for (int64_t j = 0; j < cols; ++j) {
      p.x[static_cast<size_t>(j)] = to_bits(d.in_dtype, spread(rng_));
      const float masked = j % 3 == 0 ? -std::numeric_limits<float>::infinity() : spread(rng_) / 10.0f;
      if (rows > 1) p.x[static_cast<size_t>(cols + j)] = to_bits(d.in_dtype, masked);
    }
    return p;
  }

  // Runs `c` with and without the knob on one problem; both must equal the reference.
  int check(const ReduceDesc& d, ReduceConfig c, const dsl::reference::ReduceProblem& p,
            const std::vector<uint32_t>& ref) {
    int ran = 0;
    for (bool knob : {true, false}) {
      c.divide_by_reciprocal = knob;
      const std::string where = absl::StrFormat(
          "%s warps=%d elems=%d P=%d keep=%d%s%s%s rows=%d cols=%d seed=%d", dsl::to_string(d), c.warps,
          c.elems_per_thread, c.blocks_per_row, c.keep_passes, c.keep_in_shared ? " shared" : "",
          c.whole_strips ? " whole_strips" : "", knob ? " divide_by_reciprocal" : "", p.rows, p.cols, seed_);
      std::fprintf(stderr, "[case] %s\n", where.c_str());
      auto got = testing::run_reduce(device_, d, c, p);
      EXPECT_TRUE(got.ok()) << where << ": " << got.status();
      if (!got.ok()) continue;
      EXPECT_EQ(testing::first_difference(*got, ref), "") << where;  // memcmp
      ++ran;
    }
    return ran;
  }
};

TEST_F(ReduceDivideByReciprocalGpuTest, SoftmaxMatchesTheReferenceWithAndWithoutTheKnob) {
  int ran = 0;
  struct Shape {
    DType dtype;
    int64_t rows, cols;
  };
  for (Shape s : {Shape{DType::kBF16, 512, 4096}, Shape{DType::kF32, 4, 8192}, Shape{DType::kF16, 4, 4096},
                  Shape{DType::kBF16, 4, 3000}}) {
    const ReduceDesc d{.op = dsl::ReduceOp::kSoftmax, .in_dtype = s.dtype, .out_dtype = s.dtype, .strip = 4096};
    const auto p = problem(d, s.rows, s.cols);
    auto ref = dsl::reference::reduce(d, p);
    ASSERT_TRUE(ref.ok()) << ref.status();
    const bool whole = s.cols % 4096 == 0;
    std::vector<ReduceConfig> configs = {ReduceConfig{.warps = 4, .elems_per_thread = 4},
                                         ReduceConfig{.warps = 2, .elems_per_thread = 1}};
    if (whole) {
      configs.push_back({.warps = 16, .elems_per_thread = 4, .keep_passes = 1, .whole_strips = true});
      configs.push_back({.warps = 8, .elems_per_thread = 8, .keep_passes = 1, .whole_strips = true});
      configs.push_back({.warps = 8, .elems_per_thread = 8, .blocks_per_row = 2, .keep_passes = 1,
                         .cluster_rows = true, .keep_in_shared = true, .whole_strips = true});
    }
    for (const ReduceConfig& c : configs) ran += check(d, c, p, *ref);
  }
  EXPECT_EQ(ran, 2 * (3 * 5 + 2));
}

}  // namespace
}  // namespace fixbits
