// MatchDraws: see MatchDraws.h.
#include "profile/MatchDraws.h"

#include <algorithm>
#include <cmath>

#include "profile/CublasProfile.h"

namespace fixbits::profile {
namespace {

int64_t log_uniform(std::mt19937_64& rng, int64_t hi) {
  std::uniform_real_distribution<double> u(0.0, std::log2(static_cast<double>(hi) + 1.0));
  return std::max<int64_t>(1, std::min<int64_t>(hi, static_cast<int64_t>(std::exp2(u(rng)))));
}

}  // namespace

uint32_t draw_input_bits(DType t, std::mt19937_64& rng, bool with_subnormal) {
  const uint64_t r = rng();
  if (r % 97 == 0) return to_bits(t, -0.0f);
  if (with_subnormal && r % 101 == 0) return 1;  // smallest positive subnormal of any format
  const float f = std::ldexp(1.0f + static_cast<float>((r >> 8) % 64) / 64.0f,
                             static_cast<int>((r >> 16) % 7) - 3) *
                  (((r >> 24) & 1) ? -1.0f : 1.0f);
  return to_bits(t, f, Saturation::kSatFinite);
}

std::vector<int64_t> spread(int64_t extent, int64_t want) {
  std::vector<int64_t> v;
  if (extent <= want) {
    for (int64_t i = 0; i < extent; ++i) v.push_back(i);
    return v;
  }
  for (int64_t i = 0; i < want; ++i) v.push_back(i * (extent - 1) / (want - 1));
  return v;
}

runtime::GemmShape draw_match_shape(std::mt19937_64& rng, DType t, const MatchShapeLimits& limits) {
  runtime::GemmShape s = *usual_shape({1, 1, 1}, t);
  const int64_t km = dtype_is_fp8(t) ? 16 : 1;
  while (true) {
    s.m = log_uniform(rng, limits.max_dim);
    s.n = log_uniform(rng, limits.max_dim);
    s.k = (log_uniform(rng, limits.max_k) + km - 1) / km * km;
    if (km > 1) s.n = std::min(limits.max_dim, (s.n + km - 1) / km * km);  // fp8: n too
    if (s.m * s.k + s.k * s.n + s.m * s.n <= limits.max_elems) return s;
  }
}

std::vector<MatchDraw> draw_match_sequence(uint64_t seed, const std::vector<DType>& dtypes,
                                           int64_t shapes, int64_t fp8_shapes,
                                           const MatchShapeLimits& limits) {
  std::vector<MatchDraw> out;
  std::mt19937_64 rng(seed);
  for (DType t : dtypes) {
    const int64_t n = dtype_is_fp8(t) ? fp8_shapes : shapes;
    for (int64_t i = 0; i < n; ++i) {
      MatchDraw d;
      d.shape = draw_match_shape(rng, t, limits);
      d.input_seed = rng();
      out.push_back(d);
    }
  }
  return out;
}

uint64_t draw_seed(uint64_t input_seed, int64_t d) {
  uint64_t z = input_seed + static_cast<uint64_t>(d) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace fixbits::profile
