// probe_bench.cpp — the CPU cost of recovering a descriptor at large K: the probe's
// walks (about K placements each) against the reference's sparse black box, and its
// judge of every candidate, with the batch limits the cuBLAS scan uses (128 x 128).
// The black box here is the CPU reference of a known descriptor, so the figure is the
// probe's own cost: a device box adds its launches on top. Session 13's probes at
// K = 32k-131k passed a 115 s limit when this cost was O(K^2).
// Run: build/bench/probe_bench --benchmark_out=probe.json --benchmark_out_format=json
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#include "dsl/probe/Probe.h"
#include "dsl/reference/Reference.h"

namespace {

using fixbits::DType;
using namespace fixbits::dsl;

GemmDesc split_desc(int64_t span) {
  GemmDesc d;
  d.family = GemmFamily::kSplitK;
  d.k_cuts = {{span, Fold::kChain}};
  d.k_loop_step = {64, ShortTurn::kFirst};
  return d;
}

GemmDesc gemv_desc() {
  GemmDesc d;
  d.family = GemmFamily::kGemv;
  d.instruction = Instruction::kScalarFma;
  d.instruction_k = 1;
  d.k_loop_step = {};
  d.lanes = 32;
  d.lane_layout = LaneLayout::kStrided;
  d.lane_tile = 1;
  d.lane_fold = {16, 8, 4, 2, 1};
  return d;
}

// cuBLAS's gemv2T (id 13 custom 11): 16 strided lanes chained in index order, turns
// of 512 (GemmDesc.h), split in `parts` parts as class 41's answers (K / 4 at
// 2047x1x5423, 8192 = K / 16 at 2047x1x131072, where the H200's probe took 55 s)
// (reduction compute_type: partials and merge at f32, which the scan tells the probe).
GemmDesc gemv2t_desc(int64_t k, int64_t parts = 4) {
  GemmDesc d = gemv_desc();
  d.lanes = 16;
  d.lane_fold = {};
  d.use_fast_accum = false;
  d.k_loop_step = {512, ShortTurn::kLast};
  d.k_cuts = {{(k + parts - 1) / parts, Fold::kChain}};
  return d;
}

void recover(benchmark::State& state, const GemmDesc& truth,
             probe::BatchLimits limits = probe::BatchLimits{128, 128},
             std::pair<DType, DType> split = {DType::kF32, DType::kF32}, int instruction_k = 0) {
  // limits.problems > 1: the walks' batches go, that many a call, to a queue box over
  // the same reference (as the scan's --probe-queue hands them to cuBLAS).
  const probe::SparseBlackBox one = probe::reference_sparse_box(truth);
  const int64_t k = state.range(0);
  int64_t placements = 0, calls = 0;
  for (auto _ : state) {
    probe::GemmBlackBox dense = [truth](const reference::GemmProblem& p) {
      return reference::gemm(truth, p);
    };
    probe::Instrument inst(dense, truth.a_dtype, truth.b_dtype, truth.out_dtype, limits);
    inst.use_sparse_box(one);
    if (limits.problems > 1) inst.use_sparse_batch_box(probe::one_by_one(one));
    probe::ProbeOptions o;
    o.a_dtype = truth.a_dtype;
    o.b_dtype = truth.b_dtype;
    o.out_dtype = truth.out_dtype;
    o.family = truth.family;
    o.instruction_k = instruction_k;
    o.k = k;
    o.gemv_split = truth.family == GemmFamily::kGemv && !truth.k_cuts.empty();
    // As profile::probe_key does for the split's reduction scheme (reduction_dtypes).
    if (!truth.k_cuts.empty()) o.split_dtypes = {split};
    absl::StatusOr<GemmDesc> d = probe::recover_gemm_desc(inst, o);
    // A matrix search for another instruction_k than the truth's (0: the dtype's;
    // probe_key's first, for a K = 8 kernel) ends in NotFound: its time is what the
    // bench measures.
    const int searched = instruction_k != 0 ? instruction_k : matrix_instruction_k(truth.a_dtype);
    const bool finds_nothing = truth.family != GemmFamily::kGemv && searched != truth.instruction_k;
    if (finds_nothing && absl::IsNotFound(d.status())) {
      placements = inst.placements();
      calls = inst.calls();
      continue;
    }
    if (!d.ok()) {
      state.SkipWithError(std::string(d.status().message()).c_str());
      return;
    }
    placements = inst.placements();
    calls = inst.calls();
  }
  state.counters["placements"] = static_cast<double>(placements);
  state.counters["calls"] = static_cast<double>(calls);
}

void BM_RecoverSplitK(benchmark::State& state) { recover(state, split_desc(state.range(0) / 16)); }
void BM_RecoverGemv(benchmark::State& state) { recover(state, gemv_desc()); }

// 524288: the cuBLAS classes still without a descriptor that cuBLASLt answers only at
// K > 65536 (up to 500897; docs/cublas.md, session 22) need probes this deep.
BENCHMARK(BM_RecoverSplitK)->Arg(4096)->Arg(32768)->Arg(131072)->Arg(524288)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_RecoverGemv)->Arg(4096)->Arg(32768)->Arg(131072)->Arg(524288)->Unit(benchmark::kSecond)->Iterations(1);
// At an N = 1 shape, as the scan batches it there (128 rows, one column).
void BM_RecoverGemv2T(benchmark::State& state) {
  recover(state, gemv2t_desc(state.range(0), state.range(1)), probe::BatchLimits{128, 1});
}
BENCHMARK(BM_RecoverGemv2T)
    ->Args({5423, 4})
    ->Args({32768, 4})
    ->Args({131072, 4})
    ->Args({131072, 16})
    ->Unit(benchmark::kSecond)
    ->Iterations(1);

