// profile::cublas() and profile::cublas_map() on the CPU: the map's descriptor of a
// known shape validates; cublas(), which asks cuBLASLt's heuristic, returns
// FailedPrecondition naming cublas_map() on a machine without a CUDA device (kept, not
// retried, the same from several threads); the table and shape errors of the contract
// come first, so both entry points give them on any machine.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "profile/CublasProfile.h"
#include "runtime/Runtime.h"

namespace fixbits::profile {
namespace {

using runtime::GemmShape;

bool has(const absl::Status& s, std::string_view part) {
  return std::string(s.message()).find(part) != std::string::npos;
}

// The reason there is no GPU here, or "" when there is one (then cublas() asks it).
std::string no_device_reason() {
  absl::StatusOr<std::shared_ptr<runtime::Device>> dev = runtime::cuda(0);
  return dev.ok() ? "" : std::string(dev.status().message());
}

TEST(CublasMap, KnownShapesGiveValidDescriptors) {
  if (!cublas_table(sm90).ok()) GTEST_SKIP() << "[SKIP] " << cublas_table(sm90).status().message();
  for (DType t : {DType::kF16, DType::kBF16, DType::kF8E4M3}) {
    absl::StatusOr<dsl::GemmDesc> d = cublas_map(sm90, {64, 512, 4096}, t);
    ASSERT_TRUE(d.ok()) << dtype_name(t) << ": " << d.status();
    EXPECT_TRUE(dsl::validate(*d).ok()) << dsl::validate(*d);
    EXPECT_EQ(d->a_dtype, t);
    EXPECT_EQ(d->out_dtype, dtype_is_fp8(t) ? DType::kF16 : t);
    // The Mnk overload is the GemmShape one at the usual call.
    absl::StatusOr<dsl::GemmDesc> same = cublas_map(sm90, *usual_shape({64, 512, 4096}, t));
    ASSERT_TRUE(same.ok()) << same.status();
    EXPECT_EQ(*same, *d);
  }
}

TEST(Cublas, WithoutADeviceIsFailedPreconditionNamingTheMap) {
  const std::string reason = no_device_reason();
  if (reason.empty()) GTEST_SKIP() << "[SKIP] a CUDA device is present: cublas() asks it";
  // The first calls race to open the process-wide handle; all get the same status.
  std::vector<absl::Status> got(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < got.size(); ++i) {
    threads.emplace_back([&got, i] { got[i] = cublas(sm90, {1, 4096, 4096}, DType::kF16).status(); });
  }
  for (std::thread& t : threads) t.join();
  const absl::Status first = got[0];
  EXPECT_EQ(first.code(), absl::StatusCode::kFailedPrecondition) << first;
  EXPECT_TRUE(has(first, "profile::cublas_map()")) << first;
  EXPECT_TRUE(has(first, "86.14%")) << first;
  EXPECT_TRUE(has(first, "no CUDA device")) << first;
  EXPECT_TRUE(has(first, reason)) << first;  // runtime::cuda's own message, passed through
  for (const absl::Status& s : got) EXPECT_EQ(s, first);
  // Kept: a later call, on another shape and dtype, answers the same without reopening.
  const auto start = std::chrono::steady_clock::now();
  absl::Status again = cublas(sm90, {64, 512, 4096}, DType::kBF16).status();
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(again, first);
  EXPECT_LT(ms, 50.0);
  EXPECT_EQ(cublas(sm90, *usual_shape({1, 4096, 4096}, DType::kF16)).status(), first);
}

TEST(Cublas, TableAndShapeErrorsComeBeforeTheDevice) {
  if (!cublas_table(sm90).ok()) GTEST_SKIP() << "[SKIP] " << cublas_table(sm90).status().message();
  using Fn = absl::StatusOr<dsl::GemmDesc> (*)(Arch, const GemmShape&);
  for (Fn fn : {static_cast<Fn>(&cublas), static_cast<Fn>(&cublas_map)}) {
    const GemmShape f16 = *usual_shape({1, 1, 1}, DType::kF16);
    GemmShape s = f16;
    s.m = 0;
    absl::Status st = fn(sm90, s).status();
    EXPECT_EQ(st.code(), absl::StatusCode::kOutOfRange) << st;
    EXPECT_TRUE(has(st, "GemmShape.m = 0")) << st;
    s = f16;
    s.n = int64_t{1} << 40;
    st = fn(sm90, s).status();
    EXPECT_EQ(st.code(), absl::StatusCode::kOutOfRange) << st;
    EXPECT_TRUE(has(st, "GemmShape.n = ")) << st;
    s = f16;
    s.k = int64_t{1} << 40;
    st = fn(sm90, s).status();
    EXPECT_EQ(st.code(), absl::StatusCode::kOutOfRange) << st;
    EXPECT_TRUE(has(st, "GemmShape.k = ")) << st;
    s = f16;
    s.out_dtype = DType::kF32;  // f16 x f16 -> f32: a family the table lacks
    st = fn(sm90, s).status();
    EXPECT_EQ(st.code(), absl::StatusCode::kNotFound) << st;
    EXPECT_TRUE(has(st, "f16:f32:nn")) << st;
    st = fn(static_cast<Arch>(7), f16).status();
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
    EXPECT_TRUE(has(st, "arch 7")) << st;
  }
  for (auto fn : {static_cast<absl::StatusOr<dsl::GemmDesc> (*)(Arch, Mnk, DType)>(&cublas),
                  static_cast<absl::StatusOr<dsl::GemmDesc> (*)(Arch, Mnk, DType)>(&cublas_map)}) {
    absl::Status st = fn(sm90, {1, 1, 1}, DType::kF32).status();
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
    EXPECT_TRUE(has(st, "dtype f32")) << st;
  }
}

}  // namespace
}  // namespace fixbits::profile
