// reduce_bench: pinned vs free reductions (sum, RMSNorm, softmax) on the GPU, as
// achieved GB/s (bytes read + written over kernel time from CUDA events) against
// the device's measured copy bandwidth; and the latency of getting a dsl::reduce
// kernel: cold compile, loaded-kernel (memory) hit, disk-cache hit.
//
// Each order is tuned first (every candidate of jit::reduce_candidates, 20 launches each,
// the fastest kept) so the comparison is best against best, as an autotuner would run them; a
// case is tuned once (its first call) and its inputs are uploaded once per op, dtype
// and shape, shared by every candidate of both orders (see tuned()). The candidates
// (jit/ReduceCandidates.h says which) are the bases with the runner's suggested split,
// kept passes in registers or shared memory, alternating row order, row groups, cluster
// kernels, register-capped kept passes, several rows a block (when asked), whole strips
// and (softmax) divide_by_reciprocal and stage_exp; the environment changes them
// (FIXBITS_BENCH_CONFIGS, FIXBITS_BENCH_CLUSTER_PARTS, FIXBITS_BENCH_REG_CAP (0: no capped
// candidates), FIXBITS_BENCH_WHOLE_STRIPS=0, FIXBITS_BENCH_RECIP_DIV=0,
// FIXBITS_BENCH_ROWS_PER_BLOCK=2,4 (several rows a block: none unless set);
// FIXBITS_BENCH_TUNE_BUDGET bounds each case's search). The label says which won:
// bpr=P blocks a row (1: one block per row); keep=N passes kept (with cl=1, N strips a
// block); sh=1 kept in shared memory; mb=N blocks an SM asked of ptxas; cl=1 the cluster
// kernel; rpl=G rows a launch; alt=1 alternating row order; ws=1 whole strips; rd=1
// divide_by_reciprocal; se=1 stage_exp; rb=R rows a block in turn. Such kernels have the
// same bits, but not every one is in the checker's one pinned class.
// vs_free (pinned cases whose free-order case is also benchmarked): the free order's
// tuned time over the pinned order's, both the 20-sample medians of their tuning
// (the table's "pinned speed / free"; > 1: pinned faster). The free order is tuned
// once per case (memoized), so its own benchmark reuses that search; a filter that
// leaves the free benchmark out still pays its tuning, unless FIXBITS_BENCH_VS_FREE=0.
// Counters tried / failed (cl_tried / cl_failed / cl_vs_best for cluster candidates)
// say how the tuning went, tune_build_s / tune_time_s how long its two phases took
// (TunedReduce); FIXBITS_BENCH_TRACE=1 prints every candidate's median or error on
// stderr ([tune] lines, each ending in the driver's occupancy answer: occupancy_text),
// then one [tuned] line a case with the phases.
// Timings are manual (CUDA events around FIXBITS_BENCH_BATCH = 10 back-to-back
// launches, divided), reported as the median of --benchmark_repetitions; the
// counter vs_copy is the copy kernel's time for the same bytes over the case's.
// Without a GPU every benchmark reports the skip reason.
//
// Run: reduce_bench --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
// Time (H200, run 11, 3 repetitions, min_time 0.05, 8 settings then): about 210 s
// for 61 timed cases (2 copy, 56 reductions, 3 latency); the keep_passes variants
// (one to five per setting of a long RMSNorm/softmax row: 29 in all at 2048 x 16384)
// add compiles and tuning, not yet measured. A case is
// tuned once: up to
// 13 settings, plus keep_passes and split variants (compile on first use of a
// descriptor, ~10-200 ms, then 3 + 20 x FIXBITS_BENCH_BATCH launches each); then each
// call (the iteration-count probe and every repetition) times batches until
// --benchmark_min_time of kernel time. More settings make tuning longer: narrow a run
// with FIXBITS_BENCH_FILTER (scripts/device_run.sh) when a device call is short, and
// tune fewer settings with FIXBITS_BENCH_CONFIGS (config_selected below).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "dsl/tile/ReduceProgram.h"
#include "jit/Jit.h"
#include "jit/ReduceCandidates.h"
#include "jit/ReduceRunner.h"
#include "jit/TuneReduce.h"
#include "runtime/KernelCache.h"
#include "runtime/LaunchTiming.h"
#include "runtime/Runtime.h"

using namespace fixbits;

