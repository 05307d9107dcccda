// The scan through the real runtime::CublasLt on the CPU: the library dlopen'ed is
// tests/runtime/fake/FakeCublasLt.cpp (one algorithm, id 42, attributes 100 + index,
// SPLITK_NUM 1; no tf32 compute type), the device a FakeDriver with host memory.
// So heuristic_uncached, the attribute reading and the reduction to a variant and its
// class run as they do against cuBLASLt, and a family the library refuses fails the
// scan with the library's own message. profile::cublas_answer (the body of
// profile::cublas) through the same handle: the fake's answer is in no class of the
// embedded table, and a shape outside the table's range is refused before the heuristic.
#include <string>

#include "gtest/gtest.h"
#include "profile/CublasProfile.h"
#include "profile/CublasScan.h"
#include "runtime/CublasLt.h"
#include "tests/runtime/FakeDriver.h"

namespace fixbits::profile {
namespace {

using runtime::GemmShape;

class CublasFakeScanTest : public ::testing::Test {
 protected:
  void SetUp() override {
#ifndef FIXBITS_FAKE_CUBLASLT_PATH
    GTEST_SKIP() << "[SKIP] the fake cuBLASLt was not built (FIXBITS_FAKE_CUBLASLT_PATH unset)";
#else
    auto device = std::make_shared<runtime::Device>(std::make_shared<runtime::testing::FakeDriver>());
    runtime::CublasLtOptions o;
    o.library_paths = {FIXBITS_FAKE_CUBLASLT_PATH};
    o.workspace_bytes = 4096;
    absl::StatusOr<std::shared_ptr<runtime::CublasLt>> lt = runtime::CublasLt::open(device, o);
    ASSERT_TRUE(lt.ok()) << lt.status();
    lt_ = *lt;
#endif
  }
  HeuristicFn heuristic() {
    return [this](const GemmShape& s) -> absl::StatusOr<runtime::AlgoConfig> {
      absl::StatusOr<runtime::MatmulReport> r = lt_->heuristic_uncached(s);
      if (!r.ok()) return r.status();
      return r->algo;
    };
  }
  std::shared_ptr<runtime::CublasLt> lt_;
};

TEST_F(CublasFakeScanTest, OneAlgorithmGivesOneVariantOneClassAndOneRunPerCell) {
  CublasTable t{.arch = "sm_90", .library = std::to_string(lt_->version())};
  ScanState st;
  const ScanGrid grid{.ms = {1, 3, 64}, .ns = {1, 5}, .ks = {1, 7, 4096, 524288}};
  ASSERT_TRUE(scan_heuristic(t, st, GemmShape{}, grid, heuristic()).ok());
  EXPECT_EQ(st.heuristic_calls, 3 * 2 * 4);  // no boundary, no bisection
  ASSERT_EQ(t.variants.size(), 1u);
  ASSERT_EQ(t.classes.size(), 1u);
  EXPECT_EQ(to_string(t.variants[0].key),
            "id=42 tile=101 split=0 reduction=103 custom=105 stages=106 inner=107 cluster=108");
  EXPECT_EQ(to_string(t.classes[0].cls), "id=42 split=0 reduction=103 custom=105 inner=107");
  EXPECT_EQ(t.variants[0].shapes, 24);
  for (const auto& runs : t.maps[0].runs) {
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0], (MapRun{.k0 = 1, .variant = 0, .splitk = 1}));
  }
  absl::StatusOr<CublasTable> back = parse_table(write_table(t));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, t);
  absl::StatusOr<MapRun> run = lookup_run(*back, GemmShape{.m = 40, .n = 4, .k = 100000});
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->variant, 0);
  // The same shapes still answer after the uncached calls (nothing was left behind).
  absl::StatusOr<runtime::MatmulReport> cached = lt_->heuristic(GemmShape{.m = 3, .n = 5, .k = 7});
  ASSERT_TRUE(cached.ok()) << cached.status();
  EXPECT_EQ(answer_of(cached->algo), (CublasAnswer{.key = t.variants[0].key, .splitk = 1}));
}

TEST_F(CublasFakeScanTest, AFamilyTheLibraryRefusesFailsWithItsMessage) {
  CublasTable t{.arch = "sm_90"};
  ScanState st;
  const GemmShape tf32{.a_dtype = DType::kTF32, .b_dtype = DType::kTF32, .out_dtype = DType::kF32};
  absl::Status s = scan_heuristic(t, st, tf32, ScanGrid{.ms = {1}, .ns = {1}, .ks = {8}}, heuristic());
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(std::string(s.message()).find("CUBLAS_STATUS_NOT_SUPPORTED"), std::string::npos) << s;
  EXPECT_TRUE(t.maps.empty());
}

TEST_F(CublasFakeScanTest, CublasAnswerLooksTheLibrarysAnswerUpInTheEmbeddedTable) {
  if (!cublas_table(sm90).ok()) GTEST_SKIP() << "[SKIP] " << cublas_table(sm90).status().message();
  absl::Status s = cublas_answer(sm90, *usual_shape({128, 4096, 4096}, DType::kF16), *lt_).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_NE(std::string(s.message()).find("id=42"), std::string::npos) << s;
  EXPECT_NE(std::string(s.message()).find("in no class"), std::string::npos) << s;
  s = cublas_answer(sm90, *usual_shape({0, 4096, 4096}, DType::kF16), *lt_).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange) << s;
  EXPECT_NE(std::string(s.message()).find("GemmShape.m = 0"), std::string::npos) << s;
}

}  // namespace
}  // namespace fixbits::profile
