// ReduceGpuRun: what the reduction GPU tests share: one run of a reduction through
// jit::ReduceRunner (create, upload, launch, download: y's bits) and random problems
// for fused rows.
// first_difference names the first element where two outputs' bits differ.
// Invariant: run_reduce gives the runner's error unchanged (the config's Status names
// its field); fused_gpu_problem draws from `rng` only, so a test's seed fixes its rows.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "dsl/reference/Reference.h"
#include "jit/ReduceRunner.h"
#include "tests/jit/RandomInputs.h"

namespace fixbits::testing {

// "" when `got` and `want` are the same bits (memcmp); otherwise what differs: the
// lengths, or the first differing element and both values in hex.
inline std::string first_difference(const std::vector<uint32_t>& got, const std::vector<uint32_t>& want) {
  if (got.size() != want.size()) {
    return absl::StrFormat("%d elements, want %d", got.size(), want.size());
  }
  if (std::memcmp(got.data(), want.data(), got.size() * 4) == 0) return "";
  size_t i = 0;
  while (got[i] == want[i]) ++i;
  return absl::StrFormat("element %d is 0x%x, want 0x%x", i, got[i], want[i]);
}

// y's bits of one launch; `launches` (when given) gets the runner's kernel count.
inline absl::StatusOr<std::vector<uint32_t>> run_reduce(const std::shared_ptr<runtime::Device>& device,
                                                        const dsl::ReduceDesc& d, const dsl::ReduceConfig& cfg,
                                                        const dsl::reference::ReduceProblem& p,
                                                        size_t* launches = nullptr) {
  auto runner = jit::ReduceRunner::create(device, d, cfg);
  if (!runner.ok()) return runner.status();
  if (launches != nullptr) *launches = runner->phases().size();
  if (auto s = runner->upload(p); !s.ok()) return s;
  if (auto s = runner->launch(); !s.ok()) return s;
  return runner->download();
}

// Rows of plain values (softmax: a +-L would leave every other exp 0) or adversarial
// ones without NaN/inf (RMSNorm); row 2, where there is one, adversarial with NaN and
// +-inf. RMSNorm's w positive; eps 1e-5.
inline dsl::reference::ReduceProblem fused_gpu_problem(const dsl::ReduceDesc& d, int64_t rows, int64_t cols,
                                                       std::mt19937_64& rng) {
  dsl::reference::ReduceProblem p;
  p.rows = rows;
  p.cols = cols;
  p.x.reserve(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r) {
    const Mix mix = (r == 2 || d.op == dsl::ReduceOp::kRmsNorm) ? Mix::kAdversarial : Mix::kPlain;
    std::vector<uint32_t> row = random_bits(d.in_dtype, static_cast<size_t>(cols), rng, mix, r == 2);
    p.x.insert(p.x.end(), row.begin(), row.end());
  }
  if (d.op == dsl::ReduceOp::kRmsNorm) p.w = random_bits(d.in_dtype, static_cast<size_t>(cols), rng, Mix::kPositive);
  p.eps = 1e-5f;
  return p;
}

}  // namespace fixbits::testing
