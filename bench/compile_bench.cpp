// compile_bench: the JIT's compile latency — dsl::reduce + codegen::compile (tile
// program -> LLVM IR -> O3 -> PTX/AMDGCN) for the reduce family, per target; and
// dsl::reduce_phases alone for a large cluster kernel, which every memory hit of a
// split ReduceRunner paid before session 28 (423 us on the H100 machine's CPU).
// Run: build-*/bench/compile_bench --benchmark_format=json > compile_bench.json
#include <benchmark/benchmark.h>

#include "codegen/Compile.h"
#include "dsl/tile/ReduceProgram.h"

namespace {

using fixbits::DType;
using fixbits::dsl::ReduceDesc;
using fixbits::dsl::ReduceOp;
using fixbits::dsl::TreeOrder;

void compile_reduce(benchmark::State& state, ReduceDesc desc, fixbits::codegen::Target target) {
  fixbits::dsl::ReduceConfig cfg{static_cast<int>(state.range(0)), static_cast<int>(state.range(1))};
  for (auto _ : state) {
    auto program = fixbits::dsl::reduce(desc, cfg);
    if (!program.ok()) {
      state.SkipWithError(std::string(program.status().message()).c_str());
      return;
    }
    auto kernel = fixbits::codegen::compile(*program, target);
    if (!kernel.ok()) {
      state.SkipWithError(std::string(kernel.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(kernel->text.data());
    state.counters["text_bytes"] = static_cast<double>(kernel->text.size());
  }
}

void knobs(benchmark::internal::Benchmark* b) {
  b->ArgNames({"warps", "ept"})->Args({4, 4})->Args({8, 8})->Args({1, 32})->Unit(benchmark::kMillisecond);
}

BENCHMARK_CAPTURE(compile_reduce, sum_pinned_nvptx, ReduceDesc{.strip = 1024},
                  fixbits::codegen::Target::kNvptxSm90a)->Apply(knobs);
BENCHMARK_CAPTURE(compile_reduce, sum_free_nvptx, ReduceDesc{.order = TreeOrder::kFree},
                  fixbits::codegen::Target::kNvptxSm90a)->Apply(knobs);
BENCHMARK_CAPTURE(compile_reduce, softmax_pinned_nvptx,
                  ReduceDesc{.op = ReduceOp::kSoftmax, .strip = 1024},
                  fixbits::codegen::Target::kNvptxSm90a)->Apply(knobs);
BENCHMARK_CAPTURE(compile_reduce, rmsnorm_bf16_pinned_nvptx,
                  ReduceDesc{.op = ReduceOp::kRmsNorm, .in_dtype = DType::kBF16,
                             .out_dtype = DType::kBF16, .strip = 1024},
                  fixbits::codegen::Target::kNvptxSm90a)->Apply(knobs);
BENCHMARK_CAPTURE(compile_reduce, sum_pinned_amdgpu, ReduceDesc{.strip = 1024},
                  fixbits::codegen::Target::kAmdgpuGfx942)->Apply(knobs);

// The tile programs of session 27's softmax 256 x 131072 winner (a cluster of 8, 16
// warps x 4, 4 strips kept in shared memory): building them, no codegen.
void BM_ReducePhasesOfTheLargeCluster(benchmark::State& state) {
  const ReduceDesc desc{.op = ReduceOp::kSoftmax, .in_dtype = DType::kBF16, .out_dtype = DType::kBF16,
                        .strip = 4096};
  const fixbits::dsl::ReduceConfig cfg{.warps = 16, .elems_per_thread = 4, .blocks_per_row = 8, .keep_passes = 4,
                                       .cluster_rows = true, .keep_in_shared = true, .min_blocks_per_sm = 4,
                                       .whole_strips = true, .divide_by_reciprocal = true};
  for (auto _ : state) {
    auto programs = fixbits::dsl::reduce_phases(desc, cfg);
    if (!programs.ok()) {
      state.SkipWithError(std::string(programs.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(programs->data());
  }
}
BENCHMARK(BM_ReducePhasesOfTheLargeCluster)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
