// fixbits-cublas-match: the cuBLAS bit-match experiment (reference §7.2). Random
// shapes are drawn per dtype family; each runs through cuBLASLt and through the kernel
// fixbits generates for profile::cublas()'s descriptor on the same random inputs, and
// the outputs are compared byte for byte (profile/match/CublasMatch.h). It prints the
// bit-match rate per (dtype family, descriptor family), how often the table's map gave
// the variant and split count cuBLASLt really used, and the first mismatches with their
// descriptors. Each shape is judged twice when the two differ: with the descriptor
// the table's map gives (profile::cublas) and with the one of cuBLASLt's own answer for
// the shape (profile::cublas_answer, the columns after '|'), so a map miss and a wrong
// class descriptor are told apart.
// Shapes where cuBLAS drops the tail of the sum (its own defect) are counted apart.
// Without a GPU or cuBLASLt, or while the embedded table holds no scan (and no --table
// is given), it says why and exits 0; exit 1 when a compared shape
// differs (or a run fails), 2 on bad arguments.
//
// Usage: fixbits-cublas-match [--table=PATH] [--shapes=N] [--fp8-shapes=N] [--seed=S]
//          [--max-dim=N] [--max-k=N] [--max-elems=N] [--compile-budget-s=T]
//          [--show=N] [--budget-s=T] [--dtypes=f16,bf16,f8e4m3] [--skip=N]
//   --table: a table written by fixbits-cublas-scan (default: the embedded sm_90 table).
//   Defaults: 10000 shapes each for f16 and bf16, 1000 for f8e4m3; M, N log-uniform
//   in [1, 16384], K log-uniform in [1, 2^19] (fp8: multiples of 16), redrawn until
//   M*K + K*N + M*N <= 2^22 elements; seed 1; compile budget 120 s (kernels past it
//   take the reference path); 10 mismatches shown; --budget-s=540 (no new shape after
//   it, the tallies so far are printed). fp8 rounds K and N up to 16s.
//   --skip=N: the first N shapes of each dtype are drawn (the sequence stays the same)
//   but not matched, so one match of 10,000 shapes can run as slices over several
//   device calls, one dtype at a time (a dtype's draws follow those of the dtypes before
//   it): --dtypes=f16 --shapes=3000, then --dtypes=f16 --skip=3000 --shapes=6000, ...
//   (a slice's "budget" line says where it stopped; the next slice skips to there).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "samples/common/DtypesFlag.h"
#include "samples/common/FlagArg.h"
#include "absl/strings/str_split.h"
#include "profile/CublasProfile.h"
#include "profile/MatchDraws.h"
#include "profile/match/CublasMatch.h"
#include "runtime/Runtime.h"

using namespace fixbits;

