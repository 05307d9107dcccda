// fixbits-cublas-probe: the black-box reconstruction of reference §4, against the
// cuBLASLt on this machine. For each shape it prints
//   1. the heuristic's answer: the algorithm's config attributes and its workspace,
//      and (with CUPTI) the kernels one call launched, with grids and memsets;
//   2. the GemmDesc the ±L/r probe recovers (dsl::probe::recover_gemm_desc, run
//      against the full-shape kernel through profile::CublasBlackBox), the family
//      taken from the profile (split-K / reduce kernels, dot/gemv kernels);
//   3. whether that descriptor's CPU reference reproduces cuBLAS bit for bit on fresh
//      random draws of the FULL shape (every output when M*N*K <= 2^24, otherwise the
//      outputs at up to 8 rows x 8 columns spread over D, first and last included).
// Without a GPU or without cuBLASLt it prints the reason and exits 0. Exit 1 when a
// recovered descriptor misses a draw or a probe fails, 2 on bad arguments.
//
// Usage: fixbits-cublas-probe [--shapes=S,S,...] [--max-probe-k=N] [--budget-s=T]
//                             [--draws=N] [--family=auto|plain|split_k|chained_chunks|gemv|dot]
//                             [--walks] [--positions[=D]] [--positions-max-k=N]
//                             [--tree=F:L,F:L,...] [--zero-sign[=N]]
//   --zero-sign[=N]: instead of probing, the signed-zero experiment (ZeroSign.h: all -0.0
//   products, and tiny products a narrow split partial rounds to -0.0)
//   on the --shapes, or on N probe points (default 2) of every class of the embedded
//   table that has a descriptor.
//   --walks: before the probe, print the black box's pair walk (r at 0, +L/-L at m, m+1)
//   and trailing walk (+L/-L at m, m+1, r at m+2) as one character per m (r: r
//   survived, 0: lost, x: neither), 64 per line: the raw evidence for a kernel no
//   descriptor reproduces.
//   --positions[=D]: before the probe, test whether the order depends on where an
//   output sits in D (Positions.h): D random draws (default 2) and the pair walk
//   (K <= --positions-max-k, default 1024) with every row of A and every column of B
//   equal, grouped and mapped by position.
//   --tree=F:L+F:L,...: before the probe, recover the whole summation tree of D[0][0]
//   induced on the K windows [F, F+L) joined by '+' (dsl/probe/SumTree.h; at most 2048
//   leaves for f16 out, 256 for bf16; leaves past K are dropped) and print it in its
//   canonical text, one line per tree: the raw evidence for kernels whose reduction no
//   GemmDesc family models (dot/GEMV).
//   S = MxNxK[:in[:out]][:tn]  e.g. 1x4096x4096, 8192x8192x8192:bf16,
//       128x4096x4096:f8e4m3:f16 (fp8 always runs TN: B column-major).
//   Defaults: the shapes of shared/device/README.md, and K in {576, 4096, 16384,
//   65536} at M = 1 and M = 128, N = 4096, f16. Shapes with K > --max-probe-k (4096)
//   get the heuristic answer and the profile only (the probe's CPU work grows like
//   K^2 for split-K: ~75 s at K = 16384); once --budget-s (120) seconds have passed,
//   the remaining shapes are not probed either. The defaults keep a plain run (as
//   scripts/device_run.sh does it) to about a minute.
#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "dsl/GemmDesc.h"
#include "dsl/probe/Probe.h"
#include "dsl/probe/SumTree.h"
#include "dsl/reference/Reference.h"
#include "profile/CublasBlackBox.h"
#include "profile/MatchDraws.h"
#include "runtime/CublasLt.h"
#include "runtime/Cupti.h"
#include "runtime/Runtime.h"
#include "samples/common/ShapeArg.h"
#include "samples/cublas_probe/Positions.h"
#include "samples/cublas_probe/ZeroSign.h"

using namespace fixbits;