// cuBLAS's gemv classes 10, 13 and 87 (id 13, custom 81 / 89 / 96: session 28's runs
// 2-4): 8 strided lanes folded [4, 2, 1], one chain cut of about K / 140, at M = 1 and
// N = 17 as the scan batches it there (one row, 17 columns). On the H100 a probe made
// 200,000 to 350,000 calls and passed its 300 s limit.
GemmDesc small_n_gemv_desc(int64_t k) {
  GemmDesc d = gemv_desc();
  d.lanes = 8;
  d.lane_fold = {4, 2, 1};
  d.k_cuts = {{(k + 139) / 140, Fold::kChain}};
  return d;
}
// Third argument: batches a call (the scan's --probe-queue; 1: one call each).
void BM_RecoverSmallNGemv(benchmark::State& state) {
  recover(state, small_n_gemv_desc(state.range(0)),
          probe::BatchLimits{.rows = 1, .cols = state.range(1), .problems = state.range(2)});
}
BENCHMARK(BM_RecoverSmallNGemv)
    ->Args({32768, 17, 1})
    ->Args({131072, 17, 1})
    ->Args({131072, 17, 64})
    ->Unit(benchmark::kSecond)
    ->Iterations(1);

// cuBLAS's class 364 (bf16, id 24 tile 17, split in place), whose probe at
// 8449x31x500897 with 15 parts passed 380 s on the H100 in session 28 with 7,834 calls
// in 47 s: the rest was this CPU search. Its truth is not known; this is the id 24
// split classes' usual descriptor (mma_sync, K loop 32/first, span ceil(K / P) rounded
// up to 64, partials at f32 merged at bf16), probed as the scan batches it at N = 31.
GemmDesc inplace_split_desc(int64_t k, int64_t parts) {
  GemmDesc d;
  d.a_dtype = d.b_dtype = d.out_dtype = DType::kBF16;
  d.family = GemmFamily::kSplitK;
  d.instruction = Instruction::kMmaSync;
  d.instruction_k = 8;
  d.k_loop_step = {32, ShortTurn::kFirst};
  d.k_cuts = {{((k + parts - 1) / parts + 63) / 64 * 64, Fold::kChain}};
  d.merge_dtype = DType::kBF16;
  return d;
}
// Third argument: the search's instruction_k, as profile::probe_key runs them: 0 (the
// dtype's 16, which ends in NotFound on this truth), then 8.
void BM_RecoverInplaceSplitK(benchmark::State& state) {
  recover(state, inplace_split_desc(state.range(0), state.range(1)),
          probe::BatchLimits{.rows = 128, .cols = 31, .problems = 64}, {DType::kF32, DType::kBF16},
          static_cast<int>(state.range(2)));
}
BENCHMARK(BM_RecoverInplaceSplitK)
    ->Args({32768, 15, 0})
    ->Args({32768, 15, 8})
    ->Args({131072, 15, 0})
    ->Args({131072, 15, 8})
    ->Args({500897, 15, 0})
    ->Args({500897, 15, 8})
    ->Unit(benchmark::kSecond)
    ->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
