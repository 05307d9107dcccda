// verify_bench.cpp — cost of the static checker: signature of one typical corpus kernel
// (a pinned two-warp row sum, an MMA K loop, a scalar fma GEMM K loop), and partitioning N
// copies of a kernel set (N = 1000: a 1,000-configuration autotuning sweep)
// (what an autotuner's pruning predicate pays per configuration).
// Run: build-*/bench/verify_bench --benchmark_out=verify.json --benchmark_out_format=json
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "verify/Signature.h"

namespace {

namespace fs = std::filesystem;

std::string corpus(const char* name) {
  const fs::path p = fs::path(__FILE__).parent_path().parent_path() / "tests" / "verify" / "corpus" / name;
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void BM_SignatureRowSum(benchmark::State& state) {
  const std::string text = corpus("reduce-pinned-w2e4-vs-w8e1.a.ptx");
  if (text.empty()) {
    state.SkipWithError("corpus file reduce-pinned-w2e4-vs-w8e1.a.ptx not found");
    return;
  }
  for (auto _ : state) {
    auto s = fixbits::verify::signature(text);
    benchmark::DoNotOptimize(s);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_SignatureRowSum);

void BM_SignatureMmaLoop(benchmark::State& state) {
  const std::string text = corpus("mma-kloop-bk16-vs-bk32.b.ptx");
  if (text.empty()) {
    state.SkipWithError("corpus file mma-kloop-bk16-vs-bk32.b.ptx not found");
    return;
  }
  for (auto _ : state) {
    auto s = fixbits::verify::signature(text);
    benchmark::DoNotOptimize(s);
  }
}
BENCHMARK(BM_SignatureMmaLoop);

// A scalar fma GEMM K loop (llc's, with pointer inductions): the linear-register rules.
void BM_SignatureFmaGemm(benchmark::State& state) {
  const std::string text = corpus("gemm-fma-kloop-b64-vs-b128.a.ptx");
  if (text.empty()) {
    state.SkipWithError("corpus file gemm-fma-kloop-b64-vs-b128.a.ptx not found");
    return;
  }
  for (auto _ : state) {
    auto s = fixbits::verify::signature(text);
    benchmark::DoNotOptimize(s);
  }
}
BENCHMARK(BM_SignatureFmaGemm);

void BM_SignatureGcnRowSum(benchmark::State& state) {
  const std::string text = corpus("gcn-reduce-pinned-vs-default.a.s");
  if (text.empty()) {
    state.SkipWithError("corpus file gcn-reduce-pinned-vs-default.a.s not found");
    return;
  }
  for (auto _ : state) {
    auto s = fixbits::verify::signature(text);
    benchmark::DoNotOptimize(s);
  }
}
BENCHMARK(BM_SignatureGcnRowSum);

// Partition N kernels (copies cycling through the eight PTX reduction variants) into classes.
void BM_Partition(benchmark::State& state) {
  std::vector<std::string> set;
  for (const char* f : {"reduce-pinned-w1e4-vs-w2e2.a.ptx", "reduce-pinned-w1e4-vs-w2e2.b.ptx",
                        "reduce-pinned-w4e1-vs-w1e4.a.ptx", "reduce-pinned-vs-free-w2e2.b.ptx",
                        "reduce-pinned-vs-free-w1e1.b.ptx", "reduce-pinned-w1e4-vs-w1e2.b.ptx",
                        "reduce-free-w2e2-vs-w1e4.b.ptx", "reduce-pinned-w2e4-vs-w8e1.b.ptx"}) {
    set.push_back(corpus(f));
    if (set.back().empty()) {
      state.SkipWithError("a corpus file is missing");
      return;
    }
  }
  const int64_t n = state.range(0);
  size_t classes = 0;
  for (auto _ : state) {
    std::map<std::string, int> cls;
    for (int64_t i = 0; i < n; ++i) {
      auto s = fixbits::verify::signature(set[static_cast<size_t>(i) % set.size()]);
      if (s.ok()) ++cls[s->hex];
    }
    classes = cls.size();
  }
  state.counters["classes"] = static_cast<double>(classes);
  state.counters["kernels/s"] = benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Partition)->Arg(8)->Arg(64)->Arg(512)->Arg(1000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
