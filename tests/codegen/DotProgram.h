// DotProgram (tests only): the tile programs the dot tests compile, interpret and run
// — one block computes d = dot(a, b, c) of a logical m x k x n problem held in
// (TM, TK) and (TK, TN) tiles — plus the independent CPU chain they must equal.
//
// Program parameters: (a, b, c, d, m, k, n): a m x k and b k x n row-major of the
// input type, c and d m x n row-major f32, m/k/n i32 (the logical sizes; m, n at most
// TM, TN). Loads are masked: a's padding is -0.0 and b's +0.0, so every padded
// product is -0.0 and leaves the chain's bits unchanged (x + -0.0 == x, also for
// x = +0.0); c's padding is +0.0; only the m x n logical outputs are stored.
// Without k_loop, k <= TK and one dot covers K. With k_loop (the Triton shape), a
// loop k0 = 0, TK, 2TK, ... < k loads the (TM, TK) and (TK, TN) slices at k0 and
// chains dot(a_k0, b_k0, acc) into the carried acc — the same chain as one dot over
// k, since each dot continues the previous one's accumulator in k order.
// Invariant: dot_chain(...) == what Program.h's kDot defines for the logical
// problem (std::fma, k = 0..k-1), written without the DSL, the interpreter or the
// reference library.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "dsl/FloatFormat.h"
#include "dsl/tile/Program.h"

