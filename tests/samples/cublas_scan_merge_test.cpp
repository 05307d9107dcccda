// Tests of fixbits-cublas-scan --merge (samples/cublas_scan/main.cpp), run as a program
// on this CPU: two tables that separate --resume runs of the committed table wrote,
// each with its own class changed, put together into one that holds both changes and
// both runs' commands; tables that changed one class twice, a missing table and a
// missing --resume are refused, naming the problem, and nothing is written. Also the
// arguments --find-points needs (one process on a resumed table), checked before any
// device is looked for, and --plan: the visits a --resume run would make, listed with
// no device and nothing written.
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "profile/CublasTable.h"
#include "profile/EmbeddedTable.h"

namespace fixbits::profile {
namespace {

namespace fs = std::filesystem;

struct Ran {
  int code = -1;       // the program's exit status
  std::string output;  // its stdout and stderr
};

Ran run_scan(const std::string& args) {
  Ran r;
  const std::string cmd = std::string(FIXBITS_CUBLAS_SCAN_PATH) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) r.output.append(buf, n);
  const int st = pclose(p);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

void write(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

absl::StatusOr<CublasTable> read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return parse_table(text.str());
}

class CublasScanMerge : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("fixbits_scan_merge_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    absl::StatusOr<std::string> text = embedded_cublas_sm90_text();
    ASSERT_TRUE(text.ok()) << text.status();
    absl::StatusOr<CublasTable> base = parse_table(*text);
    ASSERT_TRUE(base.ok()) << base.status();
    ASSERT_GT(base->classes.size(), 6u);
    base_ = *base;
    write(dir_ / "base.tsv", *text);
    out_ = dir_ / "out.tsv";
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The base with class `cls`'s note set to `note` and `run` appended to its command,
  // as a --resume run that visited only that class writes it.
  std::string run_table(const std::string& name, int cls, const std::string& note,
                        const std::string& run) {
    CublasTable t = base_;
    t.classes[cls].note = note;
    t.command += " && " + run;
    write(dir_ / name, write_table(t));
    return (dir_ / name).string();
  }

  // fixbits-cublas-scan --resume=<base> --merge=<tables> --out=<out_>.
  Ran merge(const std::string& tables) {
    return run_scan("--resume=" + (dir_ / "base.tsv").string() + " --merge=" + tables +
                    " --out=" + out_.string());
  }

  fs::path dir_;
  fs::path out_;  // where merge() writes
  CublasTable base_;
};

TEST_F(CublasScanMerge, TwoRunsOfOneTableBecomeOneWithBothChangesAndCommands) {
  const std::string a = run_table("a.tsv", 3, "run A visited class 3", "scan --classes=3");
  const std::string b = run_table("b.tsv", 5, "run B visited class 5", "scan --classes=5");
  const Ran r = merge(a + "," + b);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("summary (2 of 2 tables merged)"), std::string::npos) << r.output;
  absl::StatusOr<CublasTable> merged = read(out_);
  ASSERT_TRUE(merged.ok()) << merged.status();
  ASSERT_EQ(merged->classes.size(), base_.classes.size());
  for (size_t c = 0; c < base_.classes.size(); ++c) {
    const std::string want = c == 3   ? "run A visited class 3"
                             : c == 5 ? "run B visited class 5"
                                      : base_.classes[c].note;
    EXPECT_EQ(merged->classes[c].note, want) << "class " << c;
  }
  EXPECT_EQ(merged->variants, base_.variants);
  const std::string runs = base_.command + " && scan --classes=3 && scan --classes=5 && ";
  EXPECT_EQ(merged->command.substr(0, runs.size()), runs) << merged->command;
  EXPECT_NE(merged->command.find("--merge="), std::string::npos) << merged->command;
}

TEST_F(CublasScanMerge, OneClassChangedByBothRunsIsRefusedAndNothingIsWritten) {
  const std::string a = run_table("a.tsv", 3, "run A", "scan A");
  const std::string b = run_table("b.tsv", 3, "run B", "scan B");
  const Ran r = merge(a + "," + b);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("class 3 was changed by slice 0 and by slice 1"), std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(out_));
}

TEST_F(CublasScanMerge, AMissingTableOrResumeIsNamed) {
  const std::string a = run_table("a.tsv", 3, "run A", "scan A");
  const std::string missing = (dir_ / "missing.tsv").string();
  Ran r = merge(a + "," + missing);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find(missing + ": no table merged"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(out_)) << "a merge that lost a table wrote one";
  r = run_scan("--merge=" + a + " --out=" + out_.string());
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--merge puts together tables"), std::string::npos) << r.output;
  r = merge("");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--merge names no table"), std::string::npos) << r.output;
}

