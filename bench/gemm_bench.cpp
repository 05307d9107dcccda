// gemm_bench: dsl::gemm against cuBLASLt on the model-layer GEMMs of docs/shapes.md
// (bench/ModelShapes.h), as TFLOP/s of each side and their ratio, per shape and dtype.
//
// Contract:
//   * Both sides read the same device A (M x K row-major) and B (K x N column-major,
//     an nn.Linear weight: the "TN" layout) and write m x n row-major outputs of their
//     own; inputs are uniform in [-1, 1] in the input dtype, out = the input dtype
//     (fp8: bf16). Before timing, the first rows of the two outputs are compared
//     (tolerance: 2% of |cuBLAS| + 0.005 sqrt(K)), so a broken kernel is an error
//     row, never a fast one.
//   * dsl::gemm runs one descriptor per shape, the family the shape calls for (one
//     class, fixed bits), and only its speed knobs (dsl::GemmConfig) are searched:
//       M = 1, K >= 12288: split_k, mma_sync ik=16 fast_accum, k_cuts=[2048], partials
//                          and merge at f32; knobs: warps;
//       M = 1 otherwise:   gemv, scalar_fma, 32 strided lanes, lane_tile 8, fold
//                          16,8,4,2,1; knobs: warps x rows_per_thread;
//       M > 1:             plain, mma_sync ik=16 fast_accum; knobs: warps, and
//                          register blocking warps x warp_m_tiles x warp_n_tiles;
//       fp8 e4m3, any M:   wgmma ik=32 (plain, or split_k as above at M = 1 and deep
//                          K); knobs: warps 4, 8, 16 (whole warpgroups), and
//                          register blocking as above.
//     The fastest knob setting (1 warm-up, then one launch when it takes > 2 ms, else
//     the median of 5) is kept per shape and named in the label with the descriptor
//     and cuBLASLt's algorithm.
//   * Timing: CUDA events around one launch of each side in every iteration
//     (UseManualTime reports dsl::gemm's time); the counters TFLOPs, cublas_TFLOPs and
//     ratio (cuBLAS time / dsl::gemm time: 1 = as fast as cuBLAS) come from the
//     medians of the repetition. A descriptor dsl::gemm does not build (Unimplemented)
//     times cuBLAS alone, and the label says why.
//   * --desc=cublas (or FIXBITS_GEMM_DESC=cublas): each shape runs instead with the
//     descriptor of cuBLAS's own answer, profile::cublas_answer(sm90, shape, lt) (the
//     committed table, through the heuristic of the handle that times cuBLAS), in the layout that table was
//     scanned in (f16/bf16 NN: A and B row-major; fp8 TN), so dsl::gemm returns
//     cuBLAS's bytes: the check before timing is then memcmp of the whole output, and
//     ratio is the speed the bits cost. Its knob search is the descriptor family's
//     (split_k and plain: the matrix knobs above; gemv: warps x rows; dot: one setting).
//     A shape whose answer has no descriptor times cuBLAS alone and says why.
//   * Shapes: the 20-shape default subset; `--shapes=all` (or FIXBITS_GEMM_SHAPES=all)
//     runs every distinct (N, K) at every M; --benchmark_filter selects by name
//     (gemm/<dtype>/<model>/<layer>/M=<m>).
//   * Without a CUDA device, an sm_90 one, or cuBLASLt it prints "[SKIP] <reason>" and
//     exits 0 (--benchmark_list_tests still lists the benchmarks).
//
// Run: gemm_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//        --benchmark_min_time=0.05 --benchmark_out=gemm.json --benchmark_out_format=json
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "bench/ModelShapes.h"
#include "dsl/FloatFormat.h"
#include "dsl/GemmDesc.h"
#include "dsl/tile/GemmProgram.h"
#include "jit/GemmRunner.h"
#include "profile/CublasProfile.h"
#include "runtime/CublasLt.h"
#include "runtime/Runtime.h"

using namespace fixbits;