namespace {

// A grid-stride 16-byte copy: the bandwidth ceiling a reduction is compared with.
constexpr char kCopyPtx[] = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry fixbits_copy(.param .u64 src, .param .u64 dst, .param .u64 n16)
{
  .reg .b64 %rd<10>;
  .reg .b32 %r<5>;
  .reg .b32 %v<4>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [src];
  ld.param.u64 %rd2, [dst];
  ld.param.u64 %rd3, [n16];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mov.u32 %r4, %nctaid.x;
  mul.wide.u32 %rd4, %r1, %r2;
  cvt.u64.u32 %rd5, %r3;
  add.u64 %rd4, %rd4, %rd5;
  mul.wide.u32 %rd6, %r4, %r2;
LOOP:
  setp.ge.u64 %p1, %rd4, %rd3;
  @%p1 bra DONE;
  shl.b64 %rd7, %rd4, 4;
  add.u64 %rd8, %rd1, %rd7;
  ld.global.v4.u32 {%v0, %v1, %v2, %v3}, [%rd8];
  add.u64 %rd9, %rd2, %rd7;
  st.global.v4.u32 [%rd9], {%v0, %v1, %v2, %v3};
  add.u64 %rd4, %rd4, %rd6;
  bra LOOP;
DONE:
  ret;
}
)";

std::shared_ptr<runtime::Device> device_or_null(std::string* why) {
  static auto dev = runtime::cuda(0);
  if (!dev.ok()) {
    *why = std::string(dev.status().message());
    return nullptr;
  }
  return *dev;
}

// Launches timed together between one pair of CUDA events (runtime/LaunchTiming.h says
// why), FIXBITS_BENCH_BATCH, 10 by default.
int batch() {
  static const int n = [] {
    const char* v = std::getenv("FIXBITS_BENCH_BATCH");
    const int b = v ? std::atoi(v) : 10;
    return b >= 1 ? b : 1;
  }();
  return n;
}

// The copy kernel over `bytes` (read, and as many written), on buffers kept for the
// process (grown when a larger copy is asked for).
struct CopyKernel {
  std::optional<runtime::Buffer> src, dst;
  std::optional<runtime::Kernel> kernel;
  std::shared_ptr<runtime::Module> module;
};
absl::StatusOr<std::function<absl::Status()>> copy_launch(runtime::Device& dev, size_t bytes) {
  static CopyKernel ck;
  if (!ck.module) {
    auto mod = dev.load_module(kCopyPtx);
    if (!mod.ok()) return mod.status();
    auto k = (*mod)->kernel("fixbits_copy");
    if (!k.ok()) return k.status();
    ck.module = *std::move(mod);
    ck.kernel.emplace(*std::move(k));
  }
  bytes = (bytes + 15) / 16 * 16;
  if (!ck.src || ck.src->size() < bytes) {
    ck.src.reset();
    ck.dst.reset();
    auto src = dev.alloc(bytes);
    if (!src.ok()) return src.status();
    auto dst = dev.alloc(bytes);
    if (!dst.ok()) return dst.status();
    if (auto s = src->fill_bytes(1); !s.ok()) return s;
    ck.src.emplace(*std::move(src));
    ck.dst.emplace(*std::move(dst));
  }
  const uint64_t n16 = bytes / 16;
  const uint32_t blocks = static_cast<uint32_t>(dev.info().multiprocessor_count * 8);
  return std::function<absl::Status()>([n16, blocks] {
    runtime::LaunchConfig cfg{.grid = {blocks}, .block = {512}};
    return ck.kernel->launch(cfg, {runtime::KernelArg::pointer(*ck.src),
                                   runtime::KernelArg::pointer(*ck.dst),
                                   runtime::KernelArg::scalar<uint64_t>(n16)});
  });
}

void BM_CopyBandwidth(benchmark::State& state) {
  std::string why;
  auto dev = device_or_null(&why);
  if (!dev) return state.SkipWithError(("[SKIP] no CUDA device: " + why).c_str());
  const size_t bytes = static_cast<size_t>(state.range(0)) << 20;
  auto launch = copy_launch(*dev, bytes);
  if (!launch.ok()) return state.SkipWithError(std::string(launch.status().message()).c_str());
  for (int i = 0; i < 3; ++i) (*launch)().IgnoreError();
  for (auto _ : state) {
    auto ms = runtime::batch_launch_ms(*dev, *launch, batch());
    if (!ms.ok()) return state.SkipWithError(std::string(ms.status().message()).c_str());
    state.SetIterationTime(*ms / 1e3);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * 2 * bytes));
}
BENCHMARK(BM_CopyBandwidth)->Arg(256)->Arg(1024)->UseManualTime()->Unit(benchmark::kMicrosecond);

// Normal(0, 1) inputs (weights 1 + 0.01 normal): a table of 2^16 draws indexed by a
// multiplicative hash of the element index, so 33M elements cost one pass, not 33M
// draws (bandwidth does not depend on the values, only on them being finite).
dsl::reference::ReduceProblem make_problem(DType t, int64_t rows, int64_t cols) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<uint32_t> xs(1 << 16), ws(1 << 16);
  for (auto& b : xs) b = to_bits(t, normal(rng));
  for (auto& b : ws) b = to_bits(t, 1.0f + 0.01f * normal(rng));
  dsl::reference::ReduceProblem p{.rows = rows, .cols = cols, .x = {}, .w = {}};
  p.x.resize(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < p.x.size(); ++i) p.x[i] = xs[(i * 2654435761u) >> 16 & 0xffff];
  p.w.resize(static_cast<size_t>(cols));
  for (size_t i = 0; i < p.w.size(); ++i) p.w[i] = ws[(i * 2654435761u) >> 16 & 0xffff];
  return p;
}

