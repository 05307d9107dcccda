// codegen/Emit's straight-line strength reduction gate (kStrengthReductionLimit,
// Compile.h), through compile(): a kernel past the limit is emitted without the pass:
// its text differs from the full pipeline's (the gate did skip the pass) and it has
// every floating-point instruction the full pipeline's has, the same number of times
// (the pass rewrites integer address arithmetic only). The verifier's signatures of the
// two may differ: without the pass a vector store keeps its run-time contiguity test
// (off[7] == off[0] + 7 on sign-extended i32 offsets), which the pass folds away, and
// the signature hashes that guard. A kernel below the limit gets the full pipeline,
// the same text either way.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "codegen/Compile.h"
#include "dsl/tile/ReduceProgram.h"
#include <map>
#include <regex>

namespace fixbits::codegen {
namespace {

// A bf16 row reduction at 16 warps x 4, strip 4096, `keep` strips kept in shared memory,
// in `parts` blocks a row (a cluster) when parts > 1.
std::pair<dsl::ReduceDesc, dsl::ReduceConfig> staged(dsl::ReduceOp op, int keep, int parts) {
  dsl::ReduceDesc d{.op = op, .in_dtype = DType::kBF16, .out_dtype = DType::kBF16, .strip = 4096};
  dsl::ReduceConfig cfg{16, 4};
  cfg.blocks_per_row = parts;
  cfg.cluster_rows = parts > 1;
  cfg.keep_passes = keep;
  cfg.keep_in_shared = true;
  return {d, cfg};
}

// The kernel's PTX at the default limit and with the pass always run.
std::pair<std::string, std::string> gated_and_full(const dsl::ReduceDesc& d,
                                                   const dsl::ReduceConfig& cfg) {
  // One program: one block a row, or a cluster sharing it (reduce_phases gives one).
  absl::StatusOr<std::vector<tile::Program>> phases = dsl::reduce_phases(d, cfg);
  EXPECT_TRUE(phases.ok()) << phases.status();
  if (!phases.ok() || phases->size() != 1) return {};
  const tile::Program* p = &phases->front();
  absl::StatusOr<CompiledKernel> gated = compile(*p, Target::kNvptxSm90a);
  absl::StatusOr<CompiledKernel> full =
      compile(*p, Target::kNvptxSm90a,
              CompileOptions{.strength_reduction_limit = std::numeric_limits<int64_t>::max()});
  EXPECT_TRUE(gated.ok()) << gated.status();
  EXPECT_TRUE(full.ok()) << full.status();
  if (!gated.ok() || !full.ok()) return {};
  return {gated->text, full->text};
}

// How many times each floating-point opcode (with its modifiers) occurs in `ptx`.
std::map<std::string, int> float_ops(const std::string& ptx) {
  std::map<std::string, int> n;
  const std::regex op(
      R"re(\b((?:add|sub|mul|div|fma|max|min|neg|abs|sqrt|rsqrt|rcp|ex2|lg2|cvt|setp|selp|testp|copysign)\.[a-zA-Z0-9_.]*(?:f32|f16|bf16|f64)[a-zA-Z0-9_.]*)\s)re");
  for (std::sregex_iterator it(ptx.begin(), ptx.end(), op), end; it != end; ++it) ++n[(*it)[1]];
  return n;
}

TEST(Emit, ALargeKernelSkipsStrengthReductionAndKeepsItsFloatOps) {
  // Softmax bf16, 16 warps x 4, 8 blocks a row in a cluster, 12 strips kept in shared
  // memory: past the limit (8 strips were, about 9,200 instructions, until softmax's
  // exp lost its conversions and 4 operations an element).
  const auto [d, cfg] = staged(dsl::ReduceOp::kSoftmax, 12, 8);
  const auto [gated, full] = gated_and_full(d, cfg);
  ASSERT_FALSE(gated.empty());
  EXPECT_NE(gated, full) << "the same text: the pass ran (or changed nothing) past the limit";
  const std::map<std::string, int> ops = float_ops(gated);
  EXPECT_GT(ops.at("div.rn.f32"), 0);
  EXPECT_GT(ops.at("cvt.rn.bf16.f32"), 0);
  EXPECT_EQ(ops, float_ops(full));
}

TEST(Emit, ASmallKernelGetsTheWholePipeline) {
  // RMSNorm bf16, 16 warps x 4, 4 strips in shared memory (the 2048 x 16384 bench
  // kernel of docs/performance.md): about 1,800 instructions.
  const auto [d, cfg] = staged(dsl::ReduceOp::kRmsNorm, 4, 1);
  const auto [gated, full] = gated_and_full(d, cfg);
  ASSERT_FALSE(gated.empty());
  EXPECT_EQ(gated, full);
}

}  // namespace
}  // namespace fixbits::codegen
