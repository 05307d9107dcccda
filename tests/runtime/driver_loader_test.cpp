// Tests that a missing CUDA driver / HIP runtime is reported, not crashed on:
// the loader is pointed at library names that do not exist.
#include "gtest/gtest.h"
#include "runtime/CudaDriver.h"
#include "runtime/HipDriver.h"
#include "runtime/Runtime.h"

namespace fixbits::runtime {
namespace {

constexpr const char* kNoSuchLibrary = "libfixbits_no_such_driver.so.1";

TEST(DriverLoader, MissingCudaLibraryIsUnavailableWithDlerror) {
  absl::StatusOr<std::shared_ptr<Driver>> d = open_cuda_driver(0, kNoSuchLibrary);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), absl::StatusCode::kUnavailable);
  const std::string msg(d.status().message());
  EXPECT_EQ(msg.rfind("no CUDA driver found (libfixbits_no_such_driver.so.1): ", 0), 0u) << msg;
  // dlerror's text follows: it names the library and why it could not be opened.
  EXPECT_NE(msg.find("cannot open shared object file"), std::string::npos) << msg;
  EXPECT_FALSE(cuda_device_count(kNoSuchLibrary).ok());
}

TEST(DriverLoader, MissingHipLibraryIsUnavailableWithDlerror) {
  absl::StatusOr<std::shared_ptr<Driver>> d = open_hip_driver(0, kNoSuchLibrary);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), absl::StatusCode::kUnavailable);
  const std::string msg(d.status().message());
  EXPECT_EQ(msg.rfind("no HIP runtime found (libfixbits_no_such_driver.so.1): ", 0), 0u) << msg;
}

TEST(DriverLoader, LibraryWithoutTheDriverSymbolsNamesTheMissingOne) {
  // libm exists everywhere and exports none of the driver's functions.
  absl::StatusOr<std::shared_ptr<Driver>> d = open_cuda_driver(0, "libm.so.6");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().message(),
            "The CUDA driver libm.so.6 lacks the function cuGetErrorName; it is older than "
            "fixbits supports.");
}

TEST(DriverLoader, ProcessWideAccessorsRememberTheirResult) {
  // On a machine without the driver both calls fail with the same message; with one,
  // both return the same Device object.
  absl::StatusOr<std::shared_ptr<Device>> a = cuda();
  absl::StatusOr<std::shared_ptr<Device>> b = cuda();
  ASSERT_EQ(a.ok(), b.ok());
  if (a.ok()) {
    EXPECT_EQ(a->get(), b->get());
  } else {
    EXPECT_EQ(a.status(), b.status());
    EXPECT_NE(a.status().message().find("CUDA"), absl::string_view::npos);
  }
  absl::StatusOr<std::shared_ptr<Device>> h = hip();
  if (!h.ok()) {
    EXPECT_NE(h.status().message().find("HIP"), absl::string_view::npos);
  }
}

TEST(DriverLoader, NegativeOrdinalIsRejectedWhenADriverExists) {
  absl::StatusOr<std::shared_ptr<Device>> d = cuda(-1);
  ASSERT_FALSE(d.ok());
  if (cuda().ok()) {
    EXPECT_EQ(d.status().code(), absl::StatusCode::kNotFound);
    EXPECT_NE(d.status().message().find("CUDA device -1 does not exist"), absl::string_view::npos);
  }
}

}  // namespace
}  // namespace fixbits::runtime