// The knobs one case's tuning chose and their median time (ms). Memoized per case,
// so a pinned case's vs_free and the free case's own benchmark share one search.
struct Search {
  dsl::ReduceConfig cfg;
  float ms = 0;
  std::string error;  // non-empty: no candidate compiled and ran
  int tried = 0, failed = 0;        // candidates, and those that did not build or run
  int cluster_tried = 0, cluster_failed = 0;
  float cluster_ms = 0;             // the fastest cluster_rows candidate, 0: none ran
  double build_s = 0, timing_s = 0;  // the tuning's two phases (TunedReduce), seconds
};
using CaseKey = std::tuple<int, int, int, DType, int64_t, int64_t>;
CaseKey case_key(const dsl::ReduceDesc& desc, int64_t rows, int64_t cols) {
  return std::make_tuple(static_cast<int>(desc.op), static_cast<int>(desc.order),
                         static_cast<int>(desc.axis), desc.in_dtype, rows, cols);
}

// What one benchmark case (op, order, dtype, shape) settles on before it is timed.
// Google Benchmark calls the function once per iteration-count probe and once per
// repetition; tuning (compiles, 20 launches per candidate) and the upload are done
// on the first call only and kept here for the calls that follow.
struct TunedCase {
  CaseKey key;
  std::optional<jit::ReduceRunner> best;
  dsl::ReduceConfig cfg;
  float copy_ms = 0;  // the copy kernel moving the same bytes (half read, half written)
  std::string error;  // non-empty: no candidate compiled and ran
};

// The inputs of one (op, dtype, shape), uploaded once; every candidate of every order
// shares them (ReduceRunner::share_inputs), so x is copied to the device once.
const jit::ReduceRunner* uploaded_inputs(const std::shared_ptr<runtime::Device>& dev,
                                         const dsl::ReduceDesc& desc, int64_t rows, int64_t cols) {
  static std::map<std::tuple<int, int, DType, int64_t, int64_t>, jit::ReduceRunner> inputs;
  auto key = std::make_tuple(static_cast<int>(desc.op), static_cast<int>(desc.axis), desc.in_dtype, rows, cols);
  if (auto it = inputs.find(key); it != inputs.end()) return &it->second;
  // A small pinned kernel of the same op and dtypes owns the buffers.
  dsl::ReduceDesc owner = desc;
  owner.order = dsl::TreeOrder::kPinned;
  owner.strip = 1024;
  auto r = jit::ReduceRunner::create(dev, owner, {.warps = 8, .elems_per_thread = 4});
  if (!r.ok()) return nullptr;
  if (!r->upload(make_problem(desc.in_dtype, rows, cols)).ok()) return nullptr;
  return &inputs.emplace(key, std::move(*r)).first->second;
}

// FIXBITS_BENCH_CLUSTER_PARTS=2,3,6,...: the cluster sizes P the cluster candidates take
// (each in [2, 8], ascending); unset: 2, 4, 6, 8. P need not be a power of two: rows * P
// blocks then fill the GPU's block slots in other whole numbers of waves (P 6 at 256 rows
// of 131072 bf16: 6 kept strips, 3 blocks an SM, 3.88 waves on 132 SMs against P 4's
// 2.59; its kept 48 KiB failed to launch until the runtime counted the static shared
// bytes, so session 22's sweep of P = 2..8 on an H100 has no number for it).
std::vector<int> cluster_parts() {
  static const std::vector<int> parts = [] {
    std::vector<int> v;
    const char* env = std::getenv("FIXBITS_BENCH_CLUSTER_PARTS");
    if (env != nullptr) {
      for (absl::string_view item : absl::StrSplit(env, ',', absl::SkipEmpty())) {
        int p = 0;
        if (!absl::SimpleAtoi(item, &p) || p < 2 || p > 8 || (!v.empty() && p <= v.back())) {
          std::fprintf(stderr, "FIXBITS_BENCH_CLUSTER_PARTS: '%s' is not an ascending P in [2, 8]; ignored\n",
                       std::string(item).c_str());
          continue;
        }
        v.push_back(p);
      }
    }
    if (v.empty()) v = {2, 4, 6, 8};
    return v;
  }();
  return parts;
}

// Whether a switch that is on by default stays on: everything but "0" in environment
// variable `name` (unset included) leaves it on.
bool env_not_zero(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr || std::string(v) != "0";
}

