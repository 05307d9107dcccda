// fixbits-cublas-match: the cuBLAS bit-match experiment (reference §7.2). Random
// shapes are drawn per dtype family; each runs through cuBLASLt and through the kernel
// fixbits generates for the arch profile's descriptor on the same random inputs, and
// the outputs are compared byte for byte (profile/match/CublasMatch.h). It prints the
// bit-match rate per (dtype family, descriptor family), how often the table's map gave
// the variant and split count cuBLASLt really used, and the first mismatches with their
// descriptors. Each shape is judged twice when the two differ: with the descriptor
// the table's map gives (profile::cublas_map) and with the one of cuBLASLt's own answer
// for the shape (profile::cublas, the columns after '|'), so a map miss and a wrong
// class descriptor are told apart.
// Shapes where cuBLAS drops the tail of the sum (its own defect) are counted apart.
// Without a GPU or cuBLASLt, or while the embedded table holds no scan (and no --table
// is given), it says why and exits 0; exit 1 when a shape's descriptor of cuBLASLt's
// own answer (profile::cublas(), the answer path) differs or a run fails, 2 on bad
// arguments (the map path, cublas_map(), is reported, not judged).
//
// Usage: fixbits-cublas-match [--table=PATH] [--shapes=N] [--fp8-shapes=N] [--seed=S]
//          [--max-dim=N] [--max-k=N] [--max-elems=N] [--compile-budget-s=T]
//          [--show=N] [--budget-s=T] [--dtypes=f16,bf16,f8e4m3] [--skip=N]
//          [--draws=N] [--jobs=N] [--slice=J/N] [--tally-out=PATH]
//          [--differing-classes-out=PATH] [--differing-shapes-out=PATH]
//          [--no-desc-shapes-out=PATH]
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
//   --draws=N (default 2): each shape is judged on N independent input draws; it counts
//   as identical only when every draw is (the first one that is not is the verdict).
//   --jobs=N: N processes (this program again, each with --slice=j/N and --tally-out)
//   judge the shapes together, one GPU shared; their counts are added and printed as
//   one run. A shape costs about 40 ms of CPU (its inputs and the kernel's compile), so
//   one process takes most of a device call for a few thousand shapes; with --jobs=14
//   the default match (21,000 shapes, two draws) took 84 s on the H200 (16 cores).
//   --slice=j/N: judge only the j-th of N equal runs of each dtype's shapes (0 <= j < N);
//   --tally-out=PATH: write the counts there (MatchTally.h's text) instead of printing
//   the tables.
//   --differing-classes-out=PATH: after the tables, write the table classes of the
//   answers with a differing shape there, comma-separated ("" when none), so that the
//   same device call can revalidate them: fixbits-cublas-scan --classes=$(cat PATH).
//   --differing-shapes-out=PATH: the first differing shape of each such answer, as
//   fixbits-cublas-scan --probe-at=$(cat PATH) takes them (comma-separated, "" when none),
//   so the next scan probes each class where it differed.
//   --no-desc-shapes-out=PATH: the same for the answers without a descriptor (the
//   first such shape of each, most shapes first), so a scan can probe those classes
//   at a shape the match drew.
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
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "samples/common/DtypesFlag.h"
#include "samples/common/CublasSession.h"
#include "samples/common/FlagArg.h"
#include "samples/common/SelfJobs.h"
#include "absl/strings/str_split.h"
#include "profile/CublasProfile.h"
#include "profile/MatchDraws.h"
#include "profile/match/CublasMatch.h"
#include "runtime/Runtime.h"
#include "profile/match/MatchTally.h"

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
  int64_t draws = 2;            // input draws per shape
  int64_t jobs = 1;             // processes
  int64_t slice = 0, slices = 1;  // this process's run of each dtype's shapes
  std::string tally_out;        // counts go here instead of the tables
  std::string classes_out;      // --differing-classes-out
  std::string shapes_out;       // --differing-shapes-out
  std::string no_desc_out;      // --no-desc-shapes-out
  std::vector<std::string> passed;  // the arguments a job gets again
};

// One comma-separated line to `path` (nothing when path is empty); `flag` names it in
// the error.
bool write_list(const std::vector<std::string>& items, const std::string& path, const char* flag) {
  if (path.empty()) return true;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << absl::StrJoin(items, ",") << "\n";
  if (out.flush()) return true;
  std::fprintf(stderr, "fixbits-cublas-match: cannot write %s=%s\n", flag, path.c_str());
  return false;
}