namespace {

struct Args {
  std::string table_path;
  int64_t shapes = 10000, fp8_shapes = 1000;
  uint64_t seed = 1;
  int64_t max_dim = 16384, max_k = int64_t{1} << 19, max_elems = int64_t{1} << 22;
  double compile_budget_s = 120;
  double budget_s = 540;  // no new shape after this (one device call is 600 s at most)
  int64_t skip = 0;       // shapes of each dtype drawn but not matched
  int64_t show = 10;
  std::vector<DType> dtypes = {DType::kF16, DType::kBF16, DType::kF8E4M3};
};

absl::StatusOr<Args> parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const samples::FlagArg flag_arg(argv[i]);
    const std::string& arg = flag_arg.text();
    auto value = [&](const std::string& flag) { return flag_arg.value(flag); };
    auto int_flag = [&](const std::string& flag, int64_t lo, int64_t* out) {
      return flag_arg.int_value(flag, lo, out);
    };
    absl::Status st;
    if (auto v = value("--table=")) {
      a.table_path = *v;
    } else if (value("--shapes=")) {
      st = int_flag("--shapes=", 0, &a.shapes);
    } else if (value("--skip=")) {
      st = int_flag("--skip=", 0, &a.skip);
    } else if (value("--fp8-shapes=")) {
      st = int_flag("--fp8-shapes=", 0, &a.fp8_shapes);
    } else if (auto v = value("--seed=")) {
      if (!absl::SimpleAtoi(*v, &a.seed)) return absl::InvalidArgumentError("--seed takes an integer.");
    } else if (value("--max-dim=")) {
      st = int_flag("--max-dim=", 1, &a.max_dim);
    } else if (value("--max-k=")) {
      st = int_flag("--max-k=", 16, &a.max_k);
    } else if (value("--max-elems=")) {
      st = int_flag("--max-elems=", 3, &a.max_elems);
    } else if (value("--show=")) {
      st = int_flag("--show=", 0, &a.show);
    } else if (auto v = value("--compile-budget-s=")) {
      if (!absl::SimpleAtod(*v, &a.compile_budget_s) || a.compile_budget_s < 0) {
        return absl::InvalidArgumentError("--compile-budget-s takes a number of seconds >= 0.");
      }
    } else if (auto v = value("--budget-s=")) {
      if (!absl::SimpleAtod(*v, &a.budget_s) || a.budget_s <= 0) {
        return absl::InvalidArgumentError("--budget-s takes a number of seconds > 0.");
      }
    } else if (auto v = value("--dtypes=")) {
      absl::StatusOr<std::vector<DType>> dtypes = samples::parse_dtypes_flag(*v);
      if (!dtypes.ok()) return dtypes.status();
      a.dtypes = *std::move(dtypes);
    } else {
      return absl::InvalidArgumentError("Unknown argument '" + arg +
                                        "'; see the usage at the top of main.cpp.");
    }
    if (!st.ok()) return st;
  }
  return a;
}