// FIXBITS_BENCH_WHOLE_STRIPS=0: no whole_strips candidates (an A/B of the masks).
bool whole_strips_on() { return env_not_zero("FIXBITS_BENCH_WHOLE_STRIPS"); }

// FIXBITS_BENCH_RECIP_DIV=0: no divide_by_reciprocal candidates (softmax's e_i / s as a
// reciprocal and two fmas; the same bits).
bool recip_div_on() { return env_not_zero("FIXBITS_BENCH_RECIP_DIV"); }

// FIXBITS_BENCH_ROWS_PER_BLOCK=R,R,...: the rows_per_block candidates (each R in [2, 64];
// jit::CandidateOptions::rows_per_block, none by default: they won no row in session 40);
// unset or empty: none. A malformed entry is reported once on stderr and ignored.
std::vector<int> rows_per_block_values() {
  static const std::vector<int> values = [] {
    std::vector<int> v;
    const char* env = std::getenv("FIXBITS_BENCH_ROWS_PER_BLOCK");
    if (env == nullptr) return v;
    for (absl::string_view item : absl::StrSplit(env, ',', absl::SkipEmpty())) {
      int r = 0;
      if (!absl::SimpleAtoi(item, &r) || r < 2 || r > 64) {
        std::fprintf(stderr, "FIXBITS_BENCH_ROWS_PER_BLOCK: '%s' is not an R in [2, 64]; ignored\n",
                     std::string(item).c_str());
        continue;
      }
      v.push_back(r);
    }
    return v;
  }();
  return values;
}

// The knobs of a candidate past its warps and elements, as the label and the trace
// print them (the header comment says what each means).
std::string knobs_text(const dsl::ReduceConfig& c) {
  return absl::StrFormat("bpr=%d keep=%d sh=%d mb=%d cl=%d rpl=%d alt=%d ws=%d rd=%d se=%d rb=%d", c.blocks_per_row,
                         c.keep_passes, c.keep_in_shared ? 1 : 0, c.min_blocks_per_sm, c.cluster_rows ? 1 : 0,
                         c.rows_per_launch, c.alternate_row_order ? 1 : 0, c.whole_strips ? 1 : 0,
                         c.divide_by_reciprocal ? 1 : 0, c.stage_exp ? 1 : 0, c.rows_per_block);
}

// FIXBITS_BENCH_CONFIGS=WxE,WxE,...: only the bases (jit::default_reduce_configs) with
// those warps x elements per thread (a short device call tunes fewer candidates); unset:
// all of them. A malformed or unknown entry is reported once on stderr and ignored.
bool config_selected(const dsl::ReduceConfig& c) {
  static const std::vector<std::pair<int, int>> only = [] {
    std::vector<std::pair<int, int>> v;
    const char* env = std::getenv("FIXBITS_BENCH_CONFIGS");
    if (env == nullptr) return v;
    for (absl::string_view item : absl::StrSplit(env, ',', absl::SkipEmpty())) {
      std::vector<absl::string_view> we = absl::StrSplit(item, 'x');
      int w = 0, e = 0;
      if (we.size() != 2 || !absl::SimpleAtoi(we[0], &w) || !absl::SimpleAtoi(we[1], &e)) {
        std::fprintf(stderr, "FIXBITS_BENCH_CONFIGS: '%s' is not WARPSxELEMS; ignored\n",
                     std::string(item).c_str());
        continue;
      }
      v.emplace_back(w, e);
    }
    return v;
  }();
  if (only.empty()) return true;
  return std::find(only.begin(), only.end(), std::make_pair(c.warps, c.elems_per_thread)) != only.end();
}

// The integer in [lo, hi] that environment variable `name` holds; `unset` when it is
// unset or empty, `bad` (said once on stderr) when it holds anything else. Callers keep
// the result in a static, so each variable is read and reported once.
int env_int(const char* name, int unset, int lo, int hi, int bad) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return unset;
  int n = 0;
  if (absl::SimpleAtoi(v, &n) && n >= lo && n <= hi) return n;
  std::fprintf(stderr, "%s=%s: not an integer in [%d, %d]; using %d\n", name, v, lo, hi, bad);
  return bad;
}

// FIXBITS_BENCH_REG_CAP: registers a thread for the extra min_blocks_per_sm candidates
// of register-kept rows (candidates_of); 0: none; unset, empty or not a number in
// [16, 255]: jit::CandidateOptions' default (48).
int reg_cap() {
  static const int cap = [] {
    const char* v = std::getenv("FIXBITS_BENCH_REG_CAP");
    if (v != nullptr && std::string_view(v) == "0") return 0;
    return env_int("FIXBITS_BENCH_REG_CAP", jit::CandidateOptions{}.reg_cap, 16, 255, jit::CandidateOptions{}.reg_cap);
  }();
  return cap;
}