namespace fixbits::testing {

struct DotShape {
  int64_t tm = 32, tk = 8, tn = 32;  // tile extents
  int64_t m = 32, k = 8, n = 32;     // logical sizes (<= the tile's)
};

inline DType dot_dtype(tile::Elem e) {
  return e == tile::Elem::kF16 ? DType::kF16 : (e == tile::Elem::kBF16 ? DType::kBF16 : DType::kF32);
}

namespace dot_detail {

// Offsets and mask of a (rows, cols) tile at (row0, col0) of a row-major logical
// (r, c) matrix; row0 / col0 are i32 scalars.
struct Tile2 {
  tile::Value off, mask;
};
inline Tile2 tile_index(tile::Builder& b, int64_t rows, int64_t cols, tile::Value r, tile::Value c,
                        tile::Value row0, tile::Value col0) {
  tile::Value idx = b.arange(rows * cols);                                   // (rows*cols) i32
  tile::Value row = b.div(idx, b.const_int(tile::Elem::kI32, cols));
  tile::Value col = b.sub(idx, b.mul(row, b.const_int(tile::Elem::kI32, cols)));
  row = b.add(row, row0);
  col = b.add(col, col0);
  tile::Value in_rows = b.compare(tile::CompareOp::kLt, row, r);
  tile::Value in_cols = b.compare(tile::CompareOp::kLt, col, c);
  tile::Value mask = b.select(in_rows, in_cols, in_rows);  // in_rows && in_cols
  return {b.add(b.mul(row, c), col), mask};
}

}  // namespace dot_detail

// The sweep both the CPU compile test and the GPU test run: (shape, warps, k_loop),
// padded and exact tiles, K = 1, K past the unroll limit, a loop of dots over K
// tiles, 1/2/4/8 warps.
struct DotCase {
  DotShape s;
  int warps = 1;
  bool k_loop = false;
};
inline std::vector<DotCase> dot_sweep() {
  std::vector<DotCase> out;
  for (int w : {1, 2, 4, 8}) {
    out.push_back({{64, 16, 64, 61, 13, 59}, w});
    out.push_back({{64, 16, 64, 64, 16, 64}, w});
    out.push_back({{16, 128, 16, 13, 120, 15}, w});         // the unroll limit passed
    out.push_back({{64, 16, 64, 63, 77, 64}, w, true});     // 5 dots chained over K
  }
  // K = 1 needs M and N of at least the block's threads.
  out.push_back({{32, 1, 32, 31, 1, 29}, 1});
  out.push_back({{64, 1, 64, 64, 1, 63}, 2});
  out.push_back({{32, 1, 32, 32, 3, 32}, 1, true});         // K tiles of 1
  return out;
}

// The program described above, for `in` inputs and `warps` warps.
inline absl::StatusOr<tile::Program> dot_program(const DotShape& s, tile::Elem in, int warps,
                                                 bool k_loop = false) {
  tile::Builder b(absl::StrFormat("dot_%dx%dx%d_%s_w%d%s", s.tm, s.tk, s.tn, tile::elem_name(in), warps,
                                  k_loop ? "_kloop" : ""));
  b.set_num_warps(warps);
  b.set_grid("rows");
  const DType dt = dot_dtype(in);
  tile::Value pa = b.param("a", tile::Type::ptr(dt));
  tile::Value pb = b.param("b", tile::Type::ptr(dt));
  tile::Value pc = b.param("c", tile::Type::ptr(DType::kF32));
  tile::Value pd = b.param("d", tile::Type::ptr(DType::kF32));
  tile::Value m = b.param("m", tile::Type::scalar(tile::Elem::kI32));
  tile::Value k = b.param("k", tile::Type::scalar(tile::Elem::kI32));
  tile::Value n = b.param("n", tile::Type::scalar(tile::Elem::kI32));
  tile::Value zero = b.const_int(tile::Elem::kI32, 0);
  dot_detail::Tile2 icd = dot_detail::tile_index(b, s.tm, s.tn, m, n, zero, zero);
  tile::Value c = b.reshape(b.load(pc, icd.off, icd.mask, b.const_f32(0.0f)), {s.tm, s.tn});
  // d = dot(a[:, k0:k0+TK], b[k0:k0+TK, :], acc), the masked slices at k0.
  auto dot_at = [&](tile::Value k0, tile::Value acc) {
    dot_detail::Tile2 ia = dot_detail::tile_index(b, s.tm, s.tk, m, k, zero, k0);
    dot_detail::Tile2 ib = dot_detail::tile_index(b, s.tk, s.tn, k, n, k0, zero);
    tile::Value a = b.reshape(b.load(pa, ia.off, ia.mask, b.const_float(in, -0.0f)), {s.tm, s.tk});
    tile::Value bt = b.reshape(b.load(pb, ib.off, ib.mask, b.const_float(in, 0.0f)), {s.tk, s.tn});
    return b.dot(a, bt, acc);                                                 // (TM, TN) f32
  };
  tile::Value d;
  if (k_loop) {
    std::vector<tile::Value> it = b.begin_for(zero, k, b.const_int(tile::Elem::kI32, s.tk), {c});
    d = b.end_for({dot_at(it[0], it[1])})[0];
  } else {
    d = dot_at(zero, c);
  }
  b.store(pd, icd.off, b.reshape(d, {s.tm * s.tn}), icd.mask);
  return b.finish();
}

// Program.h's kDot chain for the logical problem, straight from the bit patterns:
// d[i][j] = fma(a[i][k-1], b[k-1][j], ... fma(a[i][0], b[0][j], c[i][j]) ...), then an
// f32 NaN written as 0x7fffffff. `reverse` runs k downwards instead (a wrong order,
// for showing that the tests can tell).
inline std::vector<uint32_t> dot_chain(const DotShape& s, DType in, const std::vector<uint32_t>& a,
                                       const std::vector<uint32_t>& b, const std::vector<uint32_t>& c,
                                       bool reverse = false) {
  std::vector<uint32_t> d(static_cast<size_t>(s.m * s.n));
  for (int64_t i = 0; i < s.m; ++i) {
    for (int64_t j = 0; j < s.n; ++j) {
      float acc = std::bit_cast<float>(c[static_cast<size_t>(i * s.n + j)]);
      for (int64_t t = 0; t < s.k; ++t) {
        const int64_t kk = reverse ? s.k - 1 - t : t;
        acc = std::fma(to_float(in, a[static_cast<size_t>(i * s.k + kk)]),
                       to_float(in, b[static_cast<size_t>(kk * s.n + j)]), acc);
      }
      d[static_cast<size_t>(i * s.n + j)] = std::isnan(acc) ? 0x7fffffffu : std::bit_cast<uint32_t>(acc);
    }
  }
  return d;
}

}  // namespace fixbits::testing