namespace {

struct Args {
  std::vector<runtime::GemmShape> shapes;
  int64_t max_probe_k = 4096;
  double budget_s = 120;
  int draws = 3;
  std::string family = "auto";
  bool walks = false;
  int positions = 0;  // random draws of the position test; 0: no position test
  int64_t positions_max_k = 1024;
  std::vector<std::vector<int64_t>> trees;  // --tree: each tree's leaves, ascending
  int zero_sign = 0;  // --zero-sign[=N]: the signed-zero experiment only
  bool shapes_given = false;
};

std::string msg(const absl::Status& s) { return std::string(s.message()); }

std::vector<runtime::GemmShape> default_shapes() {
  std::vector<std::string> specs = {"1x4096x4096", "128x4096x4096", "4096x4096x4096",
                                    "8192x8192x8192:bf16", "1x1x262144"};
  for (int64_t m : {1, 128})
    for (int64_t k : {576, 4096, 16384, 65536})
      specs.push_back(std::to_string(m) + "x4096x" + std::to_string(k));
  std::vector<runtime::GemmShape> out;
  for (const std::string& s : specs) {
    absl::StatusOr<runtime::GemmShape> shape = samples::parse_shape_arg(s);
    if (shape.ok() && std::find(out.begin(), out.end(), *shape) == out.end()) out.push_back(*shape);
  }
  return out;
}

absl::StatusOr<Args> parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    auto value = [&](std::string_view flag) -> std::optional<std::string_view> {
      if (arg.substr(0, flag.size()) == flag) return arg.substr(flag.size());
      return std::nullopt;
    };
    if (auto v = value("--shapes=")) {
      for (absl::string_view s : absl::StrSplit(absl::string_view(v->data(), v->size()), ',', absl::SkipEmpty())) {
        absl::StatusOr<runtime::GemmShape> shape = samples::parse_shape_arg(std::string_view(s.data(), s.size()));
        if (!shape.ok()) return shape.status();
        a.shapes.push_back(*shape);
      }
    } else if (auto v = value("--max-probe-k=")) {
      if (!absl::SimpleAtoi(std::string(*v), &a.max_probe_k)) {
        return absl::InvalidArgumentError("--max-probe-k takes an integer.");
      }
    } else if (auto v = value("--budget-s=")) {
      if (!absl::SimpleAtod(std::string(*v), &a.budget_s)) {
        return absl::InvalidArgumentError("--budget-s takes a number of seconds.");
      }
    } else if (auto v = value("--draws=")) {
      if (!absl::SimpleAtoi(std::string(*v), &a.draws) || a.draws < 0) {
        return absl::InvalidArgumentError("--draws takes a count >= 0.");
      }
    } else if (arg == "--zero-sign") {
      a.zero_sign = 2;
    } else if (auto v = value("--zero-sign=")) {
      if (!absl::SimpleAtoi(std::string(*v), &a.zero_sign) || a.zero_sign < 1) {
        return absl::InvalidArgumentError("--zero-sign takes a count of probe points per class >= 1.");
      }
    } else if (arg == "--walks") {
      a.walks = true;
    } else if (arg == "--positions") {
      a.positions = 2;
    } else if (auto v = value("--positions=")) {
      if (!absl::SimpleAtoi(std::string(*v), &a.positions) || a.positions < 1) {
        return absl::InvalidArgumentError("--positions takes a count of draws >= 1.");
      }
    } else if (auto v = value("--tree=")) {
      for (absl::string_view tree : absl::StrSplit(absl::string_view(v->data(), v->size()), ',', absl::SkipEmpty())) {
        std::vector<int64_t> leaves;
        for (absl::string_view w : absl::StrSplit(tree, '+')) {
          std::vector<std::string> fl = absl::StrSplit(w, ':');
          int64_t first = 0, length = 0;
          if (fl.size() != 2 || !absl::SimpleAtoi(fl[0], &first) || !absl::SimpleAtoi(fl[1], &length) ||
              first < 0 || length < 1 || length > 4096) {
            return absl::InvalidArgumentError(
                "--tree takes windows FIRST:LENGTH (LENGTH 1 to 4096) joined by '+' into one "
                "tree, trees comma-separated.");
          }
          for (int64_t i = 0; i < length; ++i) leaves.push_back(first + i);
        }
        std::sort(leaves.begin(), leaves.end());
        leaves.erase(std::unique(leaves.begin(), leaves.end()), leaves.end());
        a.trees.push_back(std::move(leaves));
      }
    } else if (auto v = value("--positions-max-k=")) {
      if (!absl::SimpleAtoi(std::string(*v), &a.positions_max_k)) {
        return absl::InvalidArgumentError("--positions-max-k takes an integer.");
      }
    } else if (auto v = value("--family=")) {
      a.family = std::string(*v);
      if (a.family != "auto" && !dsl::parse_family(a.family).ok()) {
        return absl::InvalidArgumentError(
            "--family is one of auto, plain, split_k, chained_chunks, gemv.");
      }
    } else {
      return absl::InvalidArgumentError("Unknown argument '" + std::string(arg) +
                                        "'; see the usage at the top of main.cpp.");
    }
  }
  a.shapes_given = !a.shapes.empty();
  if (a.shapes.empty() && a.zero_sign == 0) a.shapes = default_shapes();
  return a;
}


