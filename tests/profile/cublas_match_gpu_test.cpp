// The cuBLAS bit match on a fixed sample (reference §7.2): for each shape below (the
// large-K classes', the wide gate_up layers' and the refitted classes' included) and 24 seeded random shapes per dtype, cuBLASLt and the kernel generated from the
// descriptor of cuBLASLt's own answer for the shape (the path profile::cublas() takes,
// lookup_answer) run on the same random inputs and must return the same bytes
// (profile/match/CublasMatch.h, MatchResult's answer verdict); a descriptor the code
// generator cannot build is checked against its CPU reference instead. A shape where
// cuBLAS drops the tail of its sum is reported, not failed. A shape whose answer has no
// descriptor (its class has none, or no class holds the answer) fails, naming the class:
// the done-when is every shape. The map's verdict (profile::cublas_map) is printed for
// information only. profile::cublas() itself must give the answer's descriptor.
// Skips with [SKIP] <reason> without a device, without cuBLASLt, or while the
// committed table (profile/data/cublas_sm90.tsv.gz) holds no scan.
#include <cmath>
#include <iostream>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "profile/CublasProfile.h"
#include "profile/match/CublasMatch.h"
#include "tests/runtime/GpuTest.h"

namespace fixbits::profile {
namespace {

using runtime::GemmShape;

class CublasMatchGpuTest : public runtime::testing::GpuTest {
 protected:
  void SetUp() override {
    runtime::testing::GpuTest::SetUp();
    if (IsSkipped()) return;
    absl::StatusOr<std::shared_ptr<runtime::Device>> dev = runtime::cuda(0);
    ASSERT_TRUE(dev.ok());
    absl::StatusOr<std::shared_ptr<runtime::CublasLt>> lt = runtime::CublasLt::open(*dev);
    if (!lt.ok()) GTEST_SKIP() << "[SKIP] no cuBLASLt: " << lt.status().message();
    absl::StatusOr<const CublasTable*> table = cublas_table(sm90);
    if (!table.ok()) GTEST_SKIP() << "[SKIP] " << table.status().message();
    if (info().arch != "sm_90") GTEST_SKIP() << "[SKIP] the device is " << info().arch << ", not sm_90";
    lt_ = *lt;
    table_ = *table;
    matcher_ = std::make_unique<CublasMatcher>(*dev, *lt, *table);
  }

  void expect_match(const GemmShape& s, uint64_t seed) {
    absl::StatusOr<MatchResult> r = matcher_->match(s, seed);
    ASSERT_TRUE(r.ok()) << runtime::to_string(s) << ": " << r.status();
    std::cout << runtime::to_string(s) << ": map (cublas_map, for information) "
              << verdict_name(r->verdict) << (r->map_hit ? " hit" : " miss")
              << (r->verdict == Verdict::kIdentical || r->detail.empty() ? "" : ": " + r->detail)
              << "\n";
    expect_cublas_is_the_answer(s);
    if (r->answer_verdict == Verdict::kTailDropped) {
      std::cout << runtime::to_string(s) << ": cuBLAS drops the tail: " << r->answer_detail
                << "\n";
      return;
    }
    EXPECT_EQ(verdict_name(r->answer_verdict), verdict_name(Verdict::kIdentical))
        << runtime::to_string(s) << " (cuBLASLt's answer " << r->answer_algo
        << "): " << verdict_name(r->answer_verdict) << ": " << r->answer_detail;
  }

  // profile::cublas() (its process-wide handle) gives the descriptor of this handle's
  // answer, the one the matcher judged.
  void expect_cublas_is_the_answer(const GemmShape& s) {
    absl::StatusOr<dsl::GemmDesc> got = cublas(sm90, s);
    absl::StatusOr<runtime::MatmulReport> heur = lt_->heuristic(s);
    if (!heur.ok()) {
      EXPECT_FALSE(got.ok()) << runtime::to_string(s) << ": the heuristic refuses it: "
                             << heur.status();
      return;
    }
    absl::StatusOr<dsl::GemmDesc> want = lookup_answer(*table_, s, answer_of(heur->algo));
    ASSERT_EQ(got.ok(), want.ok()) << runtime::to_string(s) << ": cublas() " << got.status()
                                   << ", lookup_answer " << want.status();
    if (got.ok()) {
      EXPECT_EQ(*got, *want) << runtime::to_string(s) << ": cublas() " << dsl::to_string(*got)
                             << ", lookup_answer " << dsl::to_string(*want);
    }
  }

