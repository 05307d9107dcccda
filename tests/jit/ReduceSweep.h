// ReduceSweep: the corpus of our reduction kernels that the partition and hardware
// truth tests share -- descriptors (sum, max, RMSNorm, softmax x f32/f16/bf16 x pinned/
// free), every ReduceConfig (warps 1..32 x elems_per_thread 1..16, powers of two),
// their text keys, and the three fixed-seed input draws every kernel is judged on.
// Softmax on the cancelling draw sees +-4096: exp underflows to 0 off the max, which
// is still a valid, finite input.
// Invariant: the same key always names the same (descriptor, config) and the same
// draw always yields the same bits (fixed seeds, no time or device in the data), so
// a hash recorded on a GPU can be compared with one computed on a CPU later.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "dsl/ReduceDesc.h"
#include "dsl/reference/Reference.h"
#include "dsl/tile/ReduceProgram.h"
#include "runtime/Fnv1a.h"
#include "tests/jit/RandomInputs.h"

namespace fixbits::testing {

struct SweepFamily {
  dsl::ReduceOp op;
  DType dtype;
};

inline std::vector<SweepFamily> sweep_families() {
  std::vector<SweepFamily> out;
  for (dsl::ReduceOp op : {dsl::ReduceOp::kSum, dsl::ReduceOp::kMax, dsl::ReduceOp::kRmsNorm,
                           dsl::ReduceOp::kSoftmax}) {
    for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) out.push_back({op, t});
  }
  return out;
}

// in = out = the family's dtype, f32 accumulator, strip 1024.
inline dsl::ReduceDesc sweep_desc(const SweepFamily& f, dsl::TreeOrder order) {
  dsl::ReduceDesc d;
  d.op = f.op;
  d.in_dtype = f.dtype;
  d.out_dtype = f.dtype;
  d.acc_dtype = DType::kF32;
  d.order = order;
  d.strip = 1024;
  return d;
}

inline std::string family_name(const SweepFamily& f) {
  const dsl::ReduceDesc d = sweep_desc(f, dsl::TreeOrder::kPinned);
  std::string s = dsl::to_string(d);  // reduce{op=sum ... in=f16 ...}
  const size_t op = s.find("op="), in = s.find(" in=");
  return absl::StrCat(s.substr(op + 3, s.find(' ', op) - op - 3), "/",
                      s.substr(in + 4, s.find(' ', in + 1) - in - 4));
}

inline std::vector<dsl::ReduceConfig> sweep_configs() {
  std::vector<dsl::ReduceConfig> out;
  for (int w = 1; w <= 32; w *= 2) {
    for (int e = 1; e <= 16; e *= 2) out.push_back({.warps = w, .elems_per_thread = e});
  }
  return out;
}

// "reduce{op=sum ... strip=1024}|warps=4 elems=8"
inline std::string sweep_key(const dsl::ReduceDesc& d, const dsl::ReduceConfig& c) {
  return absl::StrCat(dsl::to_string(d), "|warps=", c.warps, " elems=", c.elems_per_thread);
}

// The inverse of sweep_key; false on any other text.
inline bool parse_sweep_key(std::string_view key, dsl::ReduceDesc* d, dsl::ReduceConfig* c) {
  const size_t bar = key.find('|');
  if (bar == std::string_view::npos) return false;
  absl::StatusOr<dsl::ReduceDesc> desc = dsl::parse_reduce_desc(key.substr(0, bar));
  if (!desc.ok()) return false;
  const std::string rest(key.substr(bar + 1));
  const size_t space = rest.find(' ');
  if (space == std::string::npos) return false;
  const std::vector<std::string> parts = {rest.substr(0, space), rest.substr(space + 1)};
  if ( parts[0].rfind("warps=", 0) != 0 || parts[1].rfind("elems=", 0) != 0) {
    return false;
  }
  int w = 0, e = 0;
  if (!absl::SimpleAtoi(parts[0].substr(6), &w) || !absl::SimpleAtoi(parts[1].substr(6), &e)) {
    return false;
  }
  *d = *desc;
  *c = dsl::ReduceConfig{.warps = w, .elems_per_thread = e};
  return true;
}

// A row of +L/-L pairs (L = 4096) and small values in [2^-8, 2^-2) in random order: the
// exact sum is small, and which small values an f32 accumulator absorbs into +-L
// depends on the order -- so even an f16/bf16 output shows a changed tree.
inline std::vector<uint32_t> cancelling_bits(DType t, int64_t rows, int64_t cols,
                                             std::mt19937_64& rng) {
  std::uniform_real_distribution<float> mant(1.0f, 2.0f);
  std::uniform_int_distribution<int> expo(-8, -3);
  std::vector<uint32_t> out;
  out.reserve(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<float> row(static_cast<size_t>(cols));
    for (int64_t i = 0; i < cols; ++i) {
      if (i % 4 == 0 && i + 1 < cols) {
        row[i] = 4096.0f;
      } else if (i % 4 == 1) {
        row[i] = -4096.0f;
      } else {
        const float v = std::ldexp(mant(rng), expo(rng));
        row[i] = (rng() & 1) ? v : -v;
      }
    }
    std::shuffle(row.begin(), row.end(), rng);
    for (float v : row) out.push_back(to_bits(t, v));
  }
  return out;
}

// The three draws (rows x cols): 4 x 33001 plain (more than two passes of the widest
// config, 16*32*32 = 16384), 128 x 4099 adversarial (no NaN/inf), 256 x 1000
// cancelling (above). Many rows give narrow outputs chances to show a changed tree.
inline constexpr int kDraws = 3;

inline dsl::reference::ReduceProblem sweep_problem(const dsl::ReduceDesc& d, int draw) {
  static constexpr int64_t kRows[kDraws] = {4, 128, 256};
  static constexpr int64_t kCols[kDraws] = {33001, 4099, 1000};
  static constexpr Mix kMix[kDraws] = {Mix::kPlain, Mix::kAdversarial, Mix::kPlain};
  std::mt19937_64 rng(0x5eed0000u + static_cast<uint64_t>(draw));
  dsl::reference::ReduceProblem p;
  p.rows = kRows[draw];
  p.cols = kCols[draw];
  // Softmax and RMSNorm stay finite on plain data; adversarial draws keep +-L, tiny r,
  // subnormals and -0.0 but no NaN/inf, so no output is NaN by construction.
  p.x = draw == 2 ? cancelling_bits(d.in_dtype, p.rows, p.cols, rng)
                  : random_bits(d.in_dtype, static_cast<size_t>(p.rows * p.cols), rng, kMix[draw]);
  if (d.op == dsl::ReduceOp::kRmsNorm) {
    p.w = random_bits(d.in_dtype, static_cast<size_t>(p.cols), rng, Mix::kPositive);
  }
  p.eps = 1e-5f;
  return p;
}

// FNV-1a 64 over the output's bit patterns as little-endian uint32 words.
inline uint64_t output_hash(const std::vector<uint32_t>& bits) {
  std::string bytes(bits.size() * 4, '\0');
  if (!bits.empty()) std::memcpy(bytes.data(), bits.data(), bytes.size());
  return runtime::fnv1a64(bytes);
}

}  // namespace fixbits::testing