// The candidates of one case: jit::reduce_candidates (its header says which) for this
// device, with the bases FIXBITS_BENCH_CONFIGS selects and the cluster sizes, register
// cap, whole_strips and divide_by_reciprocal candidates the environment asks for.
std::vector<dsl::ReduceConfig> candidates_of(const std::shared_ptr<runtime::Device>& dev,
                                             const dsl::ReduceDesc& desc, int64_t rows, int64_t cols) {
  jit::CandidateOptions o;
  o.multiprocessors = dev->info().multiprocessor_count;
  o.configs.clear();
  for (const dsl::ReduceConfig& c : jit::default_reduce_configs()) {
    if (config_selected(c)) o.configs.push_back(c);
  }
  o.cluster_parts = cluster_parts();
  o.reg_cap = reg_cap();
  o.whole_strips = whole_strips_on();
  o.divide_by_reciprocal = recip_div_on();
  o.rows_per_block = rows_per_block_values();
  return jit::reduce_candidates(desc, rows, cols, o);
}

// FIXBITS_BENCH_BUILD_THREADS: threads that build a case's candidates before its timing
// loop (TuneReduceOptions.build_threads); unset: the machine's cores, at most 16; 1 or a
// bad value: none.
int build_threads() {
  static const int n = env_int("FIXBITS_BENCH_BUILD_THREADS",
                               std::min(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())), 16),
                               1, 256, 1);
  return n;
}

// FIXBITS_BENCH_TUNE_BUDGET: seconds one case's tuning may start candidates for
// (TuneReduceOptions.budget_seconds: those left are not run, and the case keeps the
// fastest timed), so a table step under a device call's limit loses candidates, not
// whole rows; unset or 0: no limit.
int tune_budget() {
  static const int s = env_int("FIXBITS_BENCH_TUNE_BUDGET", 0, 0, 86400, 0);
  return s;
}

// The trace's occupancy suffix: per phase, the driver's resident blocks an SM and
// registers a thread, local (spilled) bytes a thread where there are any, and for a
// cluster kernel its blocks a cluster and the clusters the device holds at once
// (" occ b4 r40 l16 c6x22"; phases joined by " + "); empty when the driver did not say.
std::string occupancy_text(const std::vector<runtime::Occupancy>& phases) {
  std::string out;
  for (const runtime::Occupancy& o : phases) {
    absl::StrAppend(&out, out.empty() ? " occ " : " + ",
                    absl::StrFormat("b%d r%d", o.blocks_per_multiprocessor, o.registers_per_thread));
    if (o.local_bytes_per_thread > 0) absl::StrAppend(&out, absl::StrFormat(" l%d", o.local_bytes_per_thread));
    if (o.cluster_blocks > 0) absl::StrAppend(&out, absl::StrFormat(" c%dx%d", o.cluster_blocks, o.max_active_clusters));
  }
  return out;
}

// Tunes `desc` over candidates_of() once per case with jit::tune_reduce (20 timed batches
// each, on the shared inputs; the kernels built first on build_threads() threads, which
// made the table step bound by the slowest builds, not their sum: session 23 spent 280 s
// building the four RMSNorm rows on one core) and returns the fastest; later calls for the
// same case return it.
const Search& search(const std::shared_ptr<runtime::Device>& dev, const dsl::ReduceDesc& desc,
                     int64_t rows, int64_t cols) {
  static std::map<CaseKey, Search> done;
  const CaseKey key = case_key(desc, rows, cols);
  if (auto it = done.find(key); it != done.end()) return it->second;
  Search& s = done[key];
  const jit::ReduceRunner* in = uploaded_inputs(dev, desc, rows, cols);
  if (in == nullptr) {
    s.error = "input upload failed";
    return s;
  }
  // FIXBITS_BENCH_TRACE=1: one stderr line per candidate (its knobs, then its median or
  // why it did not run), so a device run shows what lost and what failed.
  const char* trace_env = std::getenv("FIXBITS_BENCH_TRACE");
  const bool trace = trace_env != nullptr && std::string(trace_env) == "1";
  jit::TuneReduceOptions o;
  o.candidates = candidates_of(dev, desc, rows, cols);
  o.timed = 20;
  o.batch = batch();
  o.build_threads = build_threads();
  o.budget_seconds = tune_budget();
  o.on_candidate = [&](const jit::TriedReduce& tried) {
    const dsl::ReduceConfig& c = tried.config;
    const absl::StatusOr<float>& us = tried.us;
    ++s.tried;
    s.cluster_tried += c.cluster_rows;
    if (trace) {
      const std::string knobs = absl::StrFormat(
          "%s %lldx%lld warps=%d elems=%d %s", dsl::to_string(desc), static_cast<long long>(rows),
          static_cast<long long>(cols), c.warps, c.elems_per_thread, knobs_text(c));
      std::fprintf(stderr, "[tune] %s: %s%s\n", knobs.c_str(),
                   us.ok() ? absl::StrFormat("%.2f us", *us).c_str()
                           : std::string(us.status().message()).substr(0, 200).c_str(),
                   occupancy_text(tried.occupancy).c_str());
    }
    if (!us.ok()) {
      ++s.failed;
      s.cluster_failed += c.cluster_rows;
      return;
    }
    const float ms = *us / 1000.0f;
    if (c.cluster_rows && (s.cluster_ms == 0 || ms < s.cluster_ms)) s.cluster_ms = ms;
  };
  absl::StatusOr<jit::TunedReduce> t = jit::tune_reduce(dev, desc, *in, o);
  if (!t.ok()) {
    s.error = "no configuration compiled and ran";
  } else {
    s.cfg = t->config;
    s.ms = t->us / 1000.0f;
    s.build_s = t->build_seconds;
    s.timing_s = t->timing_seconds;
    if (trace) {
      std::fprintf(stderr, "[tuned] %s %lldx%lld: %d candidates, built ahead in %.1f s on %d threads, "
                   "created and timed in %.1f s\n", dsl::to_string(desc).c_str(),
                   static_cast<long long>(rows), static_cast<long long>(cols), s.tried, s.build_s,
                   o.build_threads, s.timing_s);
    }
  }
  return s;
}