  // expect_match for each shape (seeds from `seed` on), each first printing cuBLASLt's
  // answer and the descriptor profile::cublas() gives it, so a shape the heuristic moved
  // to another class still says so.
  void expect_matches_saying_the_answer(const std::vector<std::pair<Mnk, DType>>& shapes,
                                        uint64_t seed) {
    for (const auto& [mnk, t] : shapes) {
      const GemmShape s = *usual_shape(mnk, t);
      absl::StatusOr<runtime::MatmulReport> heur = lt_->heuristic(s);
      ASSERT_TRUE(heur.ok()) << runtime::to_string(s) << ": " << heur.status();
      absl::StatusOr<dsl::GemmDesc> d = cublas(sm90, s);
      std::cout << runtime::to_string(s) << ": " << runtime::to_string(heur->algo) << " -> "
                << (d.ok() ? dsl::to_string(*d) : std::string(d.status().message())) << "\n";
      expect_match(s, seed++);
    }
  }

  std::shared_ptr<runtime::CublasLt> lt_;
  const CublasTable* table_ = nullptr;
  std::unique_ptr<CublasMatcher> matcher_;
};

TEST_F(CublasMatchGpuTest, FixedShapes) {
  const std::vector<std::pair<Mnk, DType>> shapes = {
      {{1, 4096, 4096}, DType::kF16},   {{128, 4096, 4096}, DType::kF16},
      {{1, 64, 576}, DType::kF16},      {{33, 17, 1000}, DType::kF16},
      {{1, 1, 262144}, DType::kF16},    {{7, 9, 131}, DType::kBF16},
      {{64, 4096, 4096}, DType::kBF16}, {{1, 8, 65536}, DType::kBF16},
      {{64, 512, 4096}, DType::kF8E4M3}, {{1, 256, 1024}, DType::kF8E4M3},
  };
  uint64_t seed = 11;
  for (const auto& [mnk, t] : shapes) expect_match(*usual_shape(mnk, t), seed++);
}

// Shapes of the large-K classes the random shapes (under 2^22 elements) never reach:
// class 54, cuBLAS's segment-K kernel (two segments of whole 64-wide k-tiles, the
// longer last: 156 + 157 tiles at K = 19982, 180 + 181 at 23096, and a K of no probe),
// and class 82, bf16 M = 1 split gemv (docs/cublas.md, sessions 35-36). Each prints
// the answer it got, so a shape the heuristic moved to another class still says so.
TEST_F(CublasMatchGpuTest, LargeKClassShapes) {
  const std::vector<std::pair<Mnk, DType>> shapes = {
      {{64, 16384, 19982}, DType::kF16}, {{64, 11610, 23096}, DType::kF16},
      {{48, 13000, 27001}, DType::kF16}, {{1, 5892, 131137}, DType::kBF16},
  };
  expect_matches_saying_the_answer(shapes, 54);
}

// Shapes past M, N = 16384, where the table was first scanned to (the map widened to
// 65536 by fixbits-cublas-scan --widen-mn, profile/WidenMap.h): the gate_up layers of
// docs/shapes.md (N = 2 x intermediate) at the bench's token counts, and a prefill of
// more than 16384 tokens. Each prints the answer it got.
TEST_F(CublasMatchGpuTest, WideShapes) {
  const std::vector<std::pair<Mnk, DType>> shapes = {
      {{1, 28672, 4096}, DType::kBF16},    {{16, 57344, 8192}, DType::kBF16},
      {{128, 37888, 3584}, DType::kF16},   {{4096, 28672, 4096}, DType::kF16},
      {{1, 59136, 8192}, DType::kF16},     {{20000, 4096, 4096}, DType::kBF16},
      {{128, 28672, 4096}, DType::kF8E4M3}, {{1, 57344, 8192}, DType::kF8E4M3},
  };
  expect_matches_saying_the_answer(shapes, 65536);
}

// The shapes session 37's wide match (M, N to 65536, 2^25 elements) found differing or
// without a class, whose classes session 38 refitted from probes at these very shapes
// (docs/cublas.md): split classes at large K and P (239, 168, 308), a second fixed cut
// (43), a gemv tile cap (149), K-loop steps (328, 329), class 114 at N = 1, and the
// H100-only answer id 13 custom 13 (class 395). Each prints the answer it got.
TEST_F(CublasMatchGpuTest, RefittedClassShapes) {
  const std::vector<std::pair<Mnk, DType>> shapes = {
      {{1, 27087, 1183}, DType::kBF16},  {{214, 1642, 9186}, DType::kBF16},
      {{1144, 124, 26238}, DType::kBF16}, {{668, 120, 24892}, DType::kBF16},
      {{145, 1848, 8122}, DType::kBF16},  {{65536, 1, 55}, DType::kBF16},
      {{7, 18561, 700}, DType::kF16},     {{19298, 6, 246}, DType::kF16},
      {{3094, 138, 8384}, DType::kF16},   {{8, 15482, 18}, DType::kF16},
      {{3635, 19, 3200}, DType::kF16},    {{3064, 5, 2944}, DType::kF16},
      {{14497, 1, 364}, DType::kF16},
  };
  expect_matches_saying_the_answer(shapes, 38);
}

// Session 39's refit through the embedded table: class 184 (f16 id 23 tile 15, split 66),
// refitted from split/8/32 to split/8/64 at the shape where session 39's wide match (seed
// 39) found it differing. It prints the answer it got. (Class 383, bf16 id 24 tile 18, is
// answered only at K >= 140401 in the 13 and 14 x 33793 cells, 4.7e9 elements of B or
// more: session 40's run 2 gave its shape 13x33793x200000 here 170 s on an H100 without a
// verdict, where the matcher took 93 s for LargeKClassShapes' four shapes of at most 3.3e8
// elements; its descriptor rests on the scan's six probes at K = 140401 to 262145.)
TEST_F(CublasMatchGpuTest, Session39ClassShapes) {
  const std::vector<std::pair<Mnk, DType>> shapes = {
      {{106, 22, 72288}, DType::kF16},
  };
  expect_matches_saying_the_answer(shapes, 39);
}

// Class 114 (bf16 id 13 custom 56) holds where both K vectors are contiguous only
// (KLayout): at M = 1 cuBLAS's same kernel deals K to strided lanes, another tree. With
// the tree its probes there found (OtherLayout, session 42) profile::cublas() serves
// those shapes, and they must give cuBLAS's bytes; without it, it refuses them, naming
// the layout, rather than give a descriptor whose bytes would differ. Should the
// answer's class hold at every layout (cuBLASLt answering another class here), its
// descriptor must give cuBLAS's bytes too.
TEST_F(CublasMatchGpuTest, LayoutBoundClassAtTheOtherLayout) {
  // 1x40796x478 was class 114's strided probe (session 38); the other three are the
  // wide draws' shapes without a descriptor (sessions 37, 39 and 42).
  for (const Mnk& mnk : {Mnk{1, 40796, 478}, Mnk{1, 55041, 95}, Mnk{1, 51118, 216},
                         Mnk{1, 55012, 61}}) {
    const GemmShape s = *usual_shape(mnk, DType::kBF16);
    absl::StatusOr<runtime::MatmulReport> heur = lt_->heuristic(s);
    ASSERT_TRUE(heur.ok()) << heur.status();
    absl::StatusOr<int> cls = class_of_answer(*table_, s, answer_of(heur->algo).key);
    ASSERT_TRUE(cls.ok()) << cls.status();
    const TableClass& c = table_->classes[*cls];
    std::cout << runtime::to_string(s) << ": " << runtime::to_string(heur->algo) << ", class "
              << *cls << (c.other ? " (the other layout's tree)" : "") << "\n";
    // Served (a class of any layout, or one with the other layout's tree): cuBLAS's bytes.
    if (c.layout == KLayout::kAny || c.other) {
      expect_match(s, 114 + mnk.k);
      continue;
    }
    absl::StatusOr<dsl::GemmDesc> d = cublas(sm90, s);
    ASSERT_FALSE(d.ok()) << dsl::to_string(*d);
    EXPECT_EQ(d.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_NE(std::string(d.status().message()).find("they are strided"), std::string::npos)
        << d.status();
  }
}

TEST_F(CublasMatchGpuTest, SeededRandomShapes) {
  std::mt19937_64 rng(20261202);
  auto log_uniform = [&](int64_t hi) {
    std::uniform_real_distribution<double> u(0.0, std::log2(static_cast<double>(hi) + 1.0));
    return std::max<int64_t>(1, std::min<int64_t>(hi, static_cast<int64_t>(std::exp2(u(rng)))));
  };
  for (DType t : {DType::kF16, DType::kBF16, DType::kF8E4M3}) {
    for (int i = 0; i < 24; ++i) {
      Mnk mnk;
      do {
        mnk = {log_uniform(4096), log_uniform(4096), log_uniform(int64_t{1} << 17)};
        if (dtype_is_fp8(t)) {  // cuBLASLt's fp8 layouts, as fixbits-cublas-match draws them
          mnk.k = (mnk.k + 15) / 16 * 16;
          mnk.n = (mnk.n + 15) / 16 * 16;
        }
      } while (mnk.m * mnk.k + mnk.k * mnk.n + mnk.m * mnk.n > (int64_t{1} << 22));
      expect_match(*usual_shape(mnk, t), rng());
    }
  }
}

}  // namespace
}  // namespace fixbits::profile
