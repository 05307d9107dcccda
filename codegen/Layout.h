// Layout: where each element of a tile lives — which register of which lane of
// which warp. Blocked layouts only: along every dimension d a thread holds
// elems_per_thread[d] consecutive elements, lanes[d] lanes and then warps[d]
// warps tile the dimension, so shape[d] = elems_per_thread[d]*lanes[d]*warps[d]
// (no replication, no holes). LLVM-free.
//
// Contract (for every valid layout L and every slot s with s.reg < regs(L),
// s.lane < lane_count(L), s.warp < warp_count(L)):
//   slot_of(L, coord_of(L, s)) == s, and coord_of is a bijection onto the tile.
// Linearisation of registers, lanes and warps across dimensions follows `order`
// (fastest-varying dimension first), so for a rank-1 tile:
//   index = (warp * lanes + lane) * elems_per_thread + reg.
// Worked example: shape (8), ept 2, lanes 4, warps 1: lane 1 holds elements 2, 3;
//   coord_of({reg 1, lane 3, warp 0}) == {7}.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace fixbits::codegen {

struct Layout {
  std::vector<int64_t> shape;
  std::vector<int64_t> elems_per_thread;
  std::vector<int> lanes;
  std::vector<int> warps;
  std::vector<int> order;  // dims fastest-varying first, e.g. {1, 0} for row-major
  bool operator==(const Layout&) const = default;
};

struct Slot {
  int64_t reg = 0;
  int lane = 0;
  int warp = 0;
  bool operator==(const Slot&) const = default;
};

// OK, or InvalidArgument naming the dimension whose factors do not multiply out.
absl::Status check(const Layout& l);
int rank(const Layout& l);
int64_t regs(const Layout& l);       // registers per thread: product of elems_per_thread
int lane_count(const Layout& l);     // product of lanes (the warp size)
int warp_count(const Layout& l);     // product of warps
std::vector<int64_t> coord_of(const Layout& l, const Slot& s);
Slot slot_of(const Layout& l, const std::vector<int64_t>& coord);
std::string to_string(const Layout& l);  // "blocked(shape=8x4 ept=1x4 lanes=8x1 warps=1x1 order=1,0)"

// The blocked layout codegen gives a tile of `shape` over `warps` warps of
// `warp_size` lanes: the rank-1 layout of the tile's row-major (flat) index, so
// thread t holds flat elements [t*R, t*R + R), R = elements / threads, and a
// reshape between ranks never moves data. Rank 2, (A, B):
//   R a multiple of B: ept (R/B, B), lanes (warp_size, 1), warps (warps, 1) — each
//     thread holds whole rows, the last dimension in registers;
//   B a multiple of R: ept (1, R), the B/R column groups of a row take the lanes
//     (then warps) first, the rows the rest — consecutive lanes hold consecutive
//     R-element pieces of one row, which is what a coalesced load of a row-major
//     tile wants. Example: (4, 128) over 4 warps of 32: ept (1,4) lanes (1,32)
//     warps (4,1): warp w holds row w, lane l its columns 4l..4l+3.
// Order {1, 0} for rank 2. Fails (naming the shape) when the elements are not a
// multiple of warp_size * warps (rank 1: the extent), or the flat split does not
// fall on the dimensions (R and B, or B/R and the lanes, do not divide).
absl::Status blocked_layout(const std::vector<int64_t>& shape, int warp_size, int warps,
                            Layout* out);

// The row-major (flat) index of `coord` in a tile of the layout's shape.
int64_t flat_index(const Layout& l, const std::vector<int64_t>& coord);

// The rank-(n-1) layout of reducing dimension `axis` away (only dimensions that
// are wholly in registers, or a rank-1 tile, reduce to a uniform scalar layout,
// which is reported as an empty shape).
Layout drop_dim(const Layout& l, int axis);

}  // namespace fixbits::codegen