// The fastest configuration of `desc` (search()), its runner on the shared inputs
// (a loaded-kernel hit) and the copy kernel's time for the same bytes; kept for the
// calls of one case.
const TunedCase& tuned(const std::shared_ptr<runtime::Device>& dev, const dsl::ReduceDesc& desc,
                       int64_t rows, int64_t cols) {
  static TunedCase tc;
  const CaseKey key = case_key(desc, rows, cols);
  if (tc.key == key && (tc.best || !tc.error.empty())) return tc;
  tc = TunedCase{.key = key, .best = std::nullopt, .cfg = {}, .copy_ms = 0, .error = ""};  // frees the previous case's output buffers
  const Search& s = search(dev, desc, rows, cols);
  if (!s.error.empty()) {
    tc.error = s.error;
    return tc;
  }
  auto r = jit::ReduceRunner::create(dev, desc, s.cfg);
  const jit::ReduceRunner* in = uploaded_inputs(dev, desc, rows, cols);
  if (!r.ok() || in == nullptr || !r->share_inputs(*in).ok()) {
    tc.error = "the tuned configuration did not load again";
    return tc;
  }
  tc.best.emplace(*std::move(r));
  tc.cfg = s.cfg;
  auto copy = copy_launch(*dev, tc.best->bytes_moved() / 2);
  auto copy_ms = copy.ok() ? runtime::median_launch_ms(*dev, *copy, 20, batch())
                           : absl::StatusOr<float>(copy.status());
  if (copy_ms.ok()) tc.copy_ms = *copy_ms;
  return tc;
}

// Which pinned cases have their free-order case benchmarked too (vs_free).
// FIXBITS_BENCH_VS_FREE=0 turns vs_free off (no free-order tuning from a pinned case).
bool vs_free_on() {
  static const bool on = env_not_zero("FIXBITS_BENCH_VS_FREE");
  return on;
}
using WithFree = bool (*)(int64_t rows, int64_t cols);
bool always(int64_t, int64_t) { return true; }
bool never(int64_t, int64_t) { return false; }