struct VerifyResult {
  int draws_ok = 0;
  std::string how;
  std::string first_miss;
};

// Full-shape draws through cuBLASLt, compared with reference::gemm(desc) at the
// checked positions.
absl::StatusOr<VerifyResult> verify(runtime::CublasLt& lt, const runtime::GemmShape& s,
                                    const dsl::GemmDesc& desc, int draws) {
  const bool all = s.m * s.n * s.k <= (int64_t{1} << 24);
  const std::vector<int64_t> rows = all ? profile::spread(s.m, s.m) : profile::spread(s.m, 8);
  const std::vector<int64_t> cols = all ? profile::spread(s.n, s.n) : profile::spread(s.n, 8);
  VerifyResult res;
  res.how = all ? "every output" : std::to_string(rows.size()) + " rows x " +
                                       std::to_string(cols.size()) + " columns spread over D";
  const size_t ea = runtime::cublaslt_element_bytes(s.a_dtype);
  const size_t eb = runtime::cublaslt_element_bytes(s.b_dtype);
  const size_t eo = runtime::cublaslt_element_bytes(s.out_dtype);
  const runtime::Device& dev = *lt.device();
  absl::StatusOr<runtime::Buffer> da = dev.alloc(s.m * s.k * ea), db = dev.alloc(s.k * s.n * eb),
                                  dd = dev.alloc(s.m * s.n * eo);
  if (!da.ok()) return da.status();
  if (!db.ok()) return db.status();
  if (!dd.ok()) return dd.status();
  for (int d = 0; d < draws; ++d) {
    std::mt19937_64 rng(0xc0ffee + 7919 * d);
    std::vector<uint8_t> a(s.m * s.k * ea), b(s.k * s.n * eb), out(s.m * s.n * eo);
    for (size_t i = 0; i < a.size() / ea; ++i) {
      const uint32_t x = profile::draw_input_bits(s.a_dtype, rng, /*with_subnormal=*/false);
      std::memcpy(a.data() + i * ea, &x, ea);
    }
    for (size_t i = 0; i < b.size() / eb; ++i) {
      const uint32_t x = profile::draw_input_bits(s.b_dtype, rng, /*with_subnormal=*/false);
      std::memcpy(b.data() + i * eb, &x, eb);
    }
    if (auto st = da->copy_from_host(a.data(), a.size()); !st.ok()) return st;
    if (auto st = db->copy_from_host(b.data(), b.size()); !st.ok()) return st;
    absl::StatusOr<runtime::MatmulReport> r = lt.matmul(s, *da, *db, *dd);
    if (!r.ok()) return r.status();
    if (auto st = dd->copy_to_host(out.data(), out.size()); !st.ok()) return st;
    // The checked rows of A and columns of B as a small row-major problem.
    dsl::reference::GemmProblem p;
    p.m = static_cast<int64_t>(rows.size());
    p.n = static_cast<int64_t>(cols.size());
    p.k = s.k;
    auto elem = [](const std::vector<uint8_t>& v, size_t i, size_t e) {
      uint32_t x = 0;
      std::memcpy(&x, v.data() + i * e, e);
      return x;
    };
    for (int64_t i : rows)
      for (int64_t kk = 0; kk < s.k; ++kk)
        p.a.push_back(elem(a, s.a_row_major ? i * s.k + kk : kk * s.m + i, ea));
    for (int64_t kk = 0; kk < s.k; ++kk)
      for (int64_t j : cols)
        p.b.push_back(elem(b, s.b_row_major ? kk * s.n + j : j * s.k + kk, eb));
    absl::StatusOr<std::vector<uint32_t>> want = dsl::reference::gemm(desc, p);
    if (!want.ok()) return want.status();
    int misses = 0;
    for (size_t ri = 0; ri < rows.size(); ++ri) {
      for (size_t ci = 0; ci < cols.size(); ++ci) {
        const uint32_t got = elem(out, rows[ri] * s.n + cols[ci], eo);
        const uint32_t ref = (*want)[ri * cols.size() + ci];
        if (got != ref && misses++ == 0 && res.first_miss.empty()) {
          char buf[160];
          std::snprintf(buf, sizeof(buf), "draw %d D[%lld][%lld]: cuBLAS 0x%x, reference 0x%x", d,
                        static_cast<long long>(rows[ri]), static_cast<long long>(cols[ci]), got,
                        ref);
          res.first_miss = buf;
        }
      }
    }
    if (misses == 0) ++res.draws_ok;
  }
  return res;
}

