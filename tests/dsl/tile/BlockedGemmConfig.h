// BlockedGemmConfig (tests only): the register-blocked knob setting the GEMM tests
// sweep — `warps` warps, each owning warp_m_tiles x warp_n_tiles matrix tiles, with
// rows_per_thread = block_n = 1 (the scalar-path knobs, which the matrix paths
// ignore). One definition for the program, compile, interpreter and GPU tests.
#pragma once

#include "dsl/tile/GemmProgram.h"

namespace fixbits::testing {

inline dsl::GemmConfig blocked(int warps, int warp_m_tiles, int warp_n_tiles) {
  return {.warps = warps, .rows_per_thread = 1, .block_n = 1, .warp_m_tiles = warp_m_tiles,
          .warp_n_tiles = warp_n_tiles};
}

}  // namespace fixbits::testing
