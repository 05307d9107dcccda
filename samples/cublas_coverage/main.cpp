// fixbits-cublas-coverage: how much of the bit match's shape distribution a cuBLAS
// table covers, on the CPU (no GPU, no cuBLASLt). It draws the shapes
// fixbits-cublas-match would draw with the same flags and seed (profile::
// draw_match_sequence, the match's draws, input seeds included, so the
// sequences agree), looks each up in the table (profile::lookup) and counts per family
// the shapes that land in a class WITH a descriptor. It does so twice: for the table as
// written, and after fixbits-cublas-scan --resume's re-key (profile::rekey_table with
// today's class key, then profile::probe_classes with no budget: a changed class is
// validated only where the probes it kept suffice), printing the classes per family
// under each key. Nothing is probed; the table is not written.
// Exit 0 after printing (or run bare: it says --table is needed), 1 when the table
// cannot be read or re-keyed, 2 on bad arguments.
//
// Usage: fixbits-cublas-coverage --table=PATH [--shapes=N] [--fp8-shapes=N] [--seed=S]
//          [--max-dim=N] [--max-k=N] [--max-elems=N] [--dtypes=f16,bf16,f8e4m3]
//          [--per-octave=N] [--top=N]
//   --top=N: after each report, the N classes without a descriptor that the most drawn
//   shapes land in (shapes, family, class key, the first 160 characters of its note).
//   Defaults as fixbits-cublas-match's: 10000 shapes each for f16 and bf16, 1000 for
//   f8e4m3, seed 1, M and N to 16384, K to 2^19, 2^22 elements; --per-octave (2) is the
//   table's scan's, for the re-keyed classes' probe points.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "samples/common/CublasSession.h"
#include "samples/common/DtypesFlag.h"
#include "samples/common/FlagArg.h"
#include "absl/strings/str_split.h"
#include "profile/CublasProfile.h"
#include "profile/CublasScan.h"
#include "profile/MatchDraws.h"

using namespace fixbits;