// --differing-classes-out: the classes of the answers that differed; --differing-shapes-out:
// a differing shape of each, as --probe-at takes it; --no-desc-shapes-out: an undescribed
// shape of each answer without a descriptor, likewise.
bool write_differing(const profile::MatchTallies& t, const Args& a) {
  std::vector<std::string> ids;
  for (int c : t.differing_classes()) ids.push_back(std::to_string(c));
  const bool classes = write_list(ids, a.classes_out, "--differing-classes-out");
  const bool shapes = write_list(t.differing_shapes(), a.shapes_out, "--differing-shapes-out");
  return write_list(t.no_desc_shapes(), a.no_desc_out, "--no-desc-shapes-out") && shapes &&
         classes;
}

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
    const bool for_jobs = !arg.starts_with("--jobs=") && !arg.starts_with("--slice=") &&
                          !arg.starts_with("--tally-out=") &&
                          !arg.starts_with("--differing-classes-out=") &&
                          !arg.starts_with("--differing-shapes-out=") &&
                          !arg.starts_with("--no-desc-shapes-out=");
    if (for_jobs) a.passed.push_back(arg);
    if (auto v = value("--table=")) {
      a.table_path = *v;
    } else if (value("--shapes=")) {
      st = int_flag("--shapes=", 0, &a.shapes);
    } else if (value("--draws=")) {
      st = int_flag("--draws=", 1, &a.draws);
    } else if (value("--jobs=")) {
      st = int_flag("--jobs=", 1, &a.jobs);
      if (st.ok() && a.jobs > 64) return absl::InvalidArgumentError("--jobs takes 1 to 64 processes.");
    } else if (auto v = value("--slice=")) {
      const std::vector<std::string> jn = absl::StrSplit(*v, '/');
      if (jn.size() != 2 || !absl::SimpleAtoi(jn[0], &a.slice) || !absl::SimpleAtoi(jn[1], &a.slices) ||
          a.slices < 1 || a.slice < 0 || a.slice >= a.slices) {
        return absl::InvalidArgumentError("--slice takes J/N with 0 <= J < N.");
      }
    } else if (auto v = value("--tally-out=")) {
      a.tally_out = *v;
    } else if (auto v = value("--differing-classes-out=")) {
      a.classes_out = *v;
    } else if (auto v = value("--differing-shapes-out=")) {
      a.shapes_out = *v;
    } else if (auto v = value("--no-desc-shapes-out=")) {
      a.no_desc_out = *v;
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

// --jobs=N: this program N times, each with --slice=j/N and its own --tally-out, at
// once; their counts are added and printed as one run. Exit as one run would: 2 when a
// job rejects the arguments, 1 when a job failed or a shape differs, 0 otherwise (also
// when every job skipped for want of a device, as one run does).
int run_jobs(const Args& args, const char* self) {
  char dir_template[] = "/tmp/fixbits-match-XXXXXX";
  const char* dir = mkdtemp(dir_template);
  if (dir == nullptr) {
    std::fprintf(stderr, "fixbits-cublas-match: --jobs: cannot make a directory under /tmp\n");
    return 1;
  }
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> outs;
  std::vector<samples::SelfJob> jobs;
  for (int64_t j = 0; j < args.jobs; ++j) {
    outs.push_back(absl::StrFormat("%s/job%d.tsv", dir, j));
    samples::SelfJob job{.args = args.passed, .log = ""};
    job.args.push_back(absl::StrFormat("--slice=%d/%d", j, args.jobs));
    job.args.push_back("--tally-out=" + outs.back());
    jobs.push_back(std::move(job));
  }
  const std::vector<int> codes = samples::run_self_jobs(self, "fixbits-cublas-match", jobs);
  int worst = 0;
  for (int code : codes) worst = std::max(worst, code);
  if (worst == 2) return 2;
  profile::MatchTallies total;
  int reported = 0;
  for (size_t j = 0; j < outs.size(); ++j) {
    std::ifstream in(outs[j], std::ios::binary);
    if (!in) continue;  // the job skipped (it said why) or failed
    std::stringstream text;
    text << in.rdbuf();
    absl::StatusOr<profile::MatchTallies> t = profile::parse_tallies(text.str());
    std::remove(outs[j].c_str());
    if (!t.ok()) {
      std::fprintf(stderr, "fixbits-cublas-match: job %zu: %s\n", j,
                   std::string(t.status().message()).c_str());
      worst = std::max(worst, 1);
      continue;
    }
    total.merge(*t);
    ++reported;
  }
  rmdir(dir);
  if (reported == 0) return worst;  // every job skipped (or failed) and said why
  if (reported < static_cast<int>(codes.size())) {
    std::printf("note: %d of %zu jobs reported counts; the tables below hold theirs only\n",
                reported, codes.size());
    worst = std::max(worst, 1);
  }
  total.print(args.show);
  if (!write_differing(total, args)) worst = std::max(worst, 1);
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("\nsummary (%lld jobs): %lld kernels compiled in %.1f s (all jobs), %lld differ "
              "(cuBLASLt's answer; the map: %lld), %lld errors, %.1f s\n",
              static_cast<long long>(args.jobs), static_cast<long long>(total.compiled),
              total.compile_s, static_cast<long long>(total.differ()),
              static_cast<long long>(total.map_differ()), static_cast<long long>(total.failures),
              elapsed);
  return total.differ() == 0 && total.failures == 0 && worst == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  absl::StatusOr<Args> args = parse_args(argc, argv);
  if (!args.ok()) {
    std::fprintf(stderr, "fixbits-cublas-match: %s\n", std::string(args.status().message()).c_str());
    return 2;
  }
  if (args->jobs > 1) return run_jobs(*args, argv[0]);
  profile::CublasTable file_table;
  const profile::CublasTable* table = nullptr;
  if (!args->table_path.empty()) {
    absl::StatusOr<profile::CublasTable> t = samples::read_table_file(args->table_path);
    if (!t.ok()) {
      std::fprintf(stderr, "fixbits-cublas-match: cannot use --table=%s: %s\n",
                   args->table_path.c_str(), std::string(t.status().message()).c_str());
      return 2;
    }
    file_table = *std::move(t);
    table = &file_table;
  }
  std::optional<samples::CublasSession> cu = samples::open_cublas_or_skip();
  if (!cu) return 0;
  if (table == nullptr) {
    absl::StatusOr<const profile::CublasTable*> t = profile::cublas_table(profile::sm90);
    if (!t.ok()) {
      // The committed table is still the placeholder: nothing to match against yet.
      std::printf("skipped: %s\n", std::string(t.status().message()).c_str());
      return t.status().code() == absl::StatusCode::kFailedPrecondition ? 0 : 1;
    }
    table = *t;
  }
  const runtime::DeviceInfo& info = cu->dev->info();
  std::printf("device %s (%s), cuBLASLt %zu; table for %s from cuBLASLt %s (%zu classes, %zu "
              "variants)\n",
              info.name.c_str(), info.arch.c_str(), cu->lt->version(), table->arch.c_str(),
              table->library.c_str(), table->classes.size(), table->variants.size());
  if (table->arch != info.arch || table->library != std::to_string(cu->lt->version())) {
    std::printf("note: the table was made on %s with cuBLASLt %s; this run differs\n",
                table->arch.c_str(), table->library.c_str());
  }
  profile::MatchOptions match_options;
  match_options.compile_budget_s = args->compile_budget_s;
  profile::CublasMatcher matcher(cu->dev, cu->lt, table, match_options);
  profile::MatchTallies tallies;
  int64_t shown = 0;
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
      // This process's run of the dtype's shapes (--slice).
      if (i * args->slices / std::max<int64_t>(count, 1) != args->slice) continue;
      // Every draw, until one is not identical on either path: that one is the verdict.
      absl::StatusOr<profile::MatchResult> r;
      for (int64_t d = 0; d < args->draws; ++d) {
        r = matcher.match(s, d == 0 ? input_seed : profile::draw_seed(input_seed, d));
        if (!r.ok() || r->verdict != profile::Verdict::kIdentical ||
            r->answer_verdict != profile::Verdict::kIdentical) {
          break;
        }
      }
      if (!r.ok()) {
        ++tallies.failures;
        std::printf("error at %s: %s\n", runtime::to_string(s).c_str(),
                    std::string(r.status().message()).c_str());
        continue;
      }
      tallies.add(profile::family_of(s), runtime::to_string(s), *r);
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
      if (args->tally_out.empty() && ((i + 1) % 200 == 0 || i + 1 == count)) {
        std::fprintf(stderr, "\r[match %s] %lld/%lld shapes, %d kernels compiled, %.1f s   ",
                     std::string(dtype_name(t)).c_str(), static_cast<long long>(i + 1),
                     static_cast<long long>(count), matcher.compiled(), elapsed());
      }
    }
    if (args->tally_out.empty()) std::fprintf(stderr, "\n");
  }
  tallies.compiled = matcher.compiled();
  tallies.compile_s = matcher.compile_seconds();
  if (!args->tally_out.empty()) {
    std::ofstream out(args->tally_out, std::ios::binary | std::ios::trunc);
    out << tallies.to_text();
    if (!out.flush()) {
      std::fprintf(stderr, "fixbits-cublas-match: cannot write --tally-out=%s\n", args->tally_out.c_str());
      return 1;
    }
    return 0;
  }
  tallies.print(args->show);
  const bool classes_written = write_differing(tallies, *args);
  std::printf("\nsummary: %lld kernels compiled in %.1f s, %lld differ (cuBLASLt's answer; the "
              "map: %lld), %lld errors, %.1f s\n",
              static_cast<long long>(tallies.compiled), tallies.compile_s,
              static_cast<long long>(tallies.differ()), static_cast<long long>(tallies.map_differ()),
              static_cast<long long>(tallies.failures), elapsed());
  return tallies.differ() == 0 && tallies.failures == 0 && classes_written ? 0 : 1;
}