// One launch of the shape's kernel(s) under CUPTI: what runtime profiling sees.
absl::StatusOr<runtime::LaunchProfile> profile_launch(profile::CublasBlackBox& box,
                                                      runtime::Device& dev) {
  dsl::reference::GemmProblem p;
  p.m = p.n = 1;
  p.k = box.shape().k;
  p.a.assign(p.k, 0);
  p.b.assign(p.k, 0);
  if (absl::Status st = box.run(p).status(); !st.ok()) return st;  // loads PitchedCopy once
  absl::StatusOr<std::unique_ptr<runtime::KernelRecorder>> rec = runtime::KernelRecorder::start();
  if (!rec.ok()) return rec.status();
  absl::Status ran = box.run(p).status();
  absl::Status synced = dev.synchronize();
  absl::StatusOr<runtime::LaunchProfile> prof = (*rec)->stop();
  if (!ran.ok()) return ran;
  if (!synced.ok()) return synced;
  if (!prof.ok()) return prof.status();
  std::vector<runtime::KernelRecord> library_kernels;
  for (runtime::KernelRecord& k : prof->kernels)
    if (k.name != "fixbits_pitched_copy") library_kernels.push_back(std::move(k));
  prof->kernels = std::move(library_kernels);
  return prof;
}

bool contains_any(const std::string& name, std::initializer_list<const char*> parts) {
  std::string lower = name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* p : parts)
    if (lower.find(p) != std::string::npos) return true;
  return false;
}

