// hardware_truth_soundness_test (CPU): grades the checker against the hardware.
// Reads the bits hardware_truth_gpu_test recorded on a GPU (default
// tests/verify/data/hardware_truth_reductions.tsv, or $FIXBITS_TRUTH_FILE), compiles
// and signs every kernel it names on the CPU, and checks:
//   - soundness: two kernels the checker calls equivalent have identical hardware
//     hashes on every draw;
//   - every pinned config of one descriptor gave identical hardware bits, equal to
//     the CPU reference's (the descriptor, not the config, fixes the bits);
//   - the file covers the whole sweep of ReduceSweep.h;
// and prints the over-split ratio (checker classes / hardware classes) per family.
// Skips, naming the file, when it has not been recorded. A self-test feeds the
// grader a table with a planted unsound merge and checks that it is reported.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "codegen/Compile.h"
#include "gtest/gtest.h"
#include "tests/jit/ReduceSweep.h"
#include "verify/Signature.h"

namespace fixbits {
namespace {

namespace fs = std::filesystem;
using dsl::ReduceConfig;
using dsl::ReduceDesc;
using dsl::TreeOrder;

struct TruthRow {
  std::string key;
  std::string hashes;  // the draws' hashes joined by tabs
};

// Parses the file's text; malformed lines are returned as errors (line numbers 1-based).
std::vector<TruthRow> parse_truth(const std::string& text, std::vector<std::string>* errors) {
  std::vector<TruthRow> rows;
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty() || line[0] == '#') continue;
    const size_t tab = line.find('\t');
    if (tab == std::string::npos) {
      errors->push_back(absl::StrFormat("line %d has no tab: '%s'", n, line));
      continue;
    }
    TruthRow r{line.substr(0, tab), line.substr(tab + 1)};
    int fields = 1;
    for (char c : r.hashes) fields += c == '\t';
    ReduceDesc d;
    ReduceConfig c;
    if (fields != testing::kDraws || !testing::parse_sweep_key(r.key, &d, &c)) {
      errors->push_back(absl::StrFormat("line %d is not '<key>\\t<%d hashes>': '%s'", n,
                                        testing::kDraws, line));
      continue;
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

struct Grade {
  std::vector<std::string> unsound;  // one message per violating pair
  // family -> (checker classes, hardware classes)
  std::map<std::string, std::pair<size_t, size_t>> classes;
};

// Groups rows by `signature_of(key)` and checks one hash tuple per signature.
template <typename SignatureOf>
Grade grade(const std::vector<TruthRow>& rows, SignatureOf signature_of) {
  Grade g;
  std::map<std::string, const TruthRow*> by_sig;
  std::map<std::string, std::set<std::string>> sigs, truths;
  for (const TruthRow& r : rows) {
    const std::string sig = signature_of(r.key);
    ReduceDesc d;
    ReduceConfig c;
    testing::parse_sweep_key(r.key, &d, &c);
    d.order = TreeOrder::kPinned;  // a family is (op, dtypes): both orders
    std::string family = dsl::to_string(d);
    if (size_t o = family.find(" order=pinned"); o != std::string::npos) family.erase(o, 13);
    sigs[family].insert(sig);
    truths[family].insert(r.hashes);
    auto [it, fresh] = by_sig.try_emplace(sig, &r);
    if (!fresh && it->second->hashes != r.hashes) {
      g.unsound.push_back(absl::StrFormat("'%s' and '%s' share signature %s but the hardware "
                                          "gave different bits",
                                          it->second->key, r.key, sig));
    }
  }
  for (const auto& [family, s] : sigs) g.classes[family] = {s.size(), truths[family].size()};
  return g;
}

TEST(HardwareTruthGrader, ReportsAPlantedUnsoundMerge) {
  const std::string text =
      "# comment\n"
      "reduce{op=sum axis=row in=f32 acc=f32 out=f32 order=free strip=1024}|warps=1 elems=1\t1\t2\t3\n"
      "reduce{op=sum axis=row in=f32 acc=f32 out=f32 order=free strip=1024}|warps=2 elems=1\t1\t2\t4\n"
      "reduce{op=sum axis=row in=f32 acc=f32 out=f32 order=pinned strip=1024}|warps=2 elems=1\t5\t6\t7\n"
      "not a row\n";
  std::vector<std::string> errors;
  std::vector<TruthRow> rows = parse_truth(text, &errors);
  ASSERT_EQ(rows.size(), 3u);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("line 5 has no tab"), std::string::npos) << errors[0];
  // A "checker" that merges every free kernel: the two free rows differ on draw 2.
  Grade g = grade(rows, [](const std::string& key) {
    return key.find("order=free") != std::string::npos ? std::string("F") : std::string("P");
  });
  ASSERT_EQ(g.unsound.size(), 1u);
  EXPECT_NE(g.unsound[0].find("share signature F"), std::string::npos) << g.unsound[0];
  ASSERT_EQ(g.classes.size(), 1u);
  EXPECT_EQ(g.classes.begin()->second, (std::pair<size_t, size_t>{2, 3}));
  // A checker that keeps them apart is sound.
  EXPECT_TRUE(grade(rows, [](const std::string& key) { return key; }).unsound.empty());
}

fs::path truth_file() {
  if (const char* p = std::getenv("FIXBITS_TRUTH_FILE"); p != nullptr && *p != '\0') return p;
  return fs::path(__FILE__).parent_path().parent_path() / "verify" / "data" /
         "hardware_truth_reductions.tsv";
}

TEST(HardwareTruth, CheckerIsSoundOnRecordedHardwareBits) {
  const fs::path path = truth_file();
  if (!fs::exists(path)) {
    GTEST_SKIP() << "[SKIP] missing " << path.string()
                 << ": record it on a GPU with FIXBITS_TRUTH_OUT=<that path> "
                    "jit_hardware_truth_gpu_test";
  }
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::vector<std::string> errors;
  std::vector<TruthRow> rows = parse_truth(ss.str(), &errors);
  for (const std::string& e : errors) ADD_FAILURE() << path.string() << ": " << e;

  // Coverage: the file names exactly the sweep's kernels.
  std::set<std::string> want, have;
  for (const testing::SweepFamily& f : testing::sweep_families()) {
    for (TreeOrder o : {TreeOrder::kPinned, TreeOrder::kFree}) {
      for (const ReduceConfig& c : testing::sweep_configs()) want.insert(testing::sweep_key(testing::sweep_desc(f, o), c));
    }
  }
  for (const TruthRow& r : rows) {
    EXPECT_TRUE(have.insert(r.key).second) << "repeated key " << r.key;
    EXPECT_TRUE(want.count(r.key)) << "key outside the sweep (re-record the file): " << r.key;
  }
  EXPECT_EQ(have.size(), want.size()) << "the file does not cover the sweep; re-record it";

  // Pinned: one set of bits per descriptor, equal to the CPU reference's.
  std::map<std::string, std::string> pinned_bits;
  for (const TruthRow& r : rows) {
    ReduceDesc d;
    ReduceConfig c;
    ASSERT_TRUE(testing::parse_sweep_key(r.key, &d, &c));
    if (d.order != TreeOrder::kPinned) continue;
    const std::string desc = dsl::to_string(d);
    if (!pinned_bits.count(desc)) {
      std::string ref;
      for (int draw = 0; draw < testing::kDraws; ++draw) {
        absl::StatusOr<std::vector<uint32_t>> bits = dsl::reference::reduce(d, testing::sweep_problem(d, draw));
        ASSERT_TRUE(bits.ok()) << bits.status();
        absl::StrAppendFormat(&ref, "%s%016x", draw ? "\t" : "", testing::output_hash(*bits));
      }
      EXPECT_EQ(r.hashes, ref) << r.key << ": the GPU's pinned bits differ from the CPU reference";
      pinned_bits[desc] = r.hashes;
    }
    EXPECT_EQ(r.hashes, pinned_bits[desc]) << r.key << ": a pinned config changed the bits";
  }

  // Soundness of the checker, and its over-split against the hardware.
  Grade g = grade(rows, [](const std::string& key) -> std::string {
    ReduceDesc d;
    ReduceConfig c;
    testing::parse_sweep_key(key, &d, &c);
    absl::StatusOr<tile::Program> prog = dsl::reduce(d, c);
    if (!prog.ok()) return "build error: " + key;
    absl::StatusOr<codegen::CompiledKernel> k = codegen::compile(*prog, codegen::Target::kNvptxSm90a);
    if (!k.ok()) return "build error: " + key;
    absl::StatusOr<verify::Signature> s = verify::signature(k->text, verify::Target::kPtx);
    return s.ok() ? s->hex : "verify error: " + key;  // unique: splits, never merges
  });
  for (const std::string& u : g.unsound) ADD_FAILURE() << "UNSOUND: " << u;
  for (const auto& [family, c] : g.classes) {
    std::printf("HARDWARE %-70s checker %2zu / hardware %2zu = %5.2f\n", family.c_str(), c.first,
                c.second, static_cast<double>(c.first) / c.second);
  }
}

}  // namespace
}  // namespace fixbits