TEST_F(CublasScanMerge, FindPointsNeedsOneProcessOnAResumedTable) {
  Ran r = run_scan("--find-points --out=" + out_.string());
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--find-points gives a resumed table's variants"), std::string::npos)
      << r.output;
  r = run_scan("--resume=" + (dir_ / "base.tsv").string() + " --find-points --jobs=2 --out=" +
               out_.string());
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("no --jobs"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(out_));
}

// --plan names each class a --resume run would visit with these options and the shape
// it would probe first, then the --classes list, and writes nothing. Of two f16 classes
// of the committed table that have a descriptor and scanned shapes, the first (named in
// --classes) is revalidated; the second, stripped of its descriptor, probes and rules,
// is probed from nothing at a point the map gives one of its own variants.
TEST_F(CublasScanMerge, PlanListsTheVisitsOfAResumedRunWithoutProbing) {
  std::vector<int> picked;
  for (size_t c = 0; c < base_.classes.size() && picked.size() < 2; ++c) {
    const TableClass& tc = base_.classes[c];
    if (tc.family == "f16:f16:nn" && tc.desc && !tc.probes.empty() &&
        class_shapes(base_, static_cast<int>(c)) > 0) {
      picked.push_back(static_cast<int>(c));
    }
  }
  ASSERT_EQ(picked.size(), 2u);
  const int kept = picked[0], stripped = picked[1];
  CublasTable t = base_;
  TableClass& gone = t.classes[stripped];
  gone.desc.reset();
  gone.probes.clear();
  gone.rules.clear();
  gone.lanes_by_n.clear();
  gone.lane_tile_cap = 0;
  gone.layout = KLayout::kAny;
  gone.note = "forgotten by the test";
  write(dir_ / "plan.tsv", write_table(t));
  const Ran r = run_scan("--resume=" + (dir_ / "plan.tsv").string() +
                         " --plan --dtypes=f16 --max-probe-k=131072 --classes=" +
                         std::to_string(kept) + "," + std::to_string(stripped));
  ASSERT_EQ(r.code, 0) << r.output;
  const TableClass& k = base_.classes[kept];
  std::vector<std::string> rules;
  for (const SpanRule& rule : k.rules) rules.push_back(to_string(rule));
  std::string want = absl::StrFormat("class %d f16:f16:nn {%s}: revalidate (has a descriptor), %d probes",
                                     kept, to_string(k.cls), k.probes.size());
  if (!rules.empty()) want += ", rules " + absl::StrJoin(rules, ",");
  EXPECT_NE(r.output.find(want + ": first probe at "), std::string::npos) << want << "\n" << r.output;
  const size_t at = r.output.find(absl::StrFormat("class %d f16:f16:nn {%s}: no descriptor, 0 probes: first probe at ",
                                                  stripped, to_string(gone.cls)));
  ASSERT_NE(at, std::string::npos) << r.output;
  // The point is one of the class's own variants' (the map gives its shapes).
  int m = 0, n = 0, kk = 0;
  ASSERT_EQ(std::sscanf(r.output.c_str() + r.output.find("first probe at ", at) + 15, "%dx%dx%d",
                        &m, &n, &kk),
            3)
      << r.output;
  runtime::GemmShape s = *parse_family("f16:f16:nn");
  s.m = m, s.n = n, s.k = kk;
  absl::StatusOr<MapRun> run = lookup_run(base_, s);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(base_.variants[run->variant].cls, stripped) << m << "x" << n << "x" << kk;
  EXPECT_NE(r.output.find("plan: 2 visits (revalidating a class with a descriptor: 1)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find(absl::StrFormat("\n--classes=%d,%d\n", kept, stripped)), std::string::npos)
      << r.output;
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator{}), 2)
      << "--plan wrote a file";
}

TEST_F(CublasScanMerge, PlanNeedsAReadableResumedTableAndNoDeviceOptions) {
  Ran r = run_scan("--plan");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--plan lists what a --resume run"), std::string::npos) << r.output;
  r = run_scan("--resume=" + (dir_ / "base.tsv").string() + " --plan --probe-at=1x64x576:f16");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("no --jobs, --merge, --probe-at"), std::string::npos) << r.output;
  // An empty --classes list makes the run probe nothing, so the plan lists nothing.
  r = run_scan("--resume=" + (dir_ / "base.tsv").string() + " --plan --dtypes=f16 --classes=");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("plan: 0 visits"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("first probe at"), std::string::npos) << r.output;
  const std::string missing = (dir_ / "missing.tsv").string();
  r = run_scan("--resume=" + missing + " --plan");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("error: cannot plan --resume=" + missing), std::string::npos) << r.output;
}

}  // namespace
}  // namespace fixbits::profile