// Benchmarks the fastest configuration of `desc` (tuned once per case, see tuned()).
// axis kColumn reduces each column of the rows x cols matrix (strip from rows).
// with_free (pinned only): whether the same case in free order is benchmarked too; if
// so the counter vs_free compares the two tunings (the free one is memoized).
void BM_Reduce(benchmark::State& state, dsl::ReduceOp op, dsl::TreeOrder order, DType t,
               dsl::ReduceAxis axis = dsl::ReduceAxis::kRow, WithFree with_free = always) {
  std::string why;
  auto dev = device_or_null(&why);
  if (!dev) return state.SkipWithError(("[SKIP] no CUDA device: " + why).c_str());
  const int64_t rows = state.range(0), cols = state.range(1);
  const DType out = (op == dsl::ReduceOp::kSum) ? DType::kF32 : t;
  const int64_t extent = axis == dsl::ReduceAxis::kRow ? cols : rows;
  const dsl::ReduceDesc desc{.op = op, .axis = axis, .in_dtype = t, .out_dtype = out, .order = order,
                             .strip = std::min<int64_t>(4096, int64_t{1} << (63 - __builtin_clzll(extent)))};
  const TunedCase& tc = tuned(dev, desc, rows, cols);
  if (!tc.best) return state.SkipWithError(tc.error.c_str());
  const jit::ReduceRunner& best = *tc.best;
  for (int i = 0; i < 3; ++i) best.launch().IgnoreError();  // warm-up of this call
  double total_ms = 0;
  for (auto _ : state) {
    auto ms = runtime::batch_launch_ms(*dev, [&] { return best.launch(); }, batch());
    if (!ms.ok()) return state.SkipWithError(std::string(ms.status().message()).c_str());
    state.SetIterationTime(*ms / 1e3);
    total_ms += *ms;
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * best.bytes_moved()));
  // Achieved bandwidth as a share of the copy kernel's at the same bytes moved.
  if (tc.copy_ms > 0 && total_ms > 0) {
    state.counters["vs_copy"] = tc.copy_ms / (total_ms / static_cast<double>(state.iterations()));
  }
  {
    // How the tuning went: candidates tried and failed (cluster ones too), the seconds
    // of its two phases (building ahead, then creating and timing each), and the
    // fastest cluster_rows candidate against the winner (> 1: the cluster kernel slower).
    const Search& mine = search(dev, desc, rows, cols);
    state.counters["tried"] = mine.tried;
    state.counters["failed"] = mine.failed;
    state.counters["tune_build_s"] = mine.build_s;
    state.counters["tune_time_s"] = mine.timing_s;
    if (mine.cluster_tried > 0) {
      state.counters["cl_tried"] = mine.cluster_tried;
      state.counters["cl_failed"] = mine.cluster_failed;
      if (mine.cluster_ms > 0 && mine.ms > 0) state.counters["cl_vs_best"] = mine.cluster_ms / mine.ms;
    }
  }
  if (order == dsl::TreeOrder::kPinned && with_free(rows, cols) && vs_free_on()) {
    dsl::ReduceDesc free = desc;
    free.order = dsl::TreeOrder::kFree;
    const Search& mine = search(dev, desc, rows, cols);
    const Search& theirs = search(dev, free, rows, cols);
    if (theirs.error.empty() && mine.ms > 0) state.counters["vs_free"] = theirs.ms / mine.ms;
  }
  state.SetLabel(absl::StrFormat("warps=%d elems=%d strip=%d %s", tc.cfg.warps, tc.cfg.elems_per_thread,
                                 desc.strip, knobs_text(tc.cfg)));
}

#define FIXBITS_REDUCE_SIZES \
  Args({16384, 1024})->Args({8192, 4096})->Args({2048, 16384})->Args({256, 131072})->Args({32768, 8192})

BENCHMARK_CAPTURE(BM_Reduce, sum_pinned_f32, dsl::ReduceOp::kSum, dsl::TreeOrder::kPinned, DType::kF32)
    ->FIXBITS_REDUCE_SIZES->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Reduce, sum_free_f32, dsl::ReduceOp::kSum, dsl::TreeOrder::kFree, DType::kF32)
    ->FIXBITS_REDUCE_SIZES->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Reduce, sum_pinned_bf16, dsl::ReduceOp::kSum, dsl::TreeOrder::kPinned, DType::kBF16)
    ->FIXBITS_REDUCE_SIZES->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Reduce, sum_free_bf16, dsl::ReduceOp::kSum, dsl::TreeOrder::kFree, DType::kBF16)
    ->FIXBITS_REDUCE_SIZES->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Reduce, rmsnorm_pinned_bf16, dsl::ReduceOp::kRmsNorm, dsl::TreeOrder::kPinned, DType::kBF16)
    ->FIXBITS_REDUCE_SIZES->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Reduce, rmsnorm_free_bf16, dsl::ReduceOp::kRmsNorm, dsl::TreeOrder::kFree, DType::kBF16)
    ->FIXBITS_REDUCE_SIZES->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Reduce, softmax_pinned_bf16, dsl::ReduceOp::kSoftmax, dsl::TreeOrder::kPinned, DType::kBF16)
    ->FIXBITS_REDUCE_SIZES->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Reduce, softmax_free_bf16, dsl::ReduceOp::kSoftmax, dsl::TreeOrder::kFree, DType::kBF16)
    ->FIXBITS_REDUCE_SIZES->UseManualTime()->Unit(benchmark::kMicrosecond);

// Few, very long rows: where one block per row leaves most SMs idle and the split
// (blocks_per_row > 1) is what the pinned order runs.
#define FIXBITS_FEW_ROWS_SIZES Args({1, 1 << 22})->Args({16, 1 << 18})->Args({64, 1 << 17})
BENCHMARK_CAPTURE(BM_Reduce, sum_pinned_bf16_few_rows, dsl::ReduceOp::kSum, dsl::TreeOrder::kPinned, DType::kBF16)
    ->FIXBITS_FEW_ROWS_SIZES->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Reduce, sum_free_bf16_few_rows, dsl::ReduceOp::kSum, dsl::TreeOrder::kFree, DType::kBF16)
    ->FIXBITS_FEW_ROWS_SIZES->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Reduce, rmsnorm_pinned_bf16_few_rows, dsl::ReduceOp::kRmsNorm, dsl::TreeOrder::kPinned, DType::kBF16,
                  dsl::ReduceAxis::kRow, never)
    ->FIXBITS_FEW_ROWS_SIZES->UseManualTime()->Unit(benchmark::kMicrosecond);

