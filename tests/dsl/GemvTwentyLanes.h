// GemvTwentyLanes: the A row of the hand-worked 20-lane gemv tree (cuBLAS's gemvNSP at
// N > 8448: 20 strided lanes of 4-element tiles, fold 16, 8, 4, 2, 1 over 32 slots, lanes
// 20..31 absent), for the reference's test and the program's (b = 1 throughout). The
// working is at GemmReference.GemvTwentyLaneTreeByHand: the fold in order gives 4r,
// folding 8 before 16 gives 5r (f16 L = 1024, r = 2^-15).
#pragma once

#include <cmath>
#include <vector>

namespace fixbits::dsl::testing {

inline constexpr int kTwentyLaneK = 212;

// a[0] = L, a[64] = -L, a[32] = 3r, a[48] = L, a[128] = -L, a[208] = r, else 0.
inline std::vector<float> twenty_lane_row() {
  const float big = 1024.0f, r = std::ldexp(1.0f, -15);
  std::vector<float> a(kTwentyLaneK, 0.0f);
  a[0] = big;
  a[64] = -big;
  a[32] = 3 * r;
  a[48] = big;
  a[128] = -big;
  a[208] = r;
  return a;
}

}  // namespace fixbits::dsl::testing
