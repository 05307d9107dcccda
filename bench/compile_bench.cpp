// compile_bench: the JIT's compile latency — dsl::reduce + codegen::compile (tile
// program -> LLVM IR -> O3 -> PTX/AMDGCN) for the reduce family, per target.
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

}  // namespace

BENCHMARK_MAIN();