namespace {

constexpr int64_t kDeepK = 12288;      // M = 1 and K at least this: split-K
constexpr int64_t kSplitSpan = 2048;   // split-K part length (the descriptor's k_cuts)

struct Case {
  std::string_view model;
  bench::Layer layer;
  int64_t m = 0, n = 0, k = 0;
  DType in = DType::kF16;
};

DType out_dtype(DType in) { return dtype_is_fp8(in) ? DType::kBF16 : in; }
size_t elem_bytes(DType t) { return static_cast<size_t>(dtype_bits(t)) / 8; }

struct Env {
  std::shared_ptr<runtime::Device> dev;
  std::shared_ptr<runtime::CublasLt> lt;
  std::vector<Case> cases;
};
Env g_env;
// --desc=cublas: every shape takes the descriptor of cuBLAS's own answer (see above).
bool g_cublas_bits = false;

// ---------------------------------------------------------------------------------
// Operands: one set of device buffers per input dtype, sized for the largest case,
// shared by both sides. Benchmarks are registered dtype by dtype, so a set is filled
// once and replaced when the dtype changes.
struct Operands {
  DType in = DType::kF16;
  runtime::Buffer a, b, d_fix, d_ref;
};
std::unique_ptr<Operands> g_ops;

absl::Status fill_random(runtime::Buffer& buf, DType t, size_t elems, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const size_t eb = elem_bytes(t);
  std::vector<uint8_t> pattern((size_t{1} << 16) * eb);
  for (size_t i = 0; i < pattern.size() / eb; ++i) {
    const uint32_t bits = to_bits(t, u(rng));
    std::memcpy(&pattern[i * eb], &bits, eb);  // little-endian low bytes
  }
  std::vector<uint8_t> host(elems * eb);
  for (size_t off = 0; off < host.size(); off += pattern.size()) {
    std::memcpy(&host[off], pattern.data(), std::min(pattern.size(), host.size() - off));
  }
  return buf.copy_from_host(host.data(), host.size());
}

absl::StatusOr<Operands*> operands_for(DType in) {
  if (g_ops && g_ops->in == in) return g_ops.get();
  g_ops.reset();  // free the previous dtype's set first
  size_t a = 1, b = 1, d = 1;
  for (const Case& c : g_env.cases) {
    if (c.in != in) continue;
    a = std::max(a, static_cast<size_t>(c.m * c.k));
    b = std::max(b, static_cast<size_t>(c.k * c.n));
    d = std::max(d, static_cast<size_t>(c.m * c.n));
  }
  auto ops = std::make_unique<Operands>();
  ops->in = in;
  const size_t ob = elem_bytes(out_dtype(in));
  auto alloc = [&](runtime::Buffer& buf, size_t bytes) -> absl::Status {
    absl::StatusOr<runtime::Buffer> got = g_env.dev->alloc(bytes);
    if (!got.ok()) return got.status();
    buf = std::move(*got);
    return absl::OkStatus();
  };
  for (absl::Status s : {alloc(ops->a, a * elem_bytes(in)), alloc(ops->b, b * elem_bytes(in)),
                         alloc(ops->d_fix, d * ob), alloc(ops->d_ref, d * ob)}) {
    if (!s.ok()) return s;
  }
  if (absl::Status s = fill_random(ops->a, in, a, 1); !s.ok()) return s;
  if (absl::Status s = fill_random(ops->b, in, b, 2); !s.ok()) return s;
  g_ops = std::move(ops);
  return g_ops.get();
}

// ---------------------------------------------------------------------------------
// The descriptor each shape gets, and the knob settings searched for it.
runtime::GemmShape cublas_shape(const Case& c);

// The shape's own descriptor (this bench's family per M), or, with --desc=cublas,
// cuBLAS's: Unimplemented (the row then times cuBLAS alone) when its answer has none.
absl::StatusOr<dsl::GemmDesc> desc_for(const Case& c) {
  if (g_cublas_bits) {
    // Through the handle that runs cuBLAS's side, so the answer is the one timed.
    absl::StatusOr<dsl::GemmDesc> d = profile::cublas_answer(profile::sm90, cublas_shape(c), *g_env.lt);
    if (!d.ok()) return absl::UnimplementedError(absl::StrCat("profile::cublas: ", d.status().message()));
    return d;
  }
  dsl::GemmDesc d;
  d.a_dtype = d.b_dtype = c.in;
  d.acc_dtype = DType::kF32;
  d.out_dtype = out_dtype(c.in);
  // fp8 runs on wgmma (mma.sync with fp8 does not follow the measured model), for
  // every M: the scalar gemv path reads no fp8.
  const bool fp8 = dtype_is_fp8(c.in);
  d.instruction = fp8 ? dsl::Instruction::kWgmma : dsl::Instruction::kMmaSync;
  d.instruction_k = dsl::matrix_instruction_k(c.in);
  d.use_fast_accum = true;
  if (c.m == 1 && c.k >= kDeepK) {
    d.family = dsl::GemmFamily::kSplitK;
    d.k_cuts = {{.span = kSplitSpan}};
  } else if (c.m == 1 && !fp8) {
    d.family = dsl::GemmFamily::kGemv;
    d.instruction = dsl::Instruction::kScalarFma;
    d.instruction_k = 1;
    d.lane_layout = dsl::LaneLayout::kStrided;
    d.lanes = 32;
    d.lane_tile = 8;
    d.lane_fold = {16, 8, 4, 2, 1};
  }
  return d;
}

std::vector<dsl::GemmConfig> knobs_for(const dsl::GemmDesc& d, int64_t m, int64_t n) {
  std::vector<dsl::GemmConfig> out;
  if (d.family == dsl::GemmFamily::kDot) return {dsl::GemmConfig{}};  // its grid is the desc's
  if (d.family == dsl::GemmFamily::kGemv) {
    for (auto [w, r] : {std::pair{1, 1}, {2, 1}, {4, 1}, {8, 1}, {4, 2}, {8, 2}, {4, 4}, {8, 4}}) {
      out.push_back({.warps = w, .rows_per_thread = r, .block_n = 1});
    }
    return out;
  }
  // Unblocked (one 16x8 tile per warp): BLOCK_M = 16 warps; more warps than the rows
  // fill only add idle warps. wgmma: whole warpgroups (warps 4, 8, 16).
  const bool wg = d.instruction == dsl::Instruction::kWgmma;
  const int first = wg ? 4 : 1;
  for (int w = first; w <= 16; w *= 2) {
    if (w > first && 16 * (w / 2) >= m) break;
    out.push_back({.warps = w, .rows_per_thread = 1, .block_n = 8});
  }
  // Register blocked (warps, warp_m_tiles, warp_n_tiles): a warp computes 16*wm x 8*wn
  // outputs. The lists keep settings ptxas compiles without spills (f16 mma_sync,
  // e4m3 wgmma, fast_accum; checked with ptxas -v on sm_90a); settings whose block
  // tile is far larger than the problem are skipped.
  static constexpr std::array<std::array<int, 3>, 6> kMma = {
      {{4, 2, 2}, {4, 2, 4}, {8, 2, 4}, {8, 4, 2}, {8, 1, 8}, {4, 4, 4}}};
  static constexpr std::array<std::array<int, 3>, 6> kWg = {
      {{4, 1, 2}, {8, 1, 2}, {4, 1, 4}, {8, 1, 4}, {4, 2, 2}, {8, 2, 2}}};
  for (const auto& [w, wm, wn] : wg ? kWg : kMma) {
    dsl::GemmConfig cfg{.warps = w, .rows_per_thread = 1, .block_n = 8};
    cfg.warp_m_tiles = wm;
    cfg.warp_n_tiles = wn;
    if (dsl::mma_block_m(cfg) > std::max<int64_t>(64, 2 * m)) continue;
    if (dsl::mma_block_n(cfg) > std::max<int64_t>(8, 2 * n)) continue;
    out.push_back(cfg);
  }
  return out;
}

const char* instruction_text(dsl::Instruction i) {
  return i == dsl::Instruction::kWgmma ? "wgmma" : "mma_sync";
}

std::string family_text(const dsl::GemmDesc& d) {
  if (g_cublas_bits) return dsl::to_string(d);
  switch (d.family) {
    case dsl::GemmFamily::kSplitK:
      return absl::StrFormat("split_k %s ik=%d fast_accum span=%d partial=f32",
                             instruction_text(d.instruction), d.instruction_k, d.k_cuts[0].span);
    case dsl::GemmFamily::kGemv:
      return absl::StrFormat("gemv scalar_fma lanes=%d strided tile=%d fold=[%s]", d.lanes,
                             d.lane_tile, absl::StrJoin(d.lane_fold, ","));
    default:
      return absl::StrFormat("plain %s ik=%d fast_accum", instruction_text(d.instruction),
                             d.instruction_k);
  }
}

// ---------------------------------------------------------------------------------
// One tuned dsl::gemm: its kernels, grids and split-K workspace.
struct Tuned {
  bool b_row_major = false;  // cublas_shape(c)'s B layout, read once (not per launch)
  dsl::GemmDesc desc;
  dsl::GemmConfig cfg;
  std::shared_ptr<jit::GemmRunner> runner;  // holds the loaded kernels
  dsl::GemmLaunchShape shape;
  std::shared_ptr<runtime::Buffer> ws;
};

runtime::Dim3 dim(const std::array<int64_t, 3>& g) {
  return {static_cast<uint32_t>(g[0]), static_cast<uint32_t>(g[1]), static_cast<uint32_t>(g[2])};
}

// The launches of GemmProgram.h's parameter lists on the shared operands: A row-major
// (a_sm = K, a_sk = 1), B column-major (b_sk = 1, b_sn = K) or, as cublas_shape(c)
// says for --desc=cublas, row-major (b_sk = N, b_sn = 1).
absl::Status launch_fixbits(const Tuned& t, const Case& c, Operands& o) {
  const bool b_row = t.b_row_major;
  using runtime::KernelArg;
  const auto i32 = [](int64_t v) { return KernelArg::scalar<int32_t>(static_cast<int32_t>(v)); };
  const auto i64 = [](int64_t v) { return KernelArg::scalar<int64_t>(v); };
  const jit::JitKernel& main = t.runner->main_kernel();
  const jit::JitKernel* merge = t.runner->merge_kernel();
  std::vector<KernelArg> args;
  args.reserve(14);
  args.push_back(KernelArg::pointer(o.a));
  args.push_back(KernelArg::pointer(o.b));
  if (merge == nullptr) {
    for (int i = 0; i < 3; ++i) args.push_back(KernelArg::pointer(o.d_fix));  // out; c, bias unread
  } else {
    args.push_back(KernelArg::pointer(*t.ws));
  }
  for (int64_t v : {c.m, c.n, c.k}) args.push_back(i32(v));
  for (int64_t v : {c.k, int64_t{1}, b_row ? c.n : int64_t{1}, b_row ? int64_t{1} : c.k}) {
    args.push_back(i64(v));  // a_sm a_sk b_sk b_sn
  }
  if (merge == nullptr) {
    args.push_back(KernelArg::scalar<float>(1.0f));
    args.push_back(KernelArg::scalar<float>(0.0f));
  }
  runtime::LaunchConfig cfg{.grid = dim(t.shape.main_grid), .block = {main.block_threads},
                            .dynamic_shared_bytes = main.dynamic_shared_bytes};
  if (absl::Status s = main.kernel().launch(cfg, args); !s.ok()) return s;
  if (merge == nullptr) return absl::OkStatus();
  std::vector<KernelArg> margs = {KernelArg::pointer(*t.ws), KernelArg::pointer(o.d_fix),
                                  KernelArg::pointer(o.d_fix), KernelArg::pointer(o.d_fix),
                                  i32(c.m), i32(c.n), i32(t.shape.parts),
                                  KernelArg::scalar<float>(1.0f), KernelArg::scalar<float>(0.0f)};
  runtime::LaunchConfig mcfg{.grid = dim(t.shape.merge_grid), .block = {merge->block_threads},
                             .dynamic_shared_bytes = merge->dynamic_shared_bytes};
  return merge->kernel().launch(mcfg, margs);
}

runtime::GemmShape cublas_shape(const Case& c) {
  if (g_cublas_bits) {
    absl::StatusOr<runtime::GemmShape> s = profile::usual_shape({c.m, c.n, c.k}, c.in);
    if (s.ok()) return *s;  // the three dtypes of cases_for all have one
  }
  return {.m = c.m, .n = c.n, .k = c.k, .a_dtype = c.in, .b_dtype = c.in,
          .out_dtype = out_dtype(c.in), .a_row_major = true, .b_row_major = false};
}

// Event pair reused for every timing of one benchmark run.
struct Timer {
  runtime::Event start, stop;
  template <typename F>
  absl::StatusOr<float> ms(F&& launch) {
    if (absl::Status s = start.record(); !s.ok()) return s;
    if (absl::Status s = launch(); !s.ok()) return s;
    if (absl::Status s = stop.record(); !s.ok()) return s;
    if (absl::Status s = stop.synchronize(); !s.ok()) return s;
    return stop.elapsed_ms_since(start);
  }
};

absl::StatusOr<Timer> make_timer() {
  absl::StatusOr<runtime::Event> a = g_env.dev->create_event();
  if (!a.ok()) return a.status();
  absl::StatusOr<runtime::Event> b = g_env.dev->create_event();
  if (!b.ok()) return b.status();
  return Timer{std::move(*a), std::move(*b)};
}

float median(std::vector<float> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// Warm-up, then one launch when it is slow, else the median of 5.
template <typename F>
absl::StatusOr<float> quick_ms(Timer& t, F&& launch) {
  if (absl::Status s = launch(); !s.ok()) return s;
  absl::StatusOr<float> first = t.ms(launch);
  if (!first.ok() || *first > 2.0f) return first;
  std::vector<float> v = {*first};
  for (int i = 0; i < 4; ++i) {
    absl::StatusOr<float> ms = t.ms(launch);
    if (!ms.ok()) return ms.status();
    v.push_back(*ms);
  }
  return median(v);
}

// The fastest knob setting of the shape's descriptor; Unimplemented when dsl::gemm
// does not build the descriptor at all.
absl::StatusOr<Tuned> tune(const Case& c, Operands& o, Timer& timer) {
  const absl::StatusOr<dsl::GemmDesc> got = desc_for(c);
  if (!got.ok()) return got.status();
  const dsl::GemmDesc desc = *got;
  const bool b_row = cublas_shape(c).b_row_major;
  absl::Status last = absl::InternalError("no knob setting was tried");
  std::optional<Tuned> best;
  float best_ms = 0;
  for (const dsl::GemmConfig& cfg : knobs_for(desc, c.m, c.n)) {
    absl::StatusOr<jit::GemmRunner> r = jit::GemmRunner::create(g_env.dev, desc, cfg);
    if (!r.ok()) {
      if (absl::IsUnimplemented(r.status())) return r.status();
      last = r.status();
      continue;
    }
    Tuned t{b_row, desc, cfg, std::make_shared<jit::GemmRunner>(std::move(*r)), {}, nullptr};
    absl::StatusOr<dsl::GemmLaunchShape> shape = dsl::gemm_launch_shape(desc, cfg, c.m, c.n, c.k);
    if (!shape.ok()) return shape.status();
    t.shape = *shape;
    if (t.shape.workspace_elems > 0) {
      absl::StatusOr<runtime::Buffer> ws =
          g_env.dev->alloc(static_cast<size_t>(t.shape.workspace_elems) * elem_bytes(desc.partial_dtype));
      if (!ws.ok()) return ws.status();
      t.ws = std::make_shared<runtime::Buffer>(std::move(*ws));
    }
    absl::StatusOr<float> ms = quick_ms(timer, [&] { return launch_fixbits(t, c, o); });
    if (!ms.ok()) {
      last = ms.status();
      continue;
    }
    if (!best || *ms < best_ms) {
      best_ms = *ms;
      best = std::move(t);
    }
  }
  if (!best) {
    return absl::InternalError(
        absl::StrFormat("No knob setting of %s ran: %s", family_text(desc), last.message()));
  }
  return *std::move(best);
}

// The first rows of dsl::gemm's output against cuBLAS's (both just computed); with
// --desc=cublas, every byte of the output.
absl::Status compare_outputs(const Case& c, const Operands& o) {
  const DType t = out_dtype(c.in);
  const size_t elems = static_cast<size_t>((g_cublas_bits ? c.m : std::min<int64_t>(c.m, 2)) * c.n);
  const size_t eb = elem_bytes(t);
  std::vector<uint8_t> fix(elems * eb), ref(elems * eb);
  if (absl::Status s = g_env.dev->synchronize(); !s.ok()) return s;
  if (absl::Status s = o.d_fix.copy_to_host(fix.data(), fix.size()); !s.ok()) return s;
  if (absl::Status s = o.d_ref.copy_to_host(ref.data(), ref.size()); !s.ok()) return s;
  if (g_cublas_bits) {
    for (size_t i = 0; i < elems; ++i) {
      if (std::memcmp(&fix[i * eb], &ref[i * eb], eb) != 0) {
        uint32_t fb = 0, rb = 0;
        std::memcpy(&fb, &fix[i * eb], eb);
        std::memcpy(&rb, &ref[i * eb], eb);
        return absl::InternalError(absl::StrFormat(
            "dsl::gemm on cuBLAS's descriptor differs from cuBLAS at output (%d, %d): 0x%x "
            "against 0x%x.", i / c.n, i % c.n, fb, rb));
      }
    }
    return absl::OkStatus();
  }
  const float slack = 0.005f * std::sqrt(static_cast<float>(c.k));
  for (size_t i = 0; i < elems; ++i) {
    uint32_t fb = 0, rb = 0;
    std::memcpy(&fb, &fix[i * eb], eb);
    std::memcpy(&rb, &ref[i * eb], eb);
    const float x = to_float(t, fb), y = to_float(t, rb);
    if (!(std::fabs(x - y) <= 0.02f * std::fabs(y) + slack)) {
      return absl::InternalError(absl::StrFormat(
          "dsl::gemm and cuBLAS disagree at output (%d, %d): %g against %g.", i / c.n, i % c.n, x, y));
    }
  }
  return absl::OkStatus();
}

std::string algo_text(const runtime::MatmulReport& r) {
  return absl::StrFormat("cublas{tile=%u stages=%u splitk=%u red=%s}", r.algo.tile_id,
                         r.algo.stages_id, r.algo.splitk_num,
                         runtime::reduction_scheme_name(r.algo.reduction_scheme));
}

void fail(benchmark::State& state, const absl::Status& s) {
  state.SkipWithError(std::string(s.message()).c_str());
}

void BM_Gemm(benchmark::State& state, const Case& c) {
  absl::StatusOr<Operands*> ops = operands_for(c.in);
  if (!ops.ok()) return fail(state, ops.status());
  Operands& o = **ops;
  absl::StatusOr<Timer> timer = make_timer();
  if (!timer.ok()) return fail(state, timer.status());
  const runtime::GemmShape cs = cublas_shape(c);
  auto cublas = [&]() -> absl::Status { return g_env.lt->matmul(cs, o.a, o.b, o.d_ref).status(); };
  absl::StatusOr<runtime::MatmulReport> report = g_env.lt->heuristic(cs);
  if (!report.ok()) return fail(state, report.status());

  // Tuned once per shape and dtype; later repetitions reuse the choice.
  static std::map<std::string, absl::StatusOr<Tuned>> tuned;
  const std::string key = absl::StrFormat("%s %dx%dx%d", dtype_name(c.in), c.m, c.n, c.k);
  if (!tuned.count(key)) {
    absl::StatusOr<Tuned> t = tune(c, o, *timer);
    if (t.ok()) {
      absl::Status s = o.d_fix.fill_bytes(0xff);  // an element the kernel skips reads NaN
      if (s.ok()) s = launch_fixbits(*t, c, o);
      if (s.ok()) s = cublas();
      if (s.ok()) s = compare_outputs(c, o);
      if (!s.ok()) t = s;
    }
    tuned.emplace(key, std::move(t));
  }
  const absl::StatusOr<Tuned>& t = tuned.at(key);
  const bool cublas_only = !t.ok() && absl::IsUnimplemented(t.status());
  if (!t.ok() && !cublas_only) return fail(state, t.status());

  // Warm-up of both sides (clocks, caches, first-launch costs) outside the timing.
  for (int i = 0; i < 2; ++i) {
    absl::Status s = cublas();
    if (s.ok() && !cublas_only) s = launch_fixbits(*t, c, o);
    if (!s.ok()) return fail(state, s);
  }
  std::vector<float> fix_ms, ref_ms;
  for (auto _ : state) {
    absl::StatusOr<float> ref = timer->ms(cublas);
    if (!ref.ok()) return fail(state, ref.status());
    ref_ms.push_back(*ref);
    if (cublas_only) {
      state.SetIterationTime(*ref / 1e3);
      continue;
    }
    absl::StatusOr<float> fix = timer->ms([&] { return launch_fixbits(*t, c, o); });
    if (!fix.ok()) return fail(state, fix.status());
    fix_ms.push_back(*fix);
    state.SetIterationTime(*fix / 1e3);
  }
  if (ref_ms.empty()) return;
  const double flop = 2.0 * c.m * c.n * c.k;
  const double ref_med = median(ref_ms);
  state.counters["cublas_TFLOPs"] = flop / (ref_med * 1e-3) / 1e12;
  state.counters["cublas_us"] = ref_med * 1e3;
  if (cublas_only) {
    state.SetLabel(absl::StrFormat("cuBLAS only: dsl::gemm skipped (%s) | %s", t.status().message(),
                                   algo_text(*report)));
    return;
  }
  const double fix_med = median(fix_ms);
  state.counters["TFLOPs"] = flop / (fix_med * 1e-3) / 1e12;
  state.counters["ratio"] = ref_med / fix_med;
  state.SetLabel(absl::StrFormat("%s warps=%d rows=%d block_n=%d warp_m_tiles=%d "
                                 "warp_n_tiles=%d | %s",
                                 family_text(t->desc), t->cfg.warps, t->cfg.rows_per_thread,
                                 t->cfg.block_n, t->cfg.warp_m_tiles, t->cfg.warp_n_tiles,
                                 algo_text(*report)));
}

std::vector<Case> cases_for(bool all) {
  std::vector<Case> shapes;
  if (all) {
    for (const bench::LayerShape& s : bench::distinct_layer_shapes()) {
      for (int64_t m : bench::kTokenCounts) shapes.push_back({s.model, s.layer, m, s.n, s.k});
    }
  } else {
    for (const bench::GemmCase& g : bench::kDefaultSubset) {
      const bench::LayerShape s = bench::layer_shape(*bench::find_model(g.model), g.layer);
      shapes.push_back({g.model, g.layer, g.m, s.n, s.k});
    }
  }
  std::vector<Case> out;
  for (DType in : {DType::kF16, DType::kBF16, DType::kF8E4M3}) {
    for (Case c : shapes) {
      c.in = in;
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  // --shapes=default|all (also FIXBITS_GEMM_SHAPES) and --desc=own|cublas (also
  // FIXBITS_GEMM_DESC), taken out before the library's flags.
  std::string shapes = std::getenv("FIXBITS_GEMM_SHAPES") ? std::getenv("FIXBITS_GEMM_SHAPES") : "";
  std::string desc = std::getenv("FIXBITS_GEMM_DESC") ? std::getenv("FIXBITS_GEMM_DESC") : "own";
  bool list_only = false;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--shapes=", 9) == 0) {
      shapes = argv[i] + 9;
      continue;
    }
    if (std::strncmp(argv[i], "--desc=", 7) == 0) {
      desc = argv[i] + 7;
      continue;
    }
    list_only = list_only || std::strncmp(argv[i], "--benchmark_list_tests", 22) == 0;
    argv[kept++] = argv[i];
  }
  argc = kept;
  if (shapes.empty()) shapes = "default";
  // A flag's value must be one of two words; otherwise say which and exit 2.
  auto one_of = [](const char* flag, const char* env, const std::string& v, const char* a,
                   const char* b) {
    if (v == a || v == b) return true;
    std::fprintf(stderr, "gemm_bench: --%s (or %s) is \"%s\" but must be \"%s\" or \"%s\".\n",
                 flag, env, v.c_str(), a, b);
    return false;
  };
  if (!one_of("shapes", "FIXBITS_GEMM_SHAPES", shapes, "default", "all") ||
      !one_of("desc", "FIXBITS_GEMM_DESC", desc, "own", "cublas")) {
    return 2;
  }
  g_cublas_bits = desc == "cublas";
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  g_env.cases = cases_for(shapes == "all");
  for (const Case& c : g_env.cases) {
    const std::string name = absl::StrFormat("gemm/%s/%s/%s/M=%d", dtype_name(c.in), c.model,
                                             bench::layer_name(c.layer), c.m);
    benchmark::RegisterBenchmark(name.c_str(), [c](benchmark::State& s) { BM_Gemm(s, c); })
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
  }
  if (!list_only) {
    absl::StatusOr<std::shared_ptr<runtime::Device>> dev = runtime::cuda(0);
    if (!dev.ok()) {
      std::printf("[SKIP] gemm_bench: no CUDA device: %s\n", std::string(dev.status().message()).c_str());
      return 0;
    }
    if ((*dev)->info().cc_major != 9 || (*dev)->info().cc_minor != 0) {
      std::printf("[SKIP] gemm_bench: dsl::gemm targets sm_90a; device %s is sm_%d%d.\n",
                  (*dev)->info().name.c_str(), (*dev)->info().cc_major, (*dev)->info().cc_minor);
      return 0;
    }
    absl::StatusOr<std::shared_ptr<runtime::CublasLt>> lt = runtime::CublasLt::open(*dev);
    if (!lt.ok()) {
      std::printf("[SKIP] gemm_bench: no cuBLASLt: %s\n", std::string(lt.status().message()).c_str());
      return 0;
    }
    g_env.dev = *dev;
    g_env.lt = *lt;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  g_ops.reset();
  g_env = Env{};
  return 0;
}