// Column sums (one result per column): the pinned kernel reads whole row segments and
// converts them through shared memory (codegen/SelectLayout.h), its rows spread over
// P blocks per column group when the groups alone are too few (label bpr=P: strip
// parts, then a per-column fold); the free order still runs one block per column
// with strided loads, kept as the naive baseline.
#define FIXBITS_COLUMN_SIZES Args({4096, 4096})->Args({16384, 1024})->Args({1024, 16384})
BENCHMARK_CAPTURE(BM_Reduce, colsum_pinned_f32, dsl::ReduceOp::kSum, dsl::TreeOrder::kPinned, DType::kF32,
                  dsl::ReduceAxis::kColumn, [](int64_t rows, int64_t cols) { return rows == 4096 && cols == 4096; })
    ->FIXBITS_COLUMN_SIZES->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Reduce, colsum_pinned_bf16, dsl::ReduceOp::kSum, dsl::TreeOrder::kPinned, DType::kBF16,
                  dsl::ReduceAxis::kColumn, never)
    ->FIXBITS_COLUMN_SIZES->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Reduce, colsum_free_f32, dsl::ReduceOp::kSum, dsl::TreeOrder::kFree, DType::kF32,
                  dsl::ReduceAxis::kColumn)
    ->Args({4096, 4096})->UseManualTime()->Unit(benchmark::kMicrosecond);

// Latency of getting one kernel's runner, by state.range(0): 0 cold (dsl::reduce, codegen, the
// verifier, the driver's load, no cache), 1 a memory hit (the loaded-kernel table), 2 a
// disk hit (entry read and checksummed, signed by this checker: the driver's load).
// The driver keeps its own cache of PTX it compiled (~/.nv/ComputeCache): run with
// CUDA_CACHE_DISABLE=1 for the cold and disk rows to include its compile, as a
// tuning's first load of each candidate does.
void kernel_latency(benchmark::State& state, const dsl::ReduceDesc& desc, const dsl::ReduceConfig& cfg) {
  std::string why;
  auto dev = device_or_null(&why);
  if (!dev) return state.SkipWithError(("[SKIP] no CUDA device: " + why).c_str());
  const int kind = static_cast<int>(state.range(0));
  const auto dir = std::filesystem::temp_directory_path() / "fixbits-bench-cache";
  runtime::KernelCache disk_cache({.enabled = true, .dir = dir.string()});
  runtime::KernelCache no_cache({.enabled = false, .dir = ""});
  auto get = [&](runtime::KernelCache* cache) { return jit::ReduceRunner::create(dev, desc, cfg, cache); };
  if (!get(&disk_cache).ok()) return state.SkipWithError("the kernel did not build");
  if (!get(nullptr).ok()) return state.SkipWithError("the kernel did not load");
  for (auto _ : state) {
    if (kind == 2) {
      state.PauseTiming();
      disk_cache.clear_memory();
      state.ResumeTiming();
    }
    auto r = get(kind == 0 ? &no_cache : kind == 1 ? nullptr : &disk_cache);
    if (!r.ok()) return state.SkipWithError(std::string(r.status().message()).c_str());
    benchmark::DoNotOptimize(r);
  }
  state.SetLabel(kind == 0 ? "cold compile+load" : kind == 1 ? "memory hit" : "disk hit");
}

// A pinned bf16 row sum, 8 warps x 4 elements (the small kernel the targets name).
void BM_ReduceKernelLatency(benchmark::State& state) {
  kernel_latency(state, {.op = dsl::ReduceOp::kSum, .in_dtype = DType::kBF16, .strip = 1024},
                 {.warps = 8, .elems_per_thread = 4});
}
BENCHMARK(BM_ReduceKernelLatency)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);

// A large kernel of the kind a tuning builds hundreds of: the softmax 256 x 131072
// winner of session 27 (a cluster of 8, 16 warps x 4, 4 strips kept in shared memory,
// 4 blocks an SM, whole strips, divide by reciprocal, bf16 strip 4096). Its cold row
// against its disk row says how much of a candidate's build is the driver's load.
void BM_ReduceKernelLatencyLarge(benchmark::State& state) {
  kernel_latency(state,
                 {.op = dsl::ReduceOp::kSoftmax, .in_dtype = DType::kBF16, .out_dtype = DType::kBF16, .strip = 4096},
                 {.warps = 16, .elems_per_thread = 4, .blocks_per_row = 8, .keep_passes = 4, .cluster_rows = true,
                  .keep_in_shared = true, .min_blocks_per_sm = 4, .whole_strips = true, .divide_by_reciprocal = true});
}
BENCHMARK(BM_ReduceKernelLatencyLarge)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
