// robustness_test.cpp — hostile input never crashes or hangs the checker: every prefix of
// a corpus kernel, and many byte-level mutations of it, give a signature or a Status.
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "verify/GcnParser.h"
#include "verify/PtxParser.h"
#include "verify/Signature.h"

namespace fixbits::verify {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void exercise(const std::string& text, int* ok, int* rejected) {
  auto s = signature(text);
  if (s.ok()) {
    ++*ok;
    EXPECT_EQ(s->hex.size(), 16u);
  } else {
    ++*rejected;
    EXPECT_FALSE(s.status().message().empty());
  }
}

TEST(Robustness, PrefixesAndMutationsOfCorpusKernels) {
  const fs::path dir = fs::path(__FILE__).parent_path() / "corpus";
  const std::string files[] = {"reduce-pinned-w2e4-vs-w8e1.a.ptx", "mma-kloop-bk16-vs-bk32.b.ptx",
                               "gcn-reduce-pinned-vs-default.a.s", "chunk-fold-c4-vs-c8.a.ptx"};
  std::mt19937 rng(20260512);
  int ok = 0, rejected = 0;
  const char junk[] = "{}[]();,.%@!:|-0123456789 \n\tvsa";
  for (const std::string& f : files) {
    const std::string text = slurp(dir / f);
    ASSERT_FALSE(text.empty()) << f;
    for (size_t cut = 0; cut < text.size(); cut += 37) exercise(text.substr(0, cut), &ok, &rejected);
    for (int round = 0; round < 300; ++round) {
      std::string m = text;
      int edits = 1 + static_cast<int>(rng() % 8);
      for (int e = 0; e < edits; ++e) {
        size_t at = rng() % m.size();
        switch (rng() % 3) {
          case 0: m[at] = junk[rng() % (sizeof(junk) - 1)]; break;
          case 1: m.erase(at, 1 + rng() % 16); break;
          default: m.insert(at, std::string(1 + rng() % 4, junk[rng() % (sizeof(junk) - 1)])); break;
        }
        if (m.empty()) m.push_back('x');
      }
      exercise(m, &ok, &rejected);
    }
  }
  // Both outcomes occur: mutations are not all rejected, and not all accepted.
  EXPECT_GT(ok, 100);
  EXPECT_GT(rejected, 10);
}

TEST(Robustness, DeepNestingAndHugeOperandListsAreBounded) {
  std::string deep = ".version 8.0\n.visible .entry k()\n";
  deep += std::string(100000, '{');
  deep += "\nret;\n";
  deep += std::string(100000, '}');
  auto a = parse_ptx(deep);
  EXPECT_TRUE(a.ok()) << a.status();
  std::string wide = ".version 8.0\n.visible .entry k()\n{\nmov.b32 %r1";
  for (int i = 0; i < 5000; ++i) wide += ", %r2";
  wide += ";\n}\n";
  auto b = parse_ptx(wide);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(std::string(b.status().message()).find("operands"), std::string::npos);
  std::string gcn = "\t.type k,@function\nk:\n\tv_mov_b32 v0";
  for (int i = 0; i < 5000; ++i) gcn += ", v1";
  auto c = parse_gcn(gcn);
  EXPECT_FALSE(c.ok());
}

TEST(Robustness, TooManyLoopsFallsBackToTheText) {
  std::string body;
  for (int i = 0; i < 5000; ++i) {
    body += "$L" + std::to_string(i) + ":\n\tadd.rn.f32 %r1, %r1, %r2;\n\t@%p1 bra $L" + std::to_string(i) + ";\n";
  }
  const std::string head = ".version 8.0\n.visible .entry k(.param .u64 k_param_0)\n{\n";
  const std::string tail = "\tld.param.b64 %rd1, [k_param_0];\n\tst.global.b32 [%rd1], %r1;\n\tret;\n}\n";
  auto a = signature(head + body + tail);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->kernels[0].roots, 0);  // not trusted: the signature is the text's
  auto b = signature(head + body + "\tmov.b32 %r9, 1;\n" + tail);
  ASSERT_TRUE(b.ok());
  EXPECT_NE(a->hex, b->hex);
}

TEST(Robustness, ReadersAreLinearInStatementLength) {
  // One 8 MiB statement and an 8 MiB header: a reader that rescans the pending statement
  // per character would take hours here.
  std::string body = ".version 8.0\n.visible .entry k()\n{\nmov.b32 %r1, " + std::string(8u << 20, 'a') + ";\nret;\n}\n";
  auto a = parse_ptx(body);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_EQ(a->functions.size(), 1u);
  EXPECT_EQ(a->functions[0].body.size(), 2u);
  std::string header = ".version 8.0\n.visible .entry k(" + std::string(8u << 20, '\n') + ")\n{\nret;\n}\n";
  auto b = parse_ptx(header);
  ASSERT_TRUE(b.ok()) << b.status();
  std::string colons = ".version 8.0\n.visible .entry k()\n{\nx" + std::string(8u << 20, ':') + ";\n}\n";
  auto c = parse_ptx(colons);  // four million labels: over the statement cap
  ASSERT_FALSE(c.ok());
  EXPECT_NE(std::string(c.status().message()).find("statements"), std::string::npos) << c.status();
  std::string gcn = "\t.type k,@function\nk:\n\tv_mov_b32 v0, " + std::string(8u << 20, 'v') + "\n";
  EXPECT_TRUE(parse_gcn(gcn).ok());
}

// A loop carrying n float values, each updated from the next one's hole (a ring): every
// fold reads all the others, so the recurrence rule (docs/verify.md "Loops") must stay
// linear per fold; past kMaxRecurrenceClosure it keys every carried update. One rounding
// changed in the middle of the ring must still split.
std::string ring_kernel(int n, int rz_at) {
  std::string body;
  for (int i = 0; i < n; ++i) {
    body += "\tadd." + std::string(i == rz_at ? "rz" : "rn") + ".f32 %f" + std::to_string(i) + ", %f" +
            std::to_string(i) + ", %f" + std::to_string((i + 1) % n) + ";\n";
  }
  return ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 k_param_0)\n"
         ".reqntid 1\n{\n\tld.param.b64 %rd1, [k_param_0];\n\tld.global.f32 %f0, [%rd1];\n\tmov.b32 %r1, 0;\n$L:\n" +
         body + "\tadd.s32 %r1, %r1, 1;\n\tsetp.lt.u32 %p1, %r1, 100;\n\t@%p1 bra $L;\n"
                "\tst.global.f32 [%rd1], %f0;\n\tret;\n}\n";
}

TEST(Robustness, LoopsCarryingManyValuesStayBoundedAndSound) {
  for (int n : {100, 3000}) {
    SCOPED_TRACE(n);
    auto a = signature(ring_kernel(n, -1));
    auto b = signature(ring_kernel(n, n / 2));
    ASSERT_TRUE(a.ok()) << a.status();
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_NE(a->hex, b->hex) << "a rounding change inside the ring kept the signature";
  }
}

}  // namespace
}  // namespace fixbits::verify