// The family the launched kernels name: a split-K GEMM or a reduce kernel after it
// -> split_k; dot/gemv kernels -> gemv; otherwise plain. nullopt without a profile.
std::optional<dsl::GemmFamily> family_from_profile(const runtime::LaunchProfile& p) {
  if (p.kernels.empty()) return std::nullopt;
  bool split = false, vec = false, dot = false;
  for (const runtime::KernelRecord& k : p.kernels) {
    split |= contains_any(k.name, {"splitk", "reduce"});
    vec |= contains_any(k.name, {"gemv"}) && !contains_any(k.name, {"dot_kernel"});
    dot |= contains_any(k.name, {"dot_kernel"});
  }
  if (dot) return dsl::GemmFamily::kDot;
  if (vec) return dsl::GemmFamily::kGemv;
  if (split) return dsl::GemmFamily::kSplitK;
  return dsl::GemmFamily::kPlain;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // a run cut short still leaves its lines
  absl::StatusOr<Args> args = parse_args(argc, argv);
  if (!args.ok()) {
    std::fprintf(stderr, "fixbits-cublas-probe: %s\n", msg(args.status()).c_str());
    return 2;
  }
  absl::StatusOr<std::shared_ptr<runtime::Device>> dev = runtime::cuda(0);
  if (!dev.ok()) {
    std::printf("skipped: no CUDA device: %s\n", msg(dev.status()).c_str());
    return 0;
  }
  absl::StatusOr<std::shared_ptr<runtime::CublasLt>> lt = runtime::CublasLt::open(*dev);
  if (!lt.ok()) {
    std::printf("skipped: %s\n", msg(lt.status()).c_str());
    return 0;
  }
  const runtime::DeviceInfo& info = (*dev)->info();
  std::printf("device %s (%s, %d SMs), cuBLASLt %zu from %s\n", info.name.c_str(),
              info.arch.c_str(), info.multiprocessor_count, (*lt)->version(),
              (*lt)->library_path().c_str());
  if (args->zero_sign > 0) {
    const std::vector<runtime::GemmShape> shapes =
        args->shapes_given ? args->shapes : samples::zero_sign_table_shapes(args->zero_sign);
    samples::print_zero_signs(*lt, shapes, stdout);
    return 0;
  }
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  int failures = 0, probed = 0, exact = 0;
  for (const runtime::GemmShape& s : args->shapes) {
    std::printf("\nshape %s\n", runtime::to_string(s).c_str());
    absl::StatusOr<runtime::MatmulReport> h = (*lt)->heuristic(s);
    if (!h.ok()) {
      std::printf("  heuristic: error: %s\n", msg(h.status()).c_str());
      ++failures;
      continue;
    }
    std::printf("  heuristic: %s workspace=%zu waves=%.3f answers=%d\n",
                runtime::to_string(h->algo).c_str(), h->workspace_bytes, h->waves_count,
                h->heuristic_answers);
    absl::StatusOr<std::shared_ptr<profile::CublasBlackBox>> box =
        profile::CublasBlackBox::create(*lt, s);
    if (!box.ok()) {
      std::printf("  black box: error: %s\n", msg(box.status()).c_str());
      ++failures;
      continue;
    }
    std::optional<dsl::GemmFamily> profiled;
    absl::StatusOr<runtime::LaunchProfile> prof = profile_launch(**box, **dev);
    if (prof.ok()) {
      std::string text = runtime::to_string(*prof);
      for (size_t at = 0; (at = text.find('\n', at)) != std::string::npos; at += 5)
        text.replace(at, 1, "\n    ");
      std::printf("  launched:\n    %s\n", text.c_str());
      profiled = family_from_profile(*prof);
    } else {
      std::printf("  launched: not profiled: %s\n", msg(prof.status()).c_str());
    }
    if (args->positions > 0) {
      const double t0 = elapsed();
      if (absl::Status st = samples::print_positions(**box, args->positions, args->positions_max_k,
                                                     stdout);
          !st.ok()) {
        std::printf("  positions: error: %s\n", msg(st).c_str());
      }
      std::printf("  positions: %.1f s\n", elapsed() - t0);
    }
    for (const std::vector<int64_t>& all : args->trees) {
      const double t0 = elapsed();
      std::vector<int64_t> leaves;  // those inside this shape's K
      for (int64_t l : all) {
        if (l < s.k) leaves.push_back(l);
      }
      const std::string name = absl::StrFormat("tree of %d leaves from %d to %d", leaves.size(),
                                               leaves.empty() ? 0 : leaves.front(),
                                               leaves.empty() ? 0 : leaves.back());
      absl::StatusOr<dsl::probe::SumTree> t =
          leaves.empty() ? absl::InvalidArgumentError("no leaf is inside K")
                         : dsl::probe::recover_sum_tree((*box)->as_black_box(), s.a_dtype, s.b_dtype,
                                                        s.out_dtype, {.k = s.k, .leaves = leaves});
      if (!t.ok()) {
        std::printf("  %s: error: %s\n", name.c_str(), msg(t.status()).c_str());
        continue;
      }
      std::printf("  %s: %lld rows in %lld calls, %.1f s\n    %s\n", name.c_str(),
                  static_cast<long long>(t->rows), static_cast<long long>(t->calls),
                  elapsed() - t0, dsl::probe::to_string(*t).c_str());
    }
    if (s.k > args->max_probe_k) {
      std::printf("  probe: skipped, K = %lld is above --max-probe-k=%lld\n",
                  static_cast<long long>(s.k), static_cast<long long>(args->max_probe_k));
      continue;
    }
    if (elapsed() > args->budget_s) {
      std::printf("  probe: skipped, the --budget-s=%.0f seconds are spent\n", args->budget_s);
      continue;
    }
    if (s.k < 2) {
      std::printf("  probe: skipped, the probe needs K >= 2\n");
      continue;
    }
    if (args->walks) {
      const dsl::probe::BatchLimits lim{.rows = std::min<int64_t>(s.m, 128),
                                        .cols = std::min<int64_t>(s.n, 128)};
      dsl::probe::Instrument inst((*box)->as_black_box(), s.a_dtype, s.b_dtype, s.out_dtype, lim);
      inst.use_sparse_box((*box)->as_sparse_black_box());
      std::vector<dsl::probe::Placement> pair, trailing;
      for (int64_t m = 1; m + 1 < s.k; ++m) pair.push_back({s.k, {{0, 'r'}, {m, '+'}, {m + 1, '-'}}});
      for (int64_t m = 0; m + 2 < s.k; ++m)
        trailing.push_back({s.k, {{m, '+'}, {m + 1, '-'}, {m + 2, 'r'}}});
      for (const auto& [name, ps, first] :
           {std::tuple{"pair walk, m from 1", &pair, 1}, std::tuple{"trailing walk, m from 0", &trailing, 0}}) {
        absl::StatusOr<std::vector<dsl::probe::Outcome>> w =
            inst.run_all(*ps, [](size_t i) { return std::to_string(i); });
        if (!w.ok()) {
          std::printf("  %s: error: %s\n", name, msg(w.status()).c_str());
          continue;
        }
        std::printf("  %s:", name);
        for (size_t i = 0; i < w->size(); ++i) {
          if (i % 64 == 0) std::printf("\n    %5zu ", i + static_cast<size_t>(first));
          const dsl::probe::Outcome o = (*w)[i];
          std::printf("%c", o == dsl::probe::Outcome::kR ? 'r' : o == dsl::probe::Outcome::kZero ? '0' : 'x');
        }
        std::printf("\n");
      }
    }
    // The family: --family, else what the profile names, else the split count; the
    // other of plain/split_k is tried when the first finds no descriptor.
    std::vector<dsl::GemmFamily> order;
    auto add = [&](dsl::GemmFamily f) {
      if (std::find(order.begin(), order.end(), f) == order.end()) order.push_back(f);
    };
    if (args->family != "auto") {
      add(*dsl::parse_family(args->family));
    } else {
      if (profiled) add(*profiled);
      add(h->algo.splitk_num > 1 ? dsl::GemmFamily::kSplitK : dsl::GemmFamily::kPlain);
      add(dsl::GemmFamily::kPlain);
      add(dsl::GemmFamily::kSplitK);
    }
    absl::StatusOr<dsl::GemmDesc> desc = absl::NotFoundError("no family was tried");
    // One instrument for every search (its memo shares the walks), batched as the
    // scan's (--probe-batch=128 kept inside the shape). f16/bf16 matrix families are
    // searched with 16 products per instruction and then as mma.sync m16n8k8.
    dsl::probe::Instrument inst((*box)->as_black_box(), s.a_dtype, s.b_dtype, s.out_dtype,
                                {.rows = std::min<int64_t>(s.m, 128),
                                 .cols = std::min<int64_t>(s.n, 128)});
    inst.use_sparse_box((*box)->as_sparse_black_box());
    for (dsl::GemmFamily f : order) {
      for (int ik : dsl::probe::searched_instruction_ks(s.a_dtype, f)) {
        const double t0 = elapsed();
        const int64_t c0 = (*box)->calls();
        dsl::probe::ProbeOptions o;
        o.a_dtype = s.a_dtype;
        o.b_dtype = s.b_dtype;
        o.out_dtype = s.out_dtype;
        o.family = f;
        o.matrix_instruction = info.cc_major >= 9 && ik == 0 ? dsl::Instruction::kWgmma
                                                             : dsl::Instruction::kMmaSync;
        o.instruction_k = ik;
        o.k = s.k;
        o.blocks = f == dsl::GemmFamily::kDot ? std::max<int64_t>(1, h->algo.splitk_num) : 0;
        desc = dsl::probe::recover_gemm_desc(inst, o);
        std::printf("  probe as %s%s: %s (%lld calls, %.1f s)\n", dsl::family_name(f).c_str(),
                    ik == 8 ? " (mma.sync k8)" : "",
                    desc.ok() ? "recovered" : msg(desc.status()).substr(0, 300).c_str(),
                    static_cast<long long>((*box)->calls() - c0), elapsed() - t0);
        if (desc.ok()) break;
      }
      if (desc.ok()) break;
    }
    ++probed;
    if (!desc.ok()) {
      ++failures;
      continue;
    }
    std::printf("  recovered: %s\n", dsl::to_string(*desc).c_str());
    if (args->draws == 0) continue;
    const double t0 = elapsed();
    absl::StatusOr<VerifyResult> v = verify(**lt, s, *desc, args->draws);
    if (!v.ok()) {
      std::printf("  verify: error: %s\n", msg(v.status()).c_str());
      ++failures;
      continue;
    }
    const bool ok = v->draws_ok == args->draws;
    exact += ok;
    failures += !ok;
    std::printf("  verify: %d/%d full-shape draws bit-identical at %s (%.1f s)%s%s\n",
                v->draws_ok, args->draws, v->how.c_str(), elapsed() - t0,
                v->first_miss.empty() ? "" : "; first miss: ", v->first_miss.c_str());
  }
  std::printf("\nsummary: %zu shapes, %d probed, %d reproduced bit for bit, %d failures, %.1f s\n",
              args->shapes.size(), probed, exact, failures, elapsed());
  return failures == 0 ? 0 : 1;
}
