// MatchDraws: see MatchDraws.h.
#include "profile/MatchDraws.h"

#include <cmath>

namespace fixbits::profile {

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

}  // namespace fixbits::profile
