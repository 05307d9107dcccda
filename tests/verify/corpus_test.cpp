// corpus_test.cpp — runs every case of tests/verify/corpus/ and checks its written verdict:
// pairs <case>.a.<ext>/<case>.b.<ext> must be equivalent or differ (with an explanation),
// <case>-fail.<ext> must be rejected with a Status.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "verify/Signature.h"

namespace fixbits::verify {
namespace {

namespace fs = std::filesystem;

fs::path corpus_dir() { return fs::path(__FILE__).parent_path() / "corpus"; }

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string expect_line(const std::string& text) {
  size_t p = text.find("EXPECT: ");
  if (p == std::string::npos) return "";
  size_t e = text.find('\n', p);
  return text.substr(p + 8, e - p - 8);
}

TEST(Corpus, EveryCaseMatchesItsVerdict) {
  int pairs = 0, equivalent_pairs = 0, differing = 0, failures = 0;
  for (const auto& entry : fs::directory_iterator(corpus_dir())) {
    const std::string name = entry.path().filename().string();
    const std::string ext = entry.path().extension().string();
    if (ext != ".ptx" && ext != ".s") continue;
    const std::string text = slurp(entry.path());
    if (name.find("-fail.") != std::string::npos) {
      SCOPED_TRACE(name);
      ASSERT_EQ(expect_line(text).rfind("error", 0), 0u) << "a -fail case must say EXPECT: error";
      auto s = signature(text);
      EXPECT_FALSE(s.ok()) << "accepted with signature " << (s.ok() ? s->hex : "");
      if (!s.ok()) {
        EXPECT_GT(s.status().message().size(), 20u);
      }
      ++failures;
      continue;
    }
    const std::string marker = ".a" + ext;
    if (name.size() <= marker.size() || name.substr(name.size() - marker.size()) != marker) continue;
    SCOPED_TRACE(name);
    const std::string base = name.substr(0, name.size() - marker.size());
    const fs::path other = entry.path().parent_path() / (base + ".b" + ext);
    ASSERT_TRUE(fs::exists(other)) << "missing the .b half of " << name;
    const std::string verdict = expect_line(text);
    ASSERT_FALSE(verdict.empty()) << "no EXPECT line";
    auto eq = equivalent(text, slurp(other));
    ASSERT_TRUE(eq.ok()) << eq.status();
    ++pairs;
    if (verdict == "equivalent") {
      EXPECT_TRUE(eq->equivalent) << eq->explanation;
      EXPECT_EQ(eq->signature_a, eq->signature_b);
      ++equivalent_pairs;
    } else {
      ASSERT_EQ(verdict.rfind("differs", 0), 0u) << "unknown verdict '" << verdict << "'";
      EXPECT_FALSE(eq->equivalent) << "expected: " << verdict;
      EXPECT_NE(eq->signature_a, eq->signature_b);
      // A kernel the walk does not summarize (a loop under a thread condition) keeps its
      // text as its signature; the explanation says so instead of naming a node.
      EXPECT_TRUE(eq->explanation.find("first differing node") != std::string::npos ||
                  eq->explanation.find("keeps its launch geometry and text") != std::string::npos)
          << eq->explanation;
      ++differing;
    }
    // Each half is equivalent to itself, and the verdict is symmetric.
    auto self = equivalent(text, text);
    ASSERT_TRUE(self.ok());
    EXPECT_TRUE(self->equivalent);
    auto flipped = equivalent(slurp(other), text);
    ASSERT_TRUE(flipped.ok());
    EXPECT_EQ(flipped->equivalent, eq->equivalent);
  }
  // The corpus is not allowed to shrink silently.
  EXPECT_GE(pairs, 94);  // docs/verify.md "Corpus and tests": 94 pairs on 2026-12-03
  EXPECT_GE(equivalent_pairs, 40);
  EXPECT_GE(differing, 54);
  EXPECT_GE(failures, 5);
}

}  // namespace
}  // namespace fixbits::verify
