// fixbits-cublas-lanes: gives gemv classes of a cuBLAS table (fixbits-cublas-scan's) the
// lane count by N that cuBLAS's own launches show (profile/LaneSweep.h), and writes the
// table again. cuBLAS's gemvNSP kernel deals K to blockDim.y lanes and picks its block by
// N; without the rule one descriptor holds only where the count is the probe's.
//
// Usage: fixbits-cublas-lanes --table=IN --classes=I,J,... --out=OUT
//          [--n=FIRST-LAST] [--k=K,K,...] [--budget-s=T]
//   --table: the table to extend (text, as fixbits-cublas-scan --out writes it); its
//   arch and cuBLASLt version must be this machine's.
//   --classes: the gemv classes to sweep (e.g. the id 13 custom 10 classes).
//   --n (default 1-16384, the match's range): the Ns swept at M = 1; --k (default
//   64,1000): the Ks, which must agree at every N; --budget-s (default 300) for all.
//   The table's command line gets this one appended. Each class's steps and the
//   sweep's counts go to stdout.
// Without a GPU, cuBLASLt or CUPTI it says why and exits 0; exit 1 when a sweep fails
// (the table is then not written), 2 on bad arguments.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "profile/CublasTable.h"
#include "profile/LaneSweep.h"
#include "runtime/CublasLt.h"
#include "samples/common/CublasSession.h"
#include "samples/common/FlagArg.h"

using namespace fixbits;

namespace {

struct Args {
  std::string table, out, command;
  std::vector<int> classes;
  profile::LaneSweepOptions sweep;
};

absl::StatusOr<Args> parse_args(int argc, char** argv) {
  Args a;
  a.command = "fixbits-cublas-lanes";
  bool has_classes = false;
  for (int i = 1; i < argc; ++i) {
    const samples::FlagArg arg(argv[i]);
    a.command += " " + arg.text();
    if (auto v = arg.value("--table=")) {
      a.table = *v;
    } else if (auto v = arg.value("--out=")) {
      a.out = *v;
    } else if (auto v = arg.value("--classes=")) {
      has_classes = true;
      for (absl::string_view c : absl::StrSplit(*v, ',', absl::SkipEmpty())) {
        int id = 0;
        if (!absl::SimpleAtoi(c, &id) || id < 0) {
          return absl::InvalidArgumentError("--classes takes class indices >= 0, comma-separated.");
        }
        a.classes.push_back(id);
      }
    } else if (auto v = arg.value("--n=")) {
      const std::vector<std::string> fl = absl::StrSplit(*v, '-');
      if (fl.size() != 2 || !absl::SimpleAtoi(fl[0], &a.sweep.n_first) ||
          !absl::SimpleAtoi(fl[1], &a.sweep.n_last) || a.sweep.n_first < 1 ||
          a.sweep.n_last < a.sweep.n_first) {
        return absl::InvalidArgumentError("--n takes FIRST-LAST with 1 <= FIRST <= LAST.");
      }
    } else if (auto v = arg.value("--k=")) {
      a.sweep.ks.clear();
      for (absl::string_view k : absl::StrSplit(*v, ',', absl::SkipEmpty())) {
        int64_t kk = 0;
        if (!absl::SimpleAtoi(k, &kk) || kk < 1) {
          return absl::InvalidArgumentError("--k takes Ks >= 1, comma-separated.");
        }
        a.sweep.ks.push_back(kk);
      }
      if (a.sweep.ks.empty()) return absl::InvalidArgumentError("--k takes at least one K.");
    } else if (auto v = arg.value("--budget-s=")) {
      if (!absl::SimpleAtod(*v, &a.sweep.budget_s) || a.sweep.budget_s <= 0) {
        return absl::InvalidArgumentError("--budget-s takes seconds > 0.");
      }
    } else {
      return absl::InvalidArgumentError("unknown argument '" + arg.text() +
                                        "' (see the usage at the top of samples/cublas_lanes/main.cpp).");
    }
  }
  if (!a.table.empty() || !a.out.empty() || has_classes) {
    if (a.table.empty() || a.out.empty() || !has_classes) {
      return absl::InvalidArgumentError("--table, --classes and --out go together.");
    }
  }
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  absl::StatusOr<Args> args = parse_args(argc, argv);
  if (!args.ok()) {
    std::fprintf(stderr, "fixbits-cublas-lanes: %s\n", std::string(args.status().message()).c_str());
    return 2;
  }
  if (args->table.empty()) {
    std::printf("skipped: give --table=IN --classes=I,... --out=OUT to sweep (see "
                "docs/cublas.md)\n");
    return 0;
  }
  absl::StatusOr<profile::CublasTable> table = samples::read_table_file(args->table);
  if (!table.ok()) {
    std::printf("error: cannot read --table=%s: %s\n", args->table.c_str(),
                std::string(table.status().message()).c_str());
    return 1;
  }
  std::optional<samples::CublasSession> cu = samples::open_cublas_or_skip();
  if (!cu) return 0;
  if (table->arch != cu->dev->info().arch || table->library != std::to_string(cu->lt->version())) {
    std::printf("error: --table=%s was made on %s with cuBLASLt %s; this is %s with %zu\n",
                args->table.c_str(), table->arch.c_str(), table->library.c_str(),
                cu->dev->info().arch.c_str(), cu->lt->version());
    return 1;
  }
  for (int cls : args->classes) {
    absl::StatusOr<profile::LaneSweep> sw = profile::sweep_lanes(*cu->lt, *table, cls, args->sweep);
    if (!sw.ok()) {
      std::printf("error: class %d: %s\n", cls, std::string(sw.status().message()).c_str());
      return 1;
    }
    std::printf("class %d (%s): %s  (%lld of %lld shapes in the class, %.1f s)\n", cls,
                table->classes[cls].family.c_str(), profile::to_string(sw->steps).c_str(),
                static_cast<long long>(sw->shapes_in_class),
                static_cast<long long>(sw->shapes_asked), sw->seconds);
    std::fflush(stdout);
    table->classes[cls].lanes_by_n = sw->steps;
  }
  table->command += " && " + args->command;
  std::ofstream out(args->out, std::ios::binary | std::ios::trunc);
  out << profile::write_table(*table);
  if (!out.flush()) {
    std::printf("error: cannot write --out=%s\n", args->out.c_str());
    return 1;
  }
  std::printf("wrote %s\n", args->out.c_str());
  return 0;
}
