// CublasSession: what a cuBLAS sample (scan, match, lanes) opens before its work, the
// CUDA device and a cuBLASLt handle on it, and the table file it reads.
//
// Contract: open_cublas_or_skip() gives both, or prints "skipped: <why>" (no CUDA device,
// no cuBLASLt) and gives nullopt, on which the sample exits 0 (a machine without a GPU
// is no error). read_table_file(path) parses the text table at path (profile::
// parse_table), or InvalidArgument saying the file cannot be read / why it does not parse.
#pragma once

#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "absl/status/statusor.h"
#include "profile/CublasTable.h"
#include "runtime/CublasLt.h"
#include "runtime/Runtime.h"

namespace fixbits::samples {

struct CublasSession {
  std::shared_ptr<runtime::Device> dev;
  std::shared_ptr<runtime::CublasLt> lt;
};

inline std::optional<CublasSession> open_cublas_or_skip() {
  absl::StatusOr<std::shared_ptr<runtime::Device>> dev = runtime::cuda(0);
  if (!dev.ok()) {
    std::printf("skipped: no CUDA device: %s\n", std::string(dev.status().message()).c_str());
    return std::nullopt;
  }
  absl::StatusOr<std::shared_ptr<runtime::CublasLt>> lt = runtime::CublasLt::open(*dev);
  if (!lt.ok()) {
    std::printf("skipped: %s\n", std::string(lt.status().message()).c_str());
    return std::nullopt;
  }
  return CublasSession{*dev, *lt};
}

inline absl::StatusOr<profile::CublasTable> read_table_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) return absl::InvalidArgumentError("the file cannot be read");
  return profile::parse_table(text.str());
}

}  // namespace fixbits::samples
