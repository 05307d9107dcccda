// fixbits-cublas-scan: writes the arch profile of the cuBLASLt on this machine
// (reference §4, "how the points become a function"; profile/CublasScan.h):
//   1. for each dtype family, asks cuBLASLt's heuristic (no launch) for every shape of
//      a log-spaced (M, N, K) grid (M = 1, N = 1, odd sizes, K up to 2^19), finds the
//      K boundaries between grid points by bisection, and reduces each answer to its
//      variant and split count (profile/CublasKey.h); each variant joins its coarse
//      class (profile/CublasClass.h: algorithm id, split or not, reduction scheme,
//      inner shape, custom option; tile and stages too for ids 13, 23 and 24);
//   2. probes each class at a few shapes through profile::CublasBlackBox and
//      dsl::probe (--class-probes, or 1 + --fit-probes for split classes, at variants
//      that differ in tile/stages/cluster and at different K / split count), fits the
//      split span rule, and splits a class whose probes disagree; most-used classes
//      first, until --probe-budget-s is spent (with --resume counted from the program's
//      start, the table's load included: a run then takes at most the budget plus one
//      --probe-timeout-s plus the merge of --jobs);
//   3. writes the table (profile/CublasTable.h) to --out; commit it gzip'ed as
//      profile/data/cublas_sm90.tsv.gz (gzip -9 -c out.tsv > ...) so profile::cublas()
//      embeds it.
// With --resume=PATH step 1 is skipped: the table at PATH is re-keyed with today's
// class key (profile::rekey_table), the probe chooser's shapes are rebuilt from its map
// (profile::rebuild_shapes), and only its classes without a descriptor are probed
// (of the --dtypes families), so the device time goes to probes.
// Progress goes to stderr, the summary to stdout. Without a GPU or cuBLASLt it says
// why and exits 0; exit 1 when the scan fails, 2 on bad arguments.
//
// Usage: fixbits-cublas-scan [--out=PATH] [--append=PATH | --resume=PATH]
//          [--dtypes=f16,bf16,f8e4m3]
//          [--per-octave=N] [--refine=P]
//          [--max-mn=N] [--max-k=N] [--min-probe-k=N] [--max-probe-k=N]
//          [--probe-budget-s=T] [--class-probes=N] [--fit-probes=N] [--no-probe]
//          [--revalidate=N] [--small-probe-k=K] [--max-probe-mnk=W] [--probe-timeout-s=T]
//          [--probe-batch=B] [--probe-queue=Q] [--retry-failed] [--rank-shapes=N] [--no-separate-validated]
//          [--classes=I,J,...] [--probe-at=S,S,...] [--jobs=N] [--forget=I,J,...]
//          [--find-points] [--widen-mn=N]
//        fixbits-cublas-scan --resume=BASE --merge=A,B,... --out=PATH
//        fixbits-cublas-scan --resume=PATH --plan [probe options]
//   --refine: before the scan, bisect M and N between grid lines whose answers differ,
//   at up to P (N, K) / (M, K) points per gap, and add the boundaries as grid lines
//   (profile::refine_grid); 0 turns it off.
//   --append: extend a table written earlier on this device (one family per device
//   call when a whole scan does not fit in one); its families must not be rescanned.
//   --resume: probe on in a table written earlier on this device (same arch and
//   cuBLASLt check as --append), with no heuristic pass; --dtypes then picks the
//   families whose classes are probed, and --per-octave must be the one the table was
//   scanned with (its K grid is not stored; the default 2 is the scan's default).
//   --revalidate: classes that have a descriptor from fewer than N probes are probed
//   again up to N (their earlier probes are checked with the new ones; a disagreement
//   splits the class or leaves it without a descriptor). 0 (default): off.
//   --small-probe-k: after a class's probes at K >= --min-probe-k, prefer its next
//   probe at a K in [small, --min-probe-k), where short-K kernel paths show. 0: off.
//   --max-probe-mnk: points whose M*N*K exceeds W (default 2^31) are probed only when a
//   class has no other (each probe experiment runs the full shape).
//   --probe-timeout-s: one probe's black box stops answering, and its CPU candidate
//   search stops, after T seconds (default 60; 0: no limit); the point is then dropped
//   as an instrument failure, the class ends for this run, and a later --resume probes
//   it after every other class.
//   --retry-failed: probe again the classes of a resumed table whose earlier probe found
//   no descriptor (by default they are concluded and skipped).
//   --probe-batch: one cuBLAS launch answers up to B x B of a probe's placements, inside
//   the shape (rows <= M, columns <= N; dsl/probe/Experiments.h, batching). Default
//   128; 1 runs one launch per placement.
//   --probe-queue: the launches of up to Q such batches are queued before any output is
//   read back (CublasBlackBox::run_sparse_batch: two synchronous copies per Q launches,
//   not per launch; the black-box calls a probe reports then count queues). Default 64;
//   1 reads each launch's output before the next.
//   --rank-shapes: classes are probed in the order of how many of fixbits-cublas-match's
//   default draws (seed 1: N shapes per f16/bf16 family, N/10 fp8) land in them, then
//   by scanned shapes (default 10000; 0: scanned shapes only). Every probe point is
//   first checked against cuBLASLt's heuristic (ProbeOptions::heuristic), so the
//   separating probe may take K values between the grid's.
//   --no-separate-validated: a validated class is not revalidated just because its
//   probes leave a separating point (by default it is, for up to three probes).
//   --classes=I,J,...: visit only these classes of the (resumed) table, revalidating
//   each one that has a descriptor (the classes a match found differing:
//   fixbits-cublas-match --differing-classes-out). An empty list visits none.
//   --forget=I,J,... (with --resume, without --jobs): these classes of the resumed table
//   lose their descriptor, probes and rules before probing, so they are probed again
//   from nothing (a class recorded by a probe that has since learned to refuse it: the
//   K = 1 class 66 of session 14's device run 1, which the signed-zero draw refuses).
//   --probe-at=S,S,... (with --resume; S = MxNxK[:in[:out]][:tn] as fixbits-cublas-probe
//   takes): each shape is put to cuBLASLt's heuristic, and its answer's class is visited
//   with a probe at exactly that shape and split count first (ProbeOptions::extra_points),
//   then its old probes are checked with it: a shape the match found differing, where the
//   class's own probes did not look (session 12's device run 1 probed six such shapes
//   alone and recovered spans and K-loop steps the table's classes lacked). The classes
//   visited are these (and --classes'); an answer whose key the table never met joins it
//   first (profile::join_answer_at: its class, or a new class, with the shape kept as a
//   seen point), so a shape the match found without a descriptor is probed too; without
//   --jobs only (with it such a shape is named and skipped: the slices' tables must all
//   hold the variants of the table they resumed).
//   --find-points (with --resume, without --jobs): before probing, asks the heuristic
//   over each --dtypes map's own grid again (as the scan did: about a minute a family
//   on the H200) and gives every variant that neither a map run nor a seen point shows
//   the shapes it meets it at (profile::find_points; kept as `seen` lines in --out), so
//   its class can be probed; prints how many of the answers' keys the table lacks
//   (another GPU's or cuBLASLt's heuristic). With --no-probe it only finds them.
//   --widen-mn=N (with --resume, without --jobs): before probing, grows each --dtypes map
//   to M, N <= N (profile::widen_map; session 36 found every gate_up layer, N = 28672 to
//   57344, past the scanned 16384): the heuristic is asked at the new cells only, so the
//   old cells keep the answers of the GPU that scanned them and the new ones hold this
//   GPU's; --refine's boundary lines are added above the old last line. The classes that
//   new keys make are probed; each earlier class that gained variants is probed first at
//   up to two of them (the most-used; ProbeOptions::extra_points), its old probes checked
//   with those. When the new cells hold no key the table lacked, nothing is probed.
//   --jobs=N (with --resume): N copies of this program probe at once, each its own
//   slice of the classes (--slice=j/N, ProbeOptions::slice) with the whole
//   --probe-budget-s, writing <out>.slice<j>.tsv and its output to <out>.slice<j>.log;
//   each black-box call waits for its turn at the GPU (--device-turn=<out>.turn,
//   runtime/DeviceTurn.h: 8 slices whose contexts shared it at once took about 2 ms a
//   call, one alone 0.04 ms);
//   then their tables are merged into --out (profile/ScanSlices.h) and each slice's
//   probe summary is printed. The probe's search is CPU work (session 10's run 1: 20 s
//   probes with under 2 s in cuBLAS), so N processes on N cores probe N times the
//   classes per device second.
//   --merge=A,B,... (with --resume=BASE and --out, no device): the tables A, B, ... that
//   separate --resume=BASE runs wrote (e.g. two device calls that each probed other
//   classes of one staged table) put together into --out as --jobs puts its slices
//   together (profile/ScanSlices.h): a class that two of them changed is an error that
//   names it, never a silent pick; a table that cannot be read is named and nothing is
//   written. The merged table's command keeps each run's own.
//   --plan (with --resume, no device, nothing written): which classes a --resume run with
//   the same probe options (--dtypes, --classes, --max-probe-k, --min-probe-k,
//   --small-probe-k, --max-probe-mnk, --retry-failed, --no-separate-validated, ...) would
//   visit, in its order, and the shape each would be probed at first; then the
//   --classes list to give such a run. A class with a descriptor is listed when the run
//   would revalidate it (--classes, or its probes leave a separating point), a class
//   whose kept probes already give it a descriptor as "no probe". Only the first probe
//   of a visit is named (the next depend on what it finds), and the points are the
//   map's: a run on the device also asks cuBLASLt's heuristic and may take a separating
//   point between grid lines. Session 39 found 90 classes with a descriptor that a run
//   over all classes would revalidate this way (docs/cublas.md).
//   --out is required except with --plan (run without arguments, it says so and exits 0).
//   Defaults: all three dtypes (fp8 = e4m3 -> f16, TN; its K
//   and N grids on multiples of 16),
//   --per-octave=2, --refine=3, --max-mn=16384, --max-k=524288, --min-probe-k=256,
//   --max-probe-k=4096, --probe-budget-s=300, --class-probes=2, --fit-probes=2.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "samples/common/DtypesFlag.h"
#include "samples/common/CublasSession.h"
#include "samples/common/FlagArg.h"
#include "samples/common/ShapeArg.h"
#include "samples/common/SelfJobs.h"
#include "samples/common/TableSaves.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "profile/CublasBlackBox.h"
#include "profile/CublasProfile.h"
#include "profile/CublasScan.h"
#include "profile/JoinKey.h"
#include "profile/MatchDraws.h"
#include "profile/WidenMap.h"
#include "profile/ProbeDeadline.h"
#include "profile/ScanSlices.h"
#include "runtime/CublasLt.h"
#include "runtime/DeviceTurn.h"
#include "runtime/Runtime.h"

