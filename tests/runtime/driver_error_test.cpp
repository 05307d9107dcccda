// Tests for the driver error mapping (runtime/DriverError.h): the message names the
// API, call, code name, number and description; the absl code follows the number.
#include "runtime/DriverError.h"

#include "gtest/gtest.h"

namespace fixbits::runtime {
namespace {

TEST(DriverError, MessageNamesCallCodeAndDescription) {
  absl::Status s = driver_error(DriverApi::kCuda, "cuModuleLoadDataEx", 218,
                                "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "CUDA driver call cuModuleLoadDataEx failed with CUDA_ERROR_INVALID_PTX (218): a PTX "
            "JIT compilation failed.");
}

TEST(DriverError, DetailIsAppended) {
  absl::Status s = driver_error(DriverApi::kCuda, "cuModuleLoadDataEx", 218,
                                "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed.\n",
                                "JIT error log: line 3: syntax error");
  EXPECT_EQ(s.message(),
            "CUDA driver call cuModuleLoadDataEx failed with CUDA_ERROR_INVALID_PTX (218): a PTX "
            "JIT compilation failed. JIT error log: line 3: syntax error");
}

TEST(DriverError, MissingNamesAreSaidSo) {
  absl::Status s = driver_error(DriverApi::kHip, "hipMalloc", 2, nullptr, "");
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(),
            "HIP runtime call hipMalloc failed with an unnamed error (2): the driver gave no "
            "description.");
}

TEST(DriverError, SuccessIsAnInternalInvariant) {
  absl::Status s = driver_error(DriverApi::kCuda, "cuInit", 0, "CUDA_SUCCESS", "no error");
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_NE(s.message().find("internal invariant"), absl::string_view::npos);
}

TEST(DriverError, Classification) {
  EXPECT_EQ(classify_driver_error(1), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(classify_driver_error(2), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(classify_driver_error(3), absl::StatusCode::kUnavailable);
  EXPECT_EQ(classify_driver_error(100), absl::StatusCode::kUnavailable);
  EXPECT_EQ(classify_driver_error(200), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(classify_driver_error(209), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(classify_driver_error(222), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(classify_driver_error(500), absl::StatusCode::kNotFound);
  EXPECT_EQ(classify_driver_error(700), absl::StatusCode::kAborted);
  EXPECT_EQ(classify_driver_error(701), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(classify_driver_error(719), absl::StatusCode::kAborted);
  EXPECT_EQ(classify_driver_error(999), absl::StatusCode::kInternal);
  EXPECT_EQ(classify_driver_error(-7), absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace fixbits::runtime