struct Tally {
  int64_t shapes = 0, identical = 0, differ = 0, tail_dropped = 0, no_desc = 0, refused = 0;
  int64_t map_hits = 0, kernel = 0, reference = 0;
  // Differing shapes whose map entry was cuBLASLt's own variant: a wrong descriptor (or
  // class), not a map that is too coarse between its grid lines.
  int64_t differ_at_hit = 0;
  // The descriptor of cuBLASLt's own answer (lookup_answer): what the table's classes
  // give with no map in the way.
  int64_t ans_identical = 0, ans_differ = 0, ans_no_desc = 0;
};

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  absl::StatusOr<Args> args = parse_args(argc, argv);
  if (!args.ok()) {
    std::fprintf(stderr, "fixbits-cublas-match: %s\n", std::string(args.status().message()).c_str());
    return 2;
  }
  profile::CublasTable file_table;
  const profile::CublasTable* table = nullptr;
  if (!args->table_path.empty()) {
    std::ifstream in(args->table_path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    absl::StatusOr<profile::CublasTable> t = profile::parse_table(text.str());
    if (!in || !t.ok()) {
      std::fprintf(stderr, "fixbits-cublas-match: cannot use --table=%s: %s\n",
                   args->table_path.c_str(),
                   in ? std::string(t.status().message()).c_str() : "the file cannot be read");
      return 2;
    }
    file_table = *std::move(t);
    table = &file_table;
  }
  absl::StatusOr<std::shared_ptr<runtime::Device>> dev = runtime::cuda(0);
  if (!dev.ok()) {
    std::printf("skipped: no CUDA device: %s\n", std::string(dev.status().message()).c_str());
    return 0;
  }
  absl::StatusOr<std::shared_ptr<runtime::CublasLt>> lt = runtime::CublasLt::open(*dev);
  if (!lt.ok()) {
    std::printf("skipped: %s\n", std::string(lt.status().message()).c_str());
    return 0;
  }
  if (table == nullptr) {
    absl::StatusOr<const profile::CublasTable*> t = profile::cublas_table(profile::sm90);
    if (!t.ok()) {
      // The committed table is still the placeholder: nothing to match against yet.
      std::printf("skipped: %s\n", std::string(t.status().message()).c_str());
      return t.status().code() == absl::StatusCode::kFailedPrecondition ? 0 : 1;
    }
    table = *t;
  }
  const runtime::DeviceInfo& info = (*dev)->info();
  std::printf("device %s (%s), cuBLASLt %zu; table for %s from cuBLASLt %s (%zu classes, %zu "
              "variants)\n",
              info.name.c_str(), info.arch.c_str(), (*lt)->version(), table->arch.c_str(),
              table->library.c_str(), table->classes.size(), table->variants.size());
  if (table->arch != info.arch || table->library != std::to_string((*lt)->version())) {
    std::printf("note: the table was made on %s with cuBLASLt %s; this run differs\n",
                table->arch.c_str(), table->library.c_str());
  }
  profile::MatchOptions match_options;
  match_options.compile_budget_s = args->compile_budget_s;
  profile::CublasMatcher matcher(*dev, *lt, table, match_options);
  std::map<std::string, Tally> tallies;
  std::map<std::string, Tally> by_dtype;
  int64_t shown = 0, failures = 0;
  // Per cuBLASLt answer (algo), the answer path's compared and differing shapes.
  struct AlgoTally {
    int64_t compared = 0, differ = 0;
    std::string example;  // the first differing shape and its detail
  };
  std::map<std::string, AlgoTally> by_algo;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  std::mt19937_64 rng(args->seed);
  for (DType t : args->dtypes) {
    const int64_t count = dtype_is_fp8(t) ? args->fp8_shapes : args->shapes;
    for (int64_t i = 0; i < count; ++i) {
      if (elapsed() > args->budget_s) {
        std::printf("budget: --budget-s=%.0f spent after %lld of %lld %s shapes\n",
                    args->budget_s, static_cast<long long>(i), static_cast<long long>(count),
                    std::string(dtype_name(t)).c_str());
        break;
      }
      const runtime::GemmShape s = profile::draw_match_shape(
          rng, t, {.max_dim = args->max_dim, .max_k = args->max_k, .max_elems = args->max_elems});
      const uint64_t input_seed = rng();
      if (i < args->skip) continue;  // an earlier slice's shape
      absl::StatusOr<profile::MatchResult> r = matcher.match(s, input_seed);
      if (!r.ok()) {
        ++failures;
        std::printf("error at %s: %s\n", runtime::to_string(s).c_str(),
                    std::string(r.status().message()).c_str());
        continue;
      }
      for (Tally* tl : {&tallies[r->family], &by_dtype[profile::family_of(s)]}) {
        ++tl->shapes;
        tl->identical += r->verdict == profile::Verdict::kIdentical;
        tl->differ += r->verdict == profile::Verdict::kDiffer;
        tl->tail_dropped += r->verdict == profile::Verdict::kTailDropped;
        tl->no_desc += r->verdict == profile::Verdict::kNoDesc;
        tl->refused += r->verdict == profile::Verdict::kRefused;
        tl->map_hits += r->map_hit;
        tl->differ_at_hit += r->verdict == profile::Verdict::kDiffer && r->map_hit;
        tl->kernel += r->path == "kernel";
        tl->reference += r->path == "reference";
        tl->ans_identical += r->answer_verdict == profile::Verdict::kIdentical;
        tl->ans_differ += r->answer_verdict == profile::Verdict::kDiffer;
        tl->ans_no_desc += r->answer_verdict == profile::Verdict::kNoDesc;
      }
      if (r->answer_verdict == profile::Verdict::kIdentical ||
          r->answer_verdict == profile::Verdict::kDiffer) {
        AlgoTally& at = by_algo[profile::family_of(s) + " " + r->answer_algo];
        ++at.compared;
        if (r->answer_verdict == profile::Verdict::kDiffer) {
          if (at.differ++ == 0) at.example = runtime::to_string(s) + ": " + r->answer_detail;
        }
      }
      if (r->verdict != profile::Verdict::kIdentical && shown < args->show) {
        ++shown;
        std::printf("%s %s (map %s): %s\n", runtime::to_string(s).c_str(),
                    profile::verdict_name(r->verdict), r->map_hit ? "hit" : "miss",
                    r->detail.c_str());
        if (r->answer_verdict != r->verdict) {
          std::printf("    with cuBLASLt's own answer: %s: %s\n",
                      profile::verdict_name(r->answer_verdict), r->answer_detail.c_str());
        }
      }
      if ((i + 1) % 200 == 0 || i + 1 == count) {
        std::fprintf(stderr, "\r[match %s] %lld/%lld shapes, %d kernels compiled, %.1f s   ",
                     std::string(dtype_name(t)).c_str(), static_cast<long long>(i + 1),
                     static_cast<long long>(count), matcher.compiled(), elapsed());
      }
    }
    std::fprintf(stderr, "\n");
  }
  auto print = [](const std::string& name, const Tally& t) {
    const int64_t compared = t.identical + t.differ;
    const int64_t ans_compared = t.ans_identical + t.ans_differ;
    std::printf("%-28s %7lld %9lld %9lld %7lld %10lld %6lld %8lld %8lld %8.2f%% %7lld %7lld "
                "| %8lld %7lld %7lld %8.2f%%\n",
                name.c_str(), static_cast<long long>(t.shapes), static_cast<long long>(compared),
                static_cast<long long>(t.identical), static_cast<long long>(t.differ),
                static_cast<long long>(t.differ_at_hit), static_cast<long long>(t.tail_dropped), static_cast<long long>(t.no_desc),
                static_cast<long long>(t.refused),
                compared ? 100.0 * static_cast<double>(t.identical) / static_cast<double>(compared)
                         : 0.0,
                static_cast<long long>(t.map_hits), static_cast<long long>(t.kernel),
                static_cast<long long>(ans_compared), static_cast<long long>(t.ans_differ),
                static_cast<long long>(t.ans_no_desc),
                ans_compared ? 100.0 * static_cast<double>(t.ans_identical) /
                                   static_cast<double>(ans_compared)
                             : 0.0);
  };
  // Left of '|': the table's map picks the class (what profile::cublas does). Right:
  // cuBLASLt's own answer picks it (profile::cublas_answer): compared, differ, no_desc,
  // match.
  std::printf("\n%-28s %7s %9s %9s %7s %10s %6s %8s %8s %9s %7s %7s | %8s %7s %7s %9s\n",
              "family", "shapes", "compared", "identical", "differ", "differ@hit", "tail",
              "no_desc", "refused", "match", "map_hit", "kernel", "ans_cmp", "ans_dif",
              "ans_nod", "ans_match");
  int64_t differ = 0;
  for (const auto& [name, t] : tallies) print(name, t);
  std::printf("\n");
  for (const auto& [name, t] : by_dtype) {
    print(name + " (all)", t);
    differ += t.differ;
  }
  // The answers whose descriptor gave other bits, most differences first.
  std::vector<std::pair<std::string, AlgoTally>> wrong;
  for (const auto& [algo, t] : by_algo)
    if (t.differ > 0) wrong.push_back({algo, t});
  std::sort(wrong.begin(), wrong.end(),
            [](const auto& x, const auto& y) { return x.second.differ > y.second.differ; });
  if (!wrong.empty()) std::printf("\nanswers whose descriptor differs (differ/compared, first shape):\n");
  for (size_t i = 0; i < wrong.size() && i < static_cast<size_t>(args->show); ++i) {
    std::printf("  %lld/%lld %s\n      %s\n", static_cast<long long>(wrong[i].second.differ),
                static_cast<long long>(wrong[i].second.compared), wrong[i].first.c_str(),
                wrong[i].second.example.substr(0, 400).c_str());
  }
  std::printf("\nsummary: %d kernels compiled in %.1f s, %lld differ, %lld errors, %.1f s\n",
              matcher.compiled(), matcher.compile_seconds(), static_cast<long long>(differ),
              static_cast<long long>(failures), elapsed());
  return differ == 0 && failures == 0 ? 0 : 1;
}