namespace {

struct Args {
  std::string table_path;
  int64_t shapes = 10000, fp8_shapes = 1000;
  uint64_t seed = 1;
  profile::MatchShapeLimits limits;
  int per_octave = 2;
  int64_t top = 0;
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
    int64_t x = 0;
    if (auto v = value("--table=")) {
      a.table_path = *v;
    } else if (value("--shapes=")) {
      st = int_flag("--shapes=", 0, &a.shapes);
    } else if (value("--fp8-shapes=")) {
      st = int_flag("--fp8-shapes=", 0, &a.fp8_shapes);
    } else if (auto v = value("--seed=")) {
      if (!absl::SimpleAtoi(*v, &a.seed)) return absl::InvalidArgumentError("--seed takes an integer.");
    } else if (value("--max-dim=")) {
      st = int_flag("--max-dim=", 1, &a.limits.max_dim);
    } else if (value("--max-k=")) {
      st = int_flag("--max-k=", 16, &a.limits.max_k);
    } else if (value("--max-elems=")) {
      st = int_flag("--max-elems=", 3, &a.limits.max_elems);
    } else if (value("--per-octave=")) {
      st = int_flag("--per-octave=", 1, &x);
      a.per_octave = static_cast<int>(x);
    } else if (value("--top=")) {
      st = int_flag("--top=", 0, &a.top);
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
  if (a.dtypes.empty()) return absl::InvalidArgumentError("--dtypes names no dtype.");
  return a;
}

struct Count {
  int64_t shapes = 0, covered = 0, no_desc = 0, refused = 0, outside = 0;
};

// Per family: the classes, those with a descriptor, and the drawn shapes' lookups.
void report(const char* title, const profile::CublasTable& t, const Args& a) {
  std::map<std::string, std::pair<int64_t, int64_t>> classes;  // family -> (all, with desc)
  for (const profile::TableClass& c : t.classes) {
    ++classes[c.family].first;
    classes[c.family].second += c.desc.has_value();
  }
  std::map<std::string, Count> counts;
  std::map<int, int64_t> open_shapes;  // class without a descriptor -> drawn shapes in it
  for (const profile::MatchDraw& draw :
       profile::draw_match_sequence(a.seed, a.dtypes, a.shapes, a.fp8_shapes, a.limits)) {
    const runtime::GemmShape& s = draw.shape;
    Count& c = counts[profile::family_of(s)];
    ++c.shapes;
    const absl::Status st = profile::lookup(t, s).status();
    if (st.ok()) {
      ++c.covered;
    } else if (absl::IsOutOfRange(st) || absl::IsNotFound(st)) {
      ++c.outside;
    } else if (absl::IsFailedPrecondition(st) &&
               std::string(st.message()).find("has no validated descriptor") !=
                   std::string::npos) {
      ++c.no_desc;
      if (absl::StatusOr<profile::MapRun> run = profile::lookup_run(t, s); run.ok() && run->variant >= 0) {
        ++open_shapes[t.variants[static_cast<size_t>(run->variant)].cls];
      }
    } else {
      ++c.refused;  // a refused cell (or any other failure of the lookup)
    }
  }
  std::printf("%s\n%-16s %8s %10s %8s %8s %8s %8s %8s %9s\n", title, "family", "classes",
              "with_desc", "shapes", "covered", "no_desc", "refused", "outside", "coverage");
  for (const auto& [fam, c] : counts) {
    const auto cl = classes[fam];
    std::printf("%-16s %8lld %10lld %8lld %8lld %8lld %8lld %8lld %8.1f%%\n", fam.c_str(),
                static_cast<long long>(cl.first), static_cast<long long>(cl.second),
                static_cast<long long>(c.shapes), static_cast<long long>(c.covered),
                static_cast<long long>(c.no_desc), static_cast<long long>(c.refused),
                static_cast<long long>(c.outside),
                c.shapes ? 100.0 * static_cast<double>(c.covered) / static_cast<double>(c.shapes)
                         : 0.0);
  }
  std::vector<std::pair<int64_t, int>> order;
  for (const auto& [cls, n] : open_shapes) order.push_back({-n, cls});
  std::sort(order.begin(), order.end());
  for (size_t i = 0; i < order.size() && static_cast<int64_t>(i) < a.top; ++i) {
    const profile::TableClass& c = t.classes[static_cast<size_t>(order[i].second)];
    std::printf("  %6lld %-15s {%s}\n         %s\n", static_cast<long long>(-order[i].first),
                c.family.c_str(), profile::to_string(c.cls).c_str(), c.note.substr(0, 160).c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  absl::StatusOr<Args> args = parse_args(argc, argv);
  if (!args.ok()) {
    std::fprintf(stderr, "fixbits-cublas-coverage: %s\n",
                 std::string(args.status().message()).c_str());
    return 2;
  }
  if (args->table_path.empty()) {
    std::printf("skipped: give --table=PATH (a table written by fixbits-cublas-scan); see "
                "docs/cublas.md\n");
    return 0;
  }
  absl::StatusOr<profile::CublasTable> table = samples::read_table_file(args->table_path);
  if (!table.ok()) {
    std::printf("error: cannot use --table=%s: %s\n", args->table_path.c_str(),
                std::string(table.status().message()).c_str());
    return 1;
  }
  std::printf("table %s: %s, cuBLASLt %s, %zu classes, %zu variants\n",
              args->table_path.c_str(), table->arch.c_str(), table->library.c_str(),
              table->classes.size(), table->variants.size());
  report("as written:", *table, *args);

  profile::ScanState state;
  absl::StatusOr<profile::RekeyStats> rk = profile::rekey_table(*table, state);
  absl::Status st = rk.ok() ? profile::rebuild_shapes(*table, state, args->per_octave)
                            : rk.status();
  absl::StatusOr<profile::ProbeStats> ps = absl::InternalError("not run");
  if (st.ok()) {
    // No budget: a changed class gets a descriptor only from the probes it kept.
    const profile::ProbeFn none = [](const runtime::GemmShape&, const profile::CublasKey&,
                                     const std::vector<dsl::GemmDesc>&) -> absl::StatusOr<dsl::GemmDesc> {
      return absl::InternalError("fixbits-cublas-coverage never probes");
    };
    ps = profile::probe_classes(*table, state, none, profile::ProbeOptions{.budget_s = -1});
    st = ps.status();
  }
  if (!st.ok()) {
    std::printf("error: cannot re-key %s: %s\n", args->table_path.c_str(),
                std::string(st.message()).c_str());
    return 1;
  }
  int64_t open = 0;
  for (const profile::TableClass& c : table->classes) open += !c.desc.has_value();
  std::printf("\nre-keyed: %lld classes -> %lld (%lld unchanged, %lld changed, %lld descriptors "
              "dropped, %lld probes kept, %lld classes validated by kept probes alone); %lld "
              "without a descriptor\n",
              static_cast<long long>(rk->classes_before), static_cast<long long>(rk->classes_after),
              static_cast<long long>(rk->unchanged), static_cast<long long>(rk->changed),
              static_cast<long long>(rk->descs_dropped), static_cast<long long>(rk->probes_kept),
              static_cast<long long>(ps->validated), static_cast<long long>(open));
  report("after the re-key (no new probe):", *table, *args);
  return 0;
}