using namespace fixbits;

namespace {

struct Args {
  std::string out;  // required: the scan's product is this file
  std::string append;  // a table of earlier families to extend
  double probe_timeout_s = 60;  // per probe: its black box stops answering after this
  int64_t probe_batch = 128;    // placements per launch, per side
  int64_t probe_queue = 64;     // launches queued before their outputs are read
  std::string resume;  // a table to probe on, without a heuristic pass
  std::vector<DType> dtypes = {DType::kF16, DType::kBF16, DType::kF8E4M3};
  int per_octave = 2;
  int refine = 3;  // refine_grid's points per gap; 0: no M/N refinement
  int64_t max_mn = 16384;  // M and N grids run to it
  int64_t max_k = int64_t{1} << 19;
  profile::ProbeOptions probe;
  int64_t rank_shapes = 10000;  // the match's draws per f16/bf16 family that rank classes
  bool no_probe = false;
  std::string command;
  int64_t jobs = 1;                 // --jobs: processes, each a slice of the classes
  std::vector<std::string> passed;  // the arguments a slice gets (all but --jobs, --out)
  std::vector<runtime::GemmShape> probe_at;  // --probe-at
  std::set<int> forget;                      // --forget
  std::string device_turn;  // --device-turn: the lock file the --jobs slices take turns on
  std::vector<std::string> merge;  // --merge: tables of separate --resume runs to put together
  bool find_points = false;        // --find-points: ask the heuristic for shapes the map lost
  bool plan = false;               // --plan: list the visits a --resume run would make
  int64_t widen_mn = 0;            // --widen-mn: grow the resumed maps to M, N <= this
};

// A comma-separated list of table class indices (--classes, --forget) into *out.
absl::Status class_list(const std::string& flag, const std::string& v, std::set<int>* out) {
  for (absl::string_view part : absl::StrSplit(v, ',', absl::SkipEmpty())) {
    int c = 0;
    if (!absl::SimpleAtoi(part, &c) || c < 0) {
      return absl::InvalidArgumentError(flag + " takes table class indices >= 0, comma-separated; "
                                        "got '" + std::string(part) + "'.");
    }
    out->insert(c);
  }
  return absl::OkStatus();
}

absl::StatusOr<Args> parse_args(int argc, char** argv) {
  Args a;
  std::vector<std::string> words;
  for (int i = 0; i < argc; ++i) words.emplace_back(argv[i]);
  a.command = absl::StrJoin(words, " ");
  for (int i = 1; i < argc; ++i) {
    const samples::FlagArg flag_arg(argv[i]);
    const std::string& arg = flag_arg.text();
    auto value = [&](const std::string& flag) { return flag_arg.value(flag); };
    auto int_flag = [&](const std::string& flag, int64_t lo, int64_t* out) {
      return flag_arg.int_value(flag, lo, out);
    };
    absl::Status st;
    int64_t x = 0;
    if (!arg.starts_with("--jobs=") && !arg.starts_with("--out=") && !arg.starts_with("--slice=") &&
        !arg.starts_with("--device-turn=")) {
      a.passed.push_back(arg);
    }
    if (value("--jobs=")) {
      st = int_flag("--jobs=", 1, &a.jobs);
      if (st.ok() && a.jobs > 64) return absl::InvalidArgumentError("--jobs takes 1 to 64 processes.");
    } else if (auto v = value("--slice=")) {
      std::vector<std::string> jn = absl::StrSplit(*v, '/');
      if (jn.size() != 2 || !absl::SimpleAtoi(jn[0], &a.probe.slice) ||
          !absl::SimpleAtoi(jn[1], &a.probe.slices) || a.probe.slices < 1 || a.probe.slice < 0 ||
          a.probe.slice >= a.probe.slices) {
        return absl::InvalidArgumentError("--slice takes J/N with 0 <= J < N.");
      }
    } else if (auto v = value("--out=")) {
      a.out = *v;
    } else if (auto v = value("--device-turn=")) {
      a.device_turn = *v;
    } else if (auto v = value("--merge=")) {
      a.merge = absl::StrSplit(*v, ',', absl::SkipEmpty());
      if (a.merge.empty()) return absl::InvalidArgumentError("--merge names no table.");
    } else if (auto v = value("--append=")) {
      a.append = *v;
    } else if (auto v = value("--resume=")) {
      a.resume = *v;
    } else if (auto v = value("--dtypes=")) {
      absl::StatusOr<std::vector<DType>> dtypes = samples::parse_dtypes_flag(*v);
      if (!dtypes.ok()) return dtypes.status();
      a.dtypes = *std::move(dtypes);
    } else if (value("--refine=")) {
      st = int_flag("--refine=", 0, &x);
      a.refine = static_cast<int>(x);
    } else if (value("--per-octave=")) {
      st = int_flag("--per-octave=", 1, &x);
      a.per_octave = static_cast<int>(x);
    } else if (value("--max-mn=")) {
      st = int_flag("--max-mn=", 1, &a.max_mn);
    } else if (value("--max-k=")) {
      st = int_flag("--max-k=", 16, &a.max_k);
    } else if (value("--min-probe-k=")) {
      st = int_flag("--min-probe-k=", 3, &a.probe.min_probe_k);
    } else if (value("--max-probe-k=")) {
      st = int_flag("--max-probe-k=", 3, &a.probe.max_probe_k);
    } else if (value("--class-probes=")) {
      st = int_flag("--class-probes=", 1, &x);
      a.probe.class_probes = static_cast<int>(x);
    } else if (value("--fit-probes=")) {
      st = int_flag("--fit-probes=", 0, &x);
      a.probe.fit_probes = static_cast<int>(x);
    } else if (value("--revalidate=")) {
      st = int_flag("--revalidate=", 0, &x);
      a.probe.revalidate = static_cast<int>(x);
    } else if (auto v = value("--probe-timeout-s=")) {
      if (!absl::SimpleAtod(*v, &a.probe_timeout_s) || a.probe_timeout_s < 0) {
        return absl::InvalidArgumentError("--probe-timeout-s takes a number of seconds >= 0.");
      }
    } else if (arg == "--retry-failed") {
      a.probe.retry_failed = true;
    } else if (value("--probe-batch=")) {
      st = int_flag("--probe-batch=", 1, &a.probe_batch);
    } else if (value("--probe-queue=")) {
      st = int_flag("--probe-queue=", 1, &a.probe_queue);
    } else if (value("--max-probe-mnk=")) {
      st = int_flag("--max-probe-mnk=", 1, &a.probe.max_probe_mnk);
    } else if (value("--small-probe-k=")) {
      st = int_flag("--small-probe-k=", 0, &a.probe.small_probe_k);
    } else if (auto v = value("--probe-budget-s=")) {
      if (!absl::SimpleAtod(*v, &a.probe.budget_s) || a.probe.budget_s < 0) {
        return absl::InvalidArgumentError("--probe-budget-s takes a number of seconds >= 0.");
      }
    } else if (value("--rank-shapes=")) {
      st = int_flag("--rank-shapes=", 0, &a.rank_shapes);
    } else if (auto v = value("--classes=")) {
      st = class_list("--classes", *v, &a.probe.only_classes);
      // An empty list (fixbits-cublas-match --differing-classes-out found nothing to
      // revalidate) visits no class, where no --classes would visit them all.
      if (a.probe.only_classes.empty()) a.no_probe = true;
    } else if (auto v = value("--forget=")) {
      st = class_list("--forget", *v, &a.forget);
    } else if (auto v = value("--probe-at=")) {
      for (absl::string_view part : absl::StrSplit(*v, ',', absl::SkipEmpty())) {
        absl::StatusOr<runtime::GemmShape> shape =
            samples::parse_shape_arg(std::string_view(part.data(), part.size()));
        if (!shape.ok()) return absl::InvalidArgumentError(absl::StrCat("--probe-at: ", shape.status().message()));
        a.probe_at.push_back(*shape);
      }
    } else if (arg == "--no-separate-validated") {
      a.probe.separate_validated = false;
    } else if (arg == "--no-probe") {
      a.no_probe = true;
    } else if (arg == "--find-points") {
      a.find_points = true;
    } else if (arg == "--plan") {
      a.plan = true;
    } else if (value("--widen-mn=")) {
      st = int_flag("--widen-mn=", 2, &a.widen_mn);
    } else {
      return absl::InvalidArgumentError("Unknown argument '" + arg +
                                        "'; see the usage at the top of main.cpp.");
    }
    if (!st.ok()) return st;
  }
  if (a.dtypes.empty()) return absl::InvalidArgumentError("--dtypes names no dtype.");
  if (!a.append.empty() && !a.resume.empty()) {
    return absl::InvalidArgumentError(
        "--append scans new families into a table and --resume probes on in one; give one.");
  }
  if (!a.forget.empty() && (a.resume.empty() || a.jobs > 1)) {
    return absl::InvalidArgumentError(
        "--forget drops classes of a resumed table in this process; give --resume=PATH and "
        "no --jobs.");
  }
  if (!a.merge.empty() && (a.resume.empty() || a.out.empty() || a.jobs > 1)) {
    return absl::InvalidArgumentError(
        "--merge puts together tables that --resume runs of one table wrote; give "
        "--resume=BASE (that table) and --out=PATH, and no --jobs.");
  }
  if (!a.probe_at.empty() && a.resume.empty()) {
    return absl::InvalidArgumentError(
        "--probe-at probes classes of a table written earlier; give --resume=PATH.");
  }
  if (a.find_points && (a.resume.empty() || a.jobs > 1)) {
    return absl::InvalidArgumentError(
        "--find-points gives a resumed table's variants the shapes its map lost, in this "
        "process; give --resume=PATH and no --jobs (then resume its --out with --jobs).");
  }
  if (a.plan && (a.resume.empty() || a.jobs > 1 || !a.merge.empty() || !a.probe_at.empty() ||
                 a.find_points || a.widen_mn > 0 || !a.forget.empty())) {
    return absl::InvalidArgumentError(
        "--plan lists what a --resume run of a table would probe, with no device: give "
        "--resume=PATH and the run's probe options, and no --jobs, --merge, --probe-at, "
        "--find-points, --widen-mn or --forget (they need cuBLASLt, or change the table).");
  }
  if (a.widen_mn > 0 && (a.resume.empty() || a.jobs > 1)) {
    return absl::InvalidArgumentError(
        "--widen-mn grows a resumed table's maps in this process; give --resume=PATH and no "
        "--jobs (then resume its --out with --jobs).");
  }
  if (a.jobs > 1 && a.resume.empty()) {
    return absl::InvalidArgumentError(
        "--jobs splits the probing of a --resume'd table; give --resume=PATH (a first scan's "
        "heuristic pass runs in one process).");
  }
  if (a.out.empty() && argc > 1 && !a.plan) {
    return absl::InvalidArgumentError("--out=PATH is required: the scan writes its table there.");
  }
  return a;
}

// A progress line on stderr, redrawn at most every 0.2 s (and at the end of a phase).
class Progress {
 public:
  void operator()(std::string_view phase, int64_t done, int64_t total, int64_t calls) {
    const auto now = std::chrono::steady_clock::now();
    if (done < total && phase == phase_ && now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    if (phase != phase_ && !phase_.empty()) std::fprintf(stderr, "\n");
    phase_ = std::string(phase);
    std::fprintf(stderr, "\r[%s] %lld/%lld (%.0f%%), %lld heuristic calls, %.1f s   ",
                 phase_.c_str(), static_cast<long long>(done), static_cast<long long>(total),
                 total ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 100.0,
                 static_cast<long long>(calls), elapsed());
    std::fflush(stderr);
  }
  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  void end() {
    if (!phase_.empty()) std::fprintf(stderr, "\n");
    phase_.clear();
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_{};
  std::string phase_;
};

bool write_file(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  return out && std::rename(tmp.c_str(), path.c_str()) == 0;
}

absl::StatusOr<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(path + " cannot be read");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The table at `path`, re-keyed as a resumed run re-keys it (profile::rekey_table, which
// fills `state`); the first error of the read, the parse or the re-key.
absl::StatusOr<profile::CublasTable> read_rekeyed(const std::string& path, profile::ScanState& state) {
  absl::StatusOr<std::string> text = read_file(path);
  if (!text.ok()) return text.status();
  absl::StatusOr<profile::CublasTable> table = profile::parse_table(*text);
  if (!table.ok()) return table.status();
  if (absl::Status s = profile::rekey_table(*table, state).status(); !s.ok()) return s;
  return table;
}

// The problem families of --dtypes ("f16:f16:nn", ...), whose classes a resumed run
// probes and whose shapes rebuild_shapes gives back.
std::vector<std::string> families_of(const Args& args) {
  std::vector<std::string> families;
  for (DType t : args.dtypes) families.push_back(profile::family_of(*profile::usual_shape({1, 1, 1}, t)));
  return families;
}

// The shapes that rank the classes for probing (ProbeOptions::rank_shapes):
// fixbits-cublas-match's default draws (seed 1, --rank-shapes per f16/bf16 family, a
// tenth as many fp8). A run and its --plan rank alike.
std::vector<runtime::GemmShape> rank_shapes_of(const Args& args) {
  std::vector<runtime::GemmShape> shapes;
  for (const profile::MatchDraw& d : profile::draw_match_sequence(
           1, args.dtypes, args.rank_shapes, args.rank_shapes / 10, {})) {
    shapes.push_back(d.shape);
  }
  return shapes;
}

// The table at --resume (re-keyed as a resumed run re-keys it) and the tables at
// `paths`, which runs resumed from it wrote, merged into --out (profile/ScanSlices.h),
// then one summary line. For this program's --jobs slices (separate_runs false) a path
// with may_be_missing[j] that cannot be read is left out quietly (its slice said why),
// any other unreadable table is named and the rest merged, and the command is the
// base's then this program's. For separate runs a user named (--merge) every table must
// be read, or nothing is written, and the command is the base's, then each table's own
// tail past the base's command, then this program's. Returns max(worst, 1 on failure).
int merge_into_out(const Args& args, const std::vector<std::string>& paths,
                   const std::vector<bool>& may_be_missing, bool separate_runs, int worst,
                   const std::string& of, std::chrono::steady_clock::time_point start) {
  profile::ScanState state;
  absl::StatusOr<profile::CublasTable> base = read_rekeyed(args.resume, state);
  if (!base.ok()) {
    std::printf("error: cannot re-read --resume=%s: %s\n", args.resume.c_str(),
                std::string(base.status().message()).c_str());
    return 1;
  }
  std::vector<profile::CublasTable> tables;
  std::string command = base->command;
  for (size_t j = 0; j < paths.size(); ++j) {
    absl::StatusOr<std::string> t = read_file(paths[j]);
    absl::StatusOr<profile::CublasTable> table =
        t.ok() ? profile::parse_table(*t) : absl::StatusOr<profile::CublasTable>(t.status());
    if (!table.ok()) {
      if (may_be_missing[j] && !t.ok()) continue;
      std::printf("%s: no table merged: %s\n", paths[j].c_str(),
                  std::string(table.status().message()).c_str());
      worst = std::max(worst, 1);
      continue;
    }
    if (const std::string& own = table->command; separate_runs) {
      command += absl::StartsWith(own, base->command) ? own.substr(base->command.size())
                                                      : " && " + own;
    }
    tables.push_back(*std::move(table));
  }
  if (tables.empty() || (separate_runs && tables.size() < paths.size())) return worst;
  absl::StatusOr<profile::CublasTable> merged = profile::merge_scan_slices(*base, tables);
  if (!merged.ok()) {
    std::printf("error: %s\n", std::string(merged.status().message()).c_str());
    return 1;
  }
  merged->command = command + " && " + args.command;
  if (!write_file(args.out, profile::write_table(*merged))) {
    std::printf("error: could not write %s\n", args.out.c_str());
    return 1;
  }
  int before = 0, after = 0;
  for (const profile::TableClass& c : base->classes) before += c.desc.has_value();
  for (const profile::TableClass& c : merged->classes) after += c.desc.has_value();
  std::printf("summary (%zu of %s merged): %zu classes, %d with a descriptor (%d before), "
              "%.1f s; wrote %s\n",
              tables.size(), of.c_str(), merged->classes.size(), after, before,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
              args.out.c_str());
  return worst;
}

// --plan: the table at --resume re-keyed and its shapes rebuilt as a resumed run does
// them, then probe_classes with the run's options and a probe that records its shape and
// class and answers DeadlineExceeded, which ends a visit at once (CublasScan.h), so
// each visited class names the point it would be probed at first and nothing else runs.
// Prints one line a visit in visit order, the classes it could not probe for want of a
// shape, the classes whose kept probes alone give them a descriptor, and the --classes
// list; writes nothing. --no-probe (an empty --classes too) plans no visit, as the run
// makes none. Exit 1 when the table cannot be read or re-keyed.
int plan_visits(const Args& args) {
  if (args.no_probe) {  // --no-probe, or --classes= naming none: the run probes nothing
    std::printf("plan: 0 visits: --no-probe (or an empty --classes list) probes no class; "
                "nothing probed, nothing written\n--classes=\n");
    return 0;
  }
  profile::ScanState state;
  absl::StatusOr<profile::CublasTable> table = read_rekeyed(args.resume, state);
  absl::Status st = table.ok() ? profile::rebuild_shapes(*table, state, args.per_octave, families_of(args))
                               : table.status();
  if (!st.ok()) {
    std::printf("error: cannot plan --resume=%s: %s\n", args.resume.c_str(),
                std::string(st.message()).c_str());
    return 1;
  }
  const profile::CublasTable before = *table;
  profile::ProbeOptions options = args.probe;
  options.budget_s = std::numeric_limits<double>::infinity();  // every visit, no budget
  options.rank_shapes = rank_shapes_of(args);
  struct Visit {
    int cls = -1;
    runtime::GemmShape at;
  };
  std::vector<Visit> visits;
  const profile::ProbeFn record = [&](const runtime::GemmShape& s, const profile::CublasKey& key,
                                      const std::vector<dsl::GemmDesc>&)
      -> absl::StatusOr<dsl::GemmDesc> {
    absl::StatusOr<int> c = profile::class_of_answer(*table, s, key);
    visits.push_back(Visit{c.ok() ? *c : -1, s});
    return absl::DeadlineExceededError("--plan: not probed");
  };
  absl::StatusOr<profile::ProbeStats> stats = profile::probe_classes(*table, state, record, options);
  if (!stats.ok()) {
    std::printf("error: %s\n", std::string(stats.status().message()).c_str());
    return 1;
  }
  std::vector<int> listed;
  int revalidate = 0;
  for (const Visit& v : visits) {
    const profile::TableClass* c = v.cls >= 0 ? &before.classes[static_cast<size_t>(v.cls)] : nullptr;
    std::vector<std::string> rules;
    for (const profile::SpanRule& r : c ? c->rules : std::vector<profile::SpanRule>{}) {
      rules.push_back(profile::to_string(r));
    }
    revalidate += c && c->desc.has_value();
    if (v.cls >= 0) listed.push_back(v.cls);
    std::printf("class %d %s {%s}: %s, %zu probes%s%s: first probe at %lldx%lldx%lld (M*N*K %.3g)\n",
                v.cls, c ? c->family.c_str() : "?", c ? profile::to_string(c->cls).c_str() : "?",
                c && c->desc ? "revalidate (has a descriptor)" : "no descriptor",
                c ? c->probes.size() + c->open_probes.size() : 0, rules.empty() ? "" : ", rules ",
                absl::StrJoin(rules, ",").c_str(), static_cast<long long>(v.at.m),
                static_cast<long long>(v.at.n), static_cast<long long>(v.at.k),
                static_cast<double>(v.at.m) * static_cast<double>(v.at.n) * static_cast<double>(v.at.k));
  }
  for (int c : stats->no_shape) {
    std::printf("class %d: not probed: no shape of its variants in the table (--find-points)\n", c);
  }
  int concluded = 0;
  for (size_t c = 0; c < table->classes.size() && c < before.classes.size(); ++c) {
    if (!before.classes[c].desc && table->classes[c].desc) {
      ++concluded;
      listed.push_back(static_cast<int>(c));
      std::printf("class %zu %s {%s}: no probe: its %zu kept probes give it a descriptor\n", c,
                  before.classes[c].family.c_str(), profile::to_string(before.classes[c].cls).c_str(),
                  before.classes[c].open_probes.size());
    }
  }
  std::sort(listed.begin(), listed.end());
  listed.erase(std::unique(listed.begin(), listed.end()), listed.end());
  std::printf("plan: %zu visits (revalidating a class with a descriptor: %d), %d classes "
              "concluded from kept probes, of %zu classes; nothing probed, nothing written\n",
              visits.size(), revalidate, concluded, before.classes.size());
  std::printf("--classes=%s\n", absl::StrJoin(listed, ",").c_str());
  return 0;
}

// --jobs=N: this program N times with --slice=j/N and --out=<out>.slice<j>.tsv (output
// in <out>.slice<j>.log), at once; then the resumed table, re-keyed as the slices
// re-key it, and their tables merged into --out. Exit 2 when a slice rejects the
// arguments, 1 when a slice or the merge failed (the tables that came back are still
// merged and written), 0 otherwise (also when every slice skipped for want of a device).
int run_jobs(const Args& args, const char* self) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> outs, logs;
  std::vector<samples::SelfJob> jobs;
  for (int64_t j = 0; j < args.jobs; ++j) {
    outs.push_back(absl::StrFormat("%s.slice%d.tsv", args.out, j));
    logs.push_back(absl::StrFormat("%s.slice%d.log", args.out, j));
    std::remove(outs.back().c_str());
    samples::SelfJob job{.args = args.passed, .log = logs.back()};
    job.args.push_back(absl::StrFormat("--slice=%d/%d", j, args.jobs));
    job.args.push_back("--out=" + outs.back());
    job.args.push_back("--device-turn=" + args.out + ".turn");
    jobs.push_back(std::move(job));
  }
  const std::vector<int> codes = samples::run_self_jobs(self, "fixbits-cublas-scan", jobs);
  int worst = codes.empty() ? 1 : *std::max_element(codes.begin(), codes.end());
  if (const int sig = samples::stopped_by_signal(); sig != 0) {
    std::printf("stopped by signal %d: the slices were stopped; merging the tables they had "
                "saved (each slice saves at most 30 s apart)\n", sig);
    worst = std::max(worst, 1);
  }
  for (size_t j = 0; j < codes.size(); ++j) {
    std::printf("slice %zu/%lld: exit %d, output in %s\n", j, static_cast<long long>(args.jobs),
                codes[j], logs[j].c_str());
    absl::StatusOr<std::string> log = read_file(logs[j]);
    for (absl::string_view line : absl::StrSplit(log.ok() ? *log : "", '\n')) {
      if (absl::StartsWith(line, "probe:") || absl::StartsWith(line, "slow visit:") ||
          absl::StartsWith(line, "skipped:") || absl::StartsWith(line, "error:") ||
          absl::StartsWith(line, "fixbits-cublas-scan:")) {
        std::printf("  %s\n", std::string(line).c_str());
      }
    }
  }
  if (worst == 2) return 2;
  std::vector<bool> may_be_missing;  // a slice that exits 0 without a table had no device
  for (int code : codes) may_be_missing.push_back(code == 0);
  return merge_into_out(args, outs, may_be_missing, /*separate_runs=*/false, worst,
                        absl::StrFormat("%lld slices", static_cast<long long>(args.jobs)), start);
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  absl::StatusOr<Args> args = parse_args(argc, argv);
  if (!args.ok()) {
    std::fprintf(stderr, "fixbits-cublas-scan: %s\n", std::string(args.status().message()).c_str());
    return 2;
  }
  if (args->jobs > 1 && !args->out.empty()) return run_jobs(*args, argv[0]);
  if (!args->merge.empty()) {  // no device: tables of separate runs put together
    return merge_into_out(*args, args->merge, std::vector<bool>(args->merge.size(), false),
                          /*separate_runs=*/true, 0,
                          absl::StrFormat("%zu tables", args->merge.size()),
                          std::chrono::steady_clock::now());
  }
  if (args->plan) return plan_visits(*args);  // no device: what a --resume run would probe
  if (args->out.empty()) {
    // Run bare (as a loop over every sample does), it explains itself instead of
    // spending minutes of device time on a table nobody asked for.
    std::printf("skipped: give --out=PATH to scan (a few minutes on an H200); see "
                "docs/cublas.md\n");
    return 0;
  }
  std::optional<samples::CublasSession> cu = samples::open_cublas_or_skip();
  if (!cu) return 0;
  const runtime::DeviceInfo& info = cu->dev->info();
  std::printf("device %s (%s, %d SMs), cuBLASLt %zu from %s\n", info.name.c_str(),
              info.arch.c_str(), info.multiprocessor_count, cu->lt->version(),
              cu->lt->library_path().c_str());
  if (info.arch != profile::arch_name(profile::sm90)) {
    std::printf("note: this device is %s; the table is written for it, but profile::cublas() "
                "embeds only sm_90's\n", info.arch.c_str());
  }
  profile::CublasTable table{.arch = info.arch,
                             .library = std::to_string(cu->lt->version()),
                             .command = args->command};
  const bool resume = !args->resume.empty();
  if (const std::string& earlier = resume ? args->resume : args->append; !earlier.empty()) {
    const char* flag = resume ? "--resume" : "--append";
    std::ifstream in(earlier, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    absl::StatusOr<profile::CublasTable> old = profile::parse_table(text.str());
    if (!in || !old.ok()) {
      std::printf("error: cannot extend %s=%s: %s\n", flag, earlier.c_str(),
                  in ? std::string(old.status().message()).c_str() : "the file cannot be read");
      return 1;
    }
    if (old->arch != table.arch || old->library != table.library) {
      std::printf("error: %s=%s was made on %s with cuBLASLt %s; this is %s with %s\n", flag,
                  earlier.c_str(), old->arch.c_str(), old->library.c_str(), table.arch.c_str(),
                  table.library.c_str());
      return 1;
    }
    old->command += " && " + table.command;
    table = *std::move(old);
  }
  profile::ScanState state;
  if (resume) {
    absl::StatusOr<profile::RekeyStats> rk = profile::rekey_table(table, state);
    const std::vector<std::string> families = families_of(*args);
    for (const std::string& f : families) {
      if (profile::find_map(table, f) == nullptr) {
        std::printf("note: --resume=%s has no map of %s; its classes are not probed\n",
                    args->resume.c_str(), f.c_str());
      }
    }
    absl::Status st = rk.ok() ? profile::rebuild_shapes(table, state, args->per_octave, families)
                              : rk.status();
    if (!st.ok()) {
      std::printf("error: cannot resume %s: %s\n", args->resume.c_str(),
                  std::string(st.message()).c_str());
      return 1;
    }
    for (int c : args->forget) {
      if (c >= static_cast<int>(table.classes.size())) {
        std::printf("error: --forget=%d: the table has %zu classes\n", c, table.classes.size());
        return 1;
      }
      profile::TableClass& cls = table.classes[static_cast<size_t>(c)];
      cls.desc.reset();
      cls.probes.clear();
      cls.rules.clear();
      cls.lanes_by_n.clear();
      cls.lane_tile_cap = 0;
      cls.layout = profile::KLayout::kAny;
      cls.other.reset();
      cls.note = "forgotten (--forget): probed again from nothing";
    }
    int64_t open = 0;
    for (const profile::TableClass& c : table.classes) open += !c.desc.has_value();
    std::printf("resume %s: %lld classes re-keyed into %lld (%lld unchanged, %lld changed, "
                "%lld descriptors dropped, %lld probes kept); %lld without a descriptor\n",
                args->resume.c_str(), static_cast<long long>(rk->classes_before),
                static_cast<long long>(rk->classes_after), static_cast<long long>(rk->unchanged),
                static_cast<long long>(rk->changed), static_cast<long long>(rk->descs_dropped),
                static_cast<long long>(rk->probes_kept), static_cast<long long>(open));
  }
  Progress progress;
  // The table is written after each family and while probing as TableSaves says (every
  // 30 s, and soon after a probe ends; to a temp file, renamed into place), so a run cut
  // short by a time limit still leaves a usable map.
  double last_save = 0;
  bool probed_since_save = false;  // a probe has ended since the table was last written
  auto save = [&]() -> bool {
    last_save = progress.elapsed();
    probed_since_save = false;
    return write_file(args->out, profile::write_table(table));
  };
  const samples::TableSaves saves;
  auto show = [&](std::string_view phase, int64_t done, int64_t total) {
    progress(phase, done, total, state.heuristic_calls);
    if (phase == "probe" && saves.due(progress.elapsed(), last_save, probed_since_save)) save();
  };
  const profile::HeuristicFn heuristic =
      [&](const runtime::GemmShape& s) -> absl::StatusOr<runtime::AlgoConfig> {
    absl::StatusOr<runtime::MatmulReport> r = cu->lt->heuristic_uncached(s);
    if (!r.ok()) return r.status();
    return r->algo;
  };
  // --find-points: the heuristic over each resumed map's grid again, for the variants
  // that have no shape to probe at.
  for (DType t : args->find_points ? args->dtypes : std::vector<DType>{}) {
    const runtime::GemmShape family = *profile::usual_shape({1, 1, 1}, t);
    const double t0 = progress.elapsed();
    absl::StatusOr<profile::FoundPoints> found =
        profile::find_points(table, state, family, args->per_octave, heuristic, show);
    progress.end();
    if (absl::IsNotFound(found.status())) continue;  // said above: no map of the family
    if (!found.ok()) {
      std::printf("find-points %s: error: %s\n", profile::family_of(family).c_str(),
                  std::string(found.status().message()).c_str());
      return 1;
    }
    std::printf("find-points %s: %lld heuristic calls, %lld of %lld variants without a shape "
                "got one, %lld keys the table lacks%s%s, %.1f s\n",
                profile::family_of(family).c_str(), static_cast<long long>(found->heuristic_calls),
                static_cast<long long>(found->found), static_cast<long long>(found->without),
                static_cast<long long>(found->unknown), found->unknown_keys.empty() ? "" : ": ",
                absl::StrJoin(found->unknown_keys, "; ").c_str(), progress.elapsed() - t0);
    state.heuristic_calls += found->heuristic_calls;
  }
  // --widen-mn: each resumed map grown to M, N <= widen_mn (its old cells kept). The
  // classes it made are probed; each earlier class that gained variants is probed first
  // at up to kWidenProbes of them (the most-used), its old probes checked with them.
  constexpr size_t kWidenProbes = 2;
  // The probes the widening asks for so far, as the flags a later --resume of --out
  // takes (so a --no-probe widening hands them to --jobs processes): the classes it made
  // (--classes) and each gained variant's point (--probe-at). Printed after each family
  // (the last line holds them all), so a run cut short still says what it saved.
  auto print_widen_plan = [&]() {
    std::vector<std::string> classes, points;
    for (int c : args->probe.only_classes) classes.push_back(std::to_string(c));
    for (const auto& [c, pts] : args->probe.extra_points) {
      for (const profile::ProbePoint& p : pts) {
        absl::StatusOr<runtime::GemmShape> f = profile::parse_family(table.variants[p.variant].family);
        if (!f.ok()) continue;
        points.push_back(absl::StrFormat("%dx%dx%d:%s", p.m, p.n, p.k, dtype_name(f->a_dtype)));
      }
    }
    std::printf("widen plan: --classes=%s --probe-at=%s\n", absl::StrJoin(classes, ",").c_str(),
                absl::StrJoin(points, ",").c_str());
    std::fflush(stdout);
  };
  bool widened_anything = false;
  for (DType t : args->widen_mn > 0 ? args->dtypes : std::vector<DType>{}) {
    const runtime::GemmShape family = *profile::usual_shape({1, 1, 1}, t);
    const double t0 = progress.elapsed();
    absl::StatusOr<profile::WidenStats> w = profile::widen_map(
        table, state, family,
        profile::WidenOptions{.per_octave = args->per_octave, .max_mn = args->widen_mn,
                              .refine = args->refine},
        heuristic, show);
    progress.end();
    if (absl::IsNotFound(w.status())) continue;  // said above: no map of the family
    if (!w.ok()) {
      std::printf("widen %s: error: %s\n", profile::family_of(family).c_str(),
                  std::string(w.status().message()).c_str());
      return 1;
    }
    state.heuristic_calls += w->heuristic_calls;
    size_t gained = 0;
    for (const auto& [c, vs] : w->gained) gained += vs.size();
    const int64_t points = profile::plan_widen_probes(table, state, *w, kWidenProbes, &args->probe);
    widened_anything |= !w->new_classes.empty() || !w->gained.empty();
    std::printf("widen %s: to M, N <= %lld: %lld new M lines, %lld new N lines, %lld new cells, "
                "%lld heuristic calls; %zu new variants: %zu in %zu earlier classes (%lld probe points "
                "for them), the rest in %zu new classes; %.1f s\n",
                profile::family_of(family).c_str(), static_cast<long long>(args->widen_mn),
                static_cast<long long>(w->new_m_lines), static_cast<long long>(w->new_n_lines),
                static_cast<long long>(w->new_cells), static_cast<long long>(w->heuristic_calls),
                w->new_variants.size(), gained, w->gained.size(), static_cast<long long>(points),
                w->new_classes.size(),
                progress.elapsed() - t0);
    save();
    if (widened_anything) print_widen_plan();
  }
  if (args->widen_mn > 0 && !widened_anything && args->probe_at.empty() &&
      args->probe.only_classes.empty()) {
    args->no_probe = true;  // every answer of the new cells is a variant the table had
  }
  // --probe-at: each shape's class, with a probe at the shape first.
  // An answer whose key the table lacks (the map's GPU never gave it) joins the table
  // first (profile::join_answer_at): its class, or a new one, is probed at the shape.
  // Not in a --jobs slice: every slice would add the variant, and merge_scan_slices
  // takes only slices of one base (ScanSlices.h); such a shape is named and skipped.
  const bool may_join = args->probe.slices == 1;
  for (const runtime::GemmShape& s : args->probe_at) {
    absl::StatusOr<runtime::AlgoConfig> answer = heuristic(s);
    profile::JoinedKey joined;
    int cls = -1;
    absl::StatusOr<profile::ProbePoint> pt =
        !answer.ok() ? answer.status()
        : may_join   ? profile::join_answer_at(
                         table, state, s, *answer,
                         absl::StrFormat("met at --probe-at %s on %s (a key the map lacked)",
                                         runtime::to_string(s), info.name),
                         &joined)
                     : profile::point_of_shape(table, s, *answer, &cls);
    if (absl::IsNotFound(pt.status()) && !may_join) {
      pt = absl::NotFoundError(absl::StrCat(
          pt.status().message(), " A key the table lacks joins it only without --jobs: run "
          "--probe-at of this shape in one process."));
    }
    if (!pt.ok()) {
      std::printf("probe-at %s: skipped: %s\n", runtime::to_string(s).c_str(),
                  std::string(pt.status().message()).c_str());
      continue;
    }
    if (may_join) cls = joined.cls;
    std::printf("probe-at %s: class %d (variant %d, split %u)%s\n", runtime::to_string(s).c_str(),
                cls, pt->variant, pt->splitk,
                joined.how == profile::JoinedKey::How::kNewClass ? "; a key the table lacked, in a new class"
                : joined.how == profile::JoinedKey::How::kGained ? "; a key the table lacked, joined its class"
                                                                 : "");
    args->probe.extra_points[cls].push_back(*pt);
  }
  if (!args->probe_at.empty() && args->probe.extra_points.empty() &&
      args->probe.only_classes.empty()) {
    args->no_probe = true;  // no shape found its class: probing every class was not asked
  }
  for (DType t : resume ? std::vector<DType>{} : args->dtypes) {
    const runtime::GemmShape family = *profile::usual_shape({1, 1, 1}, t);
    profile::ScanGrid grid =
        profile::default_grid(family, args->per_octave, args->max_mn, args->max_k);
    if (args->refine > 0) {
      const size_t ms0 = grid.ms.size(), ns0 = grid.ns.size();
      absl::StatusOr<profile::ScanGrid> refined = profile::refine_grid(
          family, grid, heuristic, args->refine, &state.heuristic_calls, show);
      progress.end();
      if (!refined.ok()) {
        std::printf("refine %s: error: %s\n", profile::family_of(family).c_str(),
                    std::string(refined.status().message()).c_str());
        return 1;
      }
      grid = *std::move(refined);
      std::printf("refine %s: M lines %zu -> %zu, N lines %zu -> %zu\n",
                  profile::family_of(family).c_str(), ms0, grid.ms.size(), ns0, grid.ns.size());
    }
    const double t0 = progress.elapsed();
    const int64_t calls0 = state.heuristic_calls;
    const size_t variants0 = table.variants.size(), classes0 = table.classes.size();
    absl::Status st = profile::scan_heuristic(table, state, family, grid, heuristic, show);
    progress.end();
    if (!st.ok()) {
      std::printf("scan %s: error: %s\n", profile::family_of(family).c_str(),
                  std::string(st.message()).c_str());
      return 1;
    }
    const profile::FamilyMap& map = table.maps.back();
    int64_t runs = 0;
    for (const auto& r : map.runs) runs += static_cast<int64_t>(r.size());
    std::printf("scan %s: %zu x %zu x %zu grid, %lld heuristic calls, %zu variants in %zu "
                "classes, %lld K runs, %.1f s%s%s\n",
                map.family.c_str(), grid.ms.size(), grid.ns.size(), grid.ks.size(),
                static_cast<long long>(state.heuristic_calls - calls0),
                table.variants.size() - variants0, table.classes.size() - classes0,
                static_cast<long long>(runs), progress.elapsed() - t0,
                map.refusal.empty() ? "" : "; first refusal: ", map.refusal.c_str());
    save();
  }
  if (!args->no_probe) {
    const dsl::Instruction instr =
        info.cc_major >= 9 ? dsl::Instruction::kWgmma : dsl::Instruction::kMmaSync;
    // With --jobs the slices take turns at the GPU for each black-box call
    // (runtime/DeviceTurn.h: contexts that share it at once are time-sliced).
    absl::StatusOr<runtime::DeviceTurn> turn = runtime::DeviceTurn::open(args->device_turn);
    if (!turn.ok()) {
      std::fprintf(stderr, "fixbits-cublas-scan: %s\n", std::string(turn.status().message()).c_str());
      return 1;
    }
    const profile::ProbeFn probe = [&](const runtime::GemmShape& s, const profile::CublasKey& key,
                                       const std::vector<dsl::GemmDesc>& found_before)
        -> absl::StatusOr<dsl::GemmDesc> {
      // Each probe is named on stderr before it runs, and the table is saved between
      // probes (TableSaves), not only between classes: a run killed by a time
      // limit inside one long probe (device run 12 lost 490 s that way) keeps what the
      // probes before it found and says which probe it was in; a probe that ended since
      // the last save is written before the next starts (samples/common/TableSaves.h).
      if (saves.due(progress.elapsed(), last_save, probed_since_save)) save();
      std::fprintf(stderr, "\nprobe %s at %lldx%lldx%lld (%.1f s)\n",
                   profile::to_string(key).c_str(), static_cast<long long>(s.m),
                   static_cast<long long>(s.n), static_cast<long long>(s.k), progress.elapsed());
      std::fflush(stderr);
      absl::StatusOr<std::shared_ptr<profile::CublasBlackBox>> box =
          profile::CublasBlackBox::create(cu->lt, s);
      if (!box.ok()) return box.status();
      // Up to 128 x 128 placements per launch, inside the shape (CublasBlackBox: one
      // launch when the problem fits the shape).
      const dsl::probe::BatchLimits limits{.rows = std::min<int64_t>(s.m, args->probe_batch),
                                           .cols = std::min<int64_t>(s.n, args->probe_batch),
                                           .problems = args->probe_queue};
      // One time limit for the probe's launches and its CPU search. The box's calls and
      // their time are counted, so a slow probe says whether cuBLAS or the CPU took it.
      int64_t calls = 0;
      double box_s = 0, turn_s = 0;
      // Each call of any form of the box (dense: random draws; sparse: the walks, only
      // their marks uploaded; queued: --probe-queue of those launches at once) waits for
      // the device turn, and is counted and timed.
      auto counted = [&](auto inner) {
        return [&calls, &box_s, &turn_s, &turn, inner](const auto& p) {
          using Clock = std::chrono::steady_clock;
          const auto t0 = Clock::now();
          const runtime::DeviceTurn::Held held = turn->hold();
          const auto t1 = Clock::now();
          auto r = inner(p);
          turn_s += std::chrono::duration<double>(t1 - t0).count();
          box_s += std::chrono::duration<double>(Clock::now() - t1).count();
          ++calls;
          return r;
        };
      };
      const dsl::probe::GemmBlackBox counted_dense = counted((*box)->as_black_box());
      const dsl::probe::SparseBlackBox counted_sparse = counted((*box)->as_sparse_black_box());
      const dsl::probe::SparseBatchBox counted_queue = counted((*box)->as_sparse_batch_box());
      const double started = progress.elapsed();
      // A class with a lane rule (fixbits-cublas-lanes) is searched at the count the
      // rule gives this N, as cuBLAS's launch showed it.
      std::vector<int> gemv_lanes;
      if (absl::StatusOr<int> c = profile::class_of_answer(table, s, key);
          c.ok() && !table.classes[*c].lanes_by_n.empty()) {
        gemv_lanes = {profile::lanes_at(table.classes[*c].lanes_by_n, s.n)};
      }
      // Each search's line as it ends (family, its time, the candidates it judged and the
      // box's calls so far): a probe cut by its limit still says where its time went. The
      // class's earlier descriptors (found_before) are searched for first, as they were
      // found (session 34: 190 s of a 322 s probe went to searches its class's earlier
      // probes had already seen fail).
      int64_t judged = 0, judged_before = 0;
      std::function<absl::Status()> deadline = profile::deadline_check(args->probe_timeout_s);
      auto judging = [&judged, deadline] {
        ++judged;
        return deadline();
      };
      auto note = [&](const profile::ProbeSearch& q) {
        std::fprintf(stderr, "\n  %s", profile::probe_search_line(q, judged - judged_before, calls, box_s).c_str());
        std::fflush(stderr);
        judged_before = judged;
      };
      absl::StatusOr<dsl::GemmDesc> d = profile::probe_key(
          profile::with_deadline(counted_dense, args->probe_timeout_s), s, key, instr, limits, judging,
          std::max<uint32_t>(1, (*box)->report().algo.splitk_num), std::move(gemv_lanes),
          profile::with_deadline(counted_sparse, args->probe_timeout_s),
          args->probe_queue > 1 ? profile::with_deadline(counted_queue, args->probe_timeout_s)
                                : dsl::probe::SparseBatchBox{},
          note, found_before);
      // The descriptor itself goes to the log too: a run whose tables are lost (session
      // 15's runs 3 and 4) still says what each probe found.
      std::fprintf(stderr, "\n  probe took %.1f s: %lld black-box calls in %.1f s (+%.1f s "
                   "waiting for the device turn); %s\n",
                   progress.elapsed() - started, static_cast<long long>(calls), box_s, turn_s,
                   d.ok() ? ("a descriptor: " + dsl::to_string(*d)).c_str()
                          : std::string(d.status().message()).substr(0, 120).c_str());
      probed_since_save = true;
      return d;
    };
    // The match's shapes rank the classes (rank_shapes_of), and every probe point is
    // checked against the heuristic.
    args->probe.rank_shapes = rank_shapes_of(*args);
    args->probe.heuristic = heuristic;
    // With --resume the budget counts from this program's start: the table's load and
    // re-key (up to 90 s per slice with 8 slices on the H200 machine, session 15's run
    // 4) are inside it, so the run's wall time is at most the budget, one probe's limit
    // and the merge.
    if (!args->resume.empty()) {
      args->probe.budget_s = std::max(0.0, args->probe.budget_s - progress.elapsed());
    }
    const double t0 = progress.elapsed();
    absl::StatusOr<profile::ProbeStats> stats =
        profile::probe_classes(table, state, probe, args->probe, show);
    progress.end();
    if (!stats.ok()) {
      std::printf("probe: error: %s\n", std::string(stats.status().message()).c_str());
      return 1;
    }
    std::printf("probe: %lld probes (%lld failed in the instrument), %lld class splits, %lld "
                "classes validated, %lld without a descriptor, %lld revalidated, %lld concluded "
                "earlier (no descriptor; --retry-failed), %lld separating probes, %lld open "
                "probes resumed, %.1f s\n",
                static_cast<long long>(stats->probes),
                static_cast<long long>(stats->instrument_errors),
                static_cast<long long>(stats->splits), static_cast<long long>(stats->validated),
                static_cast<long long>(stats->failed), static_cast<long long>(stats->revalidated),
                static_cast<long long>(stats->concluded),
                static_cast<long long>(stats->separating),
                static_cast<long long>(stats->open_resumed), progress.elapsed() - t0);
    for (const std::string& v : stats->slow_visits) std::printf("slow visit: %s\n", v.c_str());
    for (int c : stats->no_shape) {
      std::printf("class %d: not probed: no shape of its variants in the table (--find-points)\n", c);
    }
  }
  int with_desc = 0;
  for (size_t i = 0; i < table.classes.size(); ++i) {
    const profile::TableClass& c = table.classes[i];
    with_desc += c.desc.has_value();
    std::printf("class %zu %s {%s}: %lld shapes, %zu probes: %s%s%s\n", i, c.family.c_str(),
                profile::to_string(c.cls).c_str(),
                static_cast<long long>(profile::class_shapes(table, static_cast<int>(i))),
                c.probes.size(), c.desc ? dsl::to_string(*c.desc).c_str() : "no desc",
                c.note.empty() ? "" : "; ", c.note.c_str());
  }
  if (!save()) {
    std::printf("error: could not write %s\n", args->out.c_str());
    return 1;
  }
  std::printf("summary: %zu classes (%zu variants), %d with a descriptor, %lld heuristic calls, "
              "%.1f s; wrote %s\n",
              table.classes.size(), table.variants.size(), with_desc,
              static_cast<long long>(state.heuristic_calls),
              progress.elapsed(), args->out.c_str());
  return 0;
}
