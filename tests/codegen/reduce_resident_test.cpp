// ReduceConfig.keep_passes: the row kept in registers between the passes of a fused
// RMSNorm / softmax (kRow, one block per row), on the CPU. With keep_passes = N,
// dsl::reduce loads the row's first N passes (elements [0, N*Q)) once, before any
// loop, and reuses those registers for the statistic and the elementwise pass; every
// loop that reads x starts at N*Q. So a row of at most N*Q elements is read from
// memory once (the loops run zero times), and:
//   - structure: exactly N loads of x outside loops; every loop that loads x starts
//     at the constant N*Q (so it runs zero times when cols <= N*Q);
//   - bits: the test interpreter's output equals reference::reduce's bits (memcmp of
//     the bit vectors) for the pinned order (the interpreter runs rank-1 reduces only,
//     so the free order is checked by structure here and on the GPU), N = 1, 2, 4, 8,
//     over 1-element rows, rows shorter than, equal to, between and longer than Q and
//     N*Q, non-powers of two, Q wider than the block, adversarial values (NaN, inf,
//     -0.0, subnormals, large cancelling values) and split rows (blocks_per_row, whose
//     kernels are unchanged: the statistic and the rows come from other kernels); the
//     inputs are shown to tell trees apart (another strip gives other bits), so a
//     kernel chaining its kept passes in another order would fail;
//   - the knob is off by default (no load of x outside loops) and is refused, naming
//     the field and its value, for plain reductions, columns, split rows, negative
//     values and more than kMaxKeptPerThread kept values per thread.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <random>

#include "dsl/reference/Reference.h"
#include "dsl/tile/ReduceProgram.h"
#include "tests/codegen/ProgramInterpreter.h"

namespace fixbits {
namespace {

using dsl::ReduceConfig;
using dsl::ReduceDesc;
using dsl::ReduceOp;
using dsl::TreeOrder;
using testing::Buffers;

// x values that stress the order: values of both signs up to 16, full-mantissa
// values over 2^-6 .. 2^5 (most of a row: their squares and exps round in every sum
// and the small ones are partly absorbed, so the order of the sum shows in its bits;
// none is so large that its exp swamps the rest), subnormals, signed zeros, and (when
// `specials`) NaN and infinities.
std::vector<uint32_t> row_bits(DType t, size_t n, uint32_t seed, bool specials) {
  std::mt19937 rng(seed);
  std::vector<uint32_t> out(n);
  for (auto& b : out) {
    float v = 0.0f;
    const uint32_t pick = rng() % 10;
    if (pick == 0 || pick == 1) {
      v = std::ldexp(static_cast<float>(rng() % 1000), -6) * (pick == 0 ? 1.0f : -1.0f);
    } else if (pick == 2) {
      v = std::bit_cast<float>(static_cast<uint32_t>(rng() % 0x7fffff));  // subnormal
    } else if (pick == 3) {
      v = (rng() & 1) ? 0.0f : -0.0f;
    } else if (pick == 4 && specials) {
      v = std::bit_cast<float>(static_cast<uint32_t>(0x7fc00000u | (rng() & 0xffff)));  // NaN
    } else if (pick == 5 && specials) {
      v = (rng() & 1) ? INFINITY : -INFINITY;
    } else {  // a full 24-bit mantissa
      const float m = 1.0f + std::ldexp(static_cast<float>(rng() & 0x7fffff), -23);
      v = std::ldexp((rng() & 1) ? -m : m, static_cast<int>(rng() % 11) - 6);
    }
    b = to_bits(t, v);
  }
  return out;
}

// Runs every kernel of reduce_phases(d, cfg) block by block; returns y's bits.
absl::StatusOr<std::vector<uint32_t>> run(const ReduceDesc& d, const ReduceConfig& cfg,
                                          const dsl::reference::ReduceProblem& p) {
  absl::StatusOr<std::vector<tile::Program>> phases = dsl::reduce_phases(d, cfg);
  if (!phases.ok()) return phases.status();
  const size_t ws = static_cast<size_t>(p.rows * dsl::strip_count(d, p.cols));
  Buffers mem;
  mem["x"] = {d.in_dtype, p.x};
  mem["w"] = {d.in_dtype, p.w};
  mem["y"] = {d.out_dtype, std::vector<uint32_t>(p.x.size(), 0xdeadu)};
  for (const char* name : {"ws", "wsm", "wss"}) mem[name] = {DType::kF32, std::vector<uint32_t>(ws, 0xffffffffu)};
  for (const tile::Program& prog : *phases) {
    const int64_t blocks = prog.grid == "row_blocks" ? p.rows * cfg.blocks_per_row : p.rows;
    for (int64_t b = 0; b < blocks; ++b) {
      absl::Status s = testing::run_block(prog, b, {{"cols", p.cols}}, {{"eps", p.eps}}, mem, cfg.lanes);
      if (!s.ok()) return s;
    }
  }
  return mem["y"].bits;
}

// Loads of parameter 0 (x) in `ops`: those at this level, and per loop the count in
// its body (recursively) with the loop's start value id.
struct XLoads {
  int top = 0;
  std::vector<std::pair<int, int>> loops;  // (lo value id, x loads inside)
};
int count_x_loads(const std::vector<tile::Op>& ops) {
  int n = 0;
  for (const tile::Op& op : ops) {
    if (op.kind == tile::OpKind::kLoad && op.args[0] == 0) ++n;
    if (op.kind == tile::OpKind::kFor) n += count_x_loads(op.body);
  }
  return n;
}
XLoads x_loads(const tile::Program& p) {
  XLoads r;
  for (const tile::Op& op : p.body) {
    if (op.kind == tile::OpKind::kLoad && op.args[0] == 0) ++r.top;
    if (op.kind == tile::OpKind::kFor) r.loops.push_back({op.args[0], count_x_loads(op.body)});
  }
  return r;
}
// The integer constant defining value `id` at the top level, or -1.
int64_t const_value(const tile::Program& p, int id) {
  for (const tile::Op& op : p.body) {
    if (op.kind == tile::OpKind::kConst && op.results[0] == id) return op.imm;
  }
  return -1;
}

TEST(ReduceResident, RowIsLoadedOnceAndEveryLoopOverXStartsAtNQ) {
  int cases = 0;
  for (ReduceOp op : {ReduceOp::kRmsNorm, ReduceOp::kSoftmax}) {
    for (TreeOrder order : {TreeOrder::kPinned, TreeOrder::kFree}) {
      for (ReduceConfig c : {ReduceConfig{.warps = 4, .elems_per_thread = 8},
                             ReduceConfig{.warps = 1, .elems_per_thread = 2}}) {
        const ReduceDesc d{.op = op, .in_dtype = DType::kBF16, .out_dtype = DType::kBF16,
                           .order = order, .strip = 1024};
        absl::StatusOr<tile::Program> plain = dsl::reduce(d, c);
        ASSERT_TRUE(plain.ok()) << plain.status();
        EXPECT_EQ(x_loads(*plain).top, 0) << plain->name << ": off by default";
        for (int keep : {1, 2, 4, 8}) {
          if (keep > dsl::max_keep_passes(d, c)) continue;
          c.keep_passes = keep;
          absl::StatusOr<tile::Program> p = dsl::reduce(d, c);
          ASSERT_TRUE(p.ok()) << p.status();
          const int64_t q = dsl::pass_extent(d, c);
          const XLoads loads = x_loads(*p);
          EXPECT_EQ(loads.top, keep) << p->name;
          int loops_over_x = 0;
          for (auto [lo, inside] : loads.loops) {
            if (inside == 0) continue;
            ++loops_over_x;
            EXPECT_EQ(const_value(*p, lo), keep * q)
                << p->name << ": a loop over x does not start at N*Q = " << keep * q;
          }
          // RMSNorm: statistic + elementwise; softmax: max + exp sum + elementwise.
          EXPECT_EQ(loops_over_x, op == ReduceOp::kRmsNorm ? 2 : 3) << p->name;
          ++cases;
        }
      }
    }
  }
  // Kept passes at most 64 / (values per thread): pinned Q = 1024 holds 8 (4 x 8) or
  // 32 (1 x 2) per thread, so N in {1, 2, 4, 8} or {1, 2}; free Q = B holds 8 or 2, so
  // all four N. Per op: (4 + 2) + (4 + 4).
  EXPECT_EQ(cases, 2 * ((4 + 2) + (4 + 4)));
}

// Line lengths around the kept span of N passes of Q: 1-element and short rows,
// shorter than / equal to / longer than one pass and N passes, between passes,
// several loop iterations past the kept span; non-powers of two throughout.
std::vector<int64_t> shapes_for(int64_t q, int keep) {
  std::vector<int64_t> v = {1, 7, q - 1, q, q + 1};
  const int64_t nq = keep * q;
  if (keep > 1) {
    v.push_back(nq - q / 2 + 3);  // between the last two kept passes
    v.push_back(nq - 1);
    v.push_back(nq);
  }
  v.push_back(nq + 1);
  v.push_back(nq + 2 * q + 5);     // the loops run three times
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

TEST(ReduceResident, BitIdenticalToReferenceOverShapesAndConfigs) {
  int cases = 0, can_tell[2] = {0, 0}, told_apart[2] = {0, 0};  // [bf16, f32]
  for (ReduceOp op : {ReduceOp::kRmsNorm, ReduceOp::kSoftmax}) {
    for (DType in : {DType::kF32, DType::kBF16}) {
      const TreeOrder order = TreeOrder::kPinned;
      const ReduceDesc d{.op = op, .in_dtype = in, .out_dtype = in, .order = order, .strip = 256};
      ReduceDesc other = d;  // another order over the same values: a left-to-right chain
      other.strip = 1;
      // Q = 256 = B (4 per thread), Q = 256 > B = 64 (8 per thread), Q = B = 512 (block
      // wider than the strip, 4 per thread).
      for (ReduceConfig c : {ReduceConfig{.warps = 2, .elems_per_thread = 4},
                             ReduceConfig{.warps = 1, .elems_per_thread = 2},
                             ReduceConfig{.warps = 4, .elems_per_thread = 4}}) {
        for (int keep : {1, 2, 4, 8}) {
          for (int bpr : {1, 3}) {
            if (bpr > 1 && (keep > 1 || c.warps * 32 * c.elems_per_thread > d.strip)) continue;
            c.blocks_per_row = bpr;
            c.keep_passes = bpr == 1 ? keep : 0;  // split rows: the unchanged phases, for contrast
            const int64_t q = dsl::pass_extent(d, c);
            ASSERT_LE(keep * (q / (32 * c.warps)), dsl::kMaxKeptPerThread);
            for (int64_t cols : shapes_for(q, keep)) {
              const int64_t rows = 3;
              dsl::reference::ReduceProblem p{.rows = rows, .cols = cols, .x = {}, .w = {}};
              // Row 1 holds NaN and infinities (its output is all NaN, or inf-driven);
              // rows 0 and 2 are finite, so their bits carry the chain's order.
              for (int64_t r = 0; r < rows; ++r) {
                std::vector<uint32_t> row = row_bits(in, static_cast<size_t>(cols),
                                                     static_cast<uint32_t>(cols * 7 + bpr + 131 * keep + 1009 * r),
                                                     /*specials=*/r == 1);
                p.x.insert(p.x.end(), row.begin(), row.end());
              }
              std::mt19937 rng(static_cast<uint32_t>(cols));
              std::uniform_real_distribution<float> u(0.5f, 2.0f);
              p.w.resize(static_cast<size_t>(cols));
              for (auto& b : p.w) b = to_bits(in, u(rng));
              auto ref = dsl::reference::reduce(d, p, dsl::free_layout(c));
              ASSERT_TRUE(ref.ok()) << ref.status();
              auto got = run(d, c, p);
              const std::string where = absl::StrFormat("%s warps=%d ept=%d keep=%d bpr=%d cols=%d",
                                                        dsl::to_string(d), c.warps, c.elems_per_thread,
                                                        c.keep_passes, bpr, cols);
              ASSERT_TRUE(got.ok()) << where << ": " << got.status();
              ASSERT_EQ(got->size(), ref->size()) << where;
              EXPECT_EQ(std::memcmp(got->data(), ref->data(), got->size() * sizeof(uint32_t)), 0) << where;
              auto alt = dsl::reference::reduce(other, p, dsl::free_layout(c));
              ASSERT_TRUE(alt.ok()) << alt.status();
              if (cols > 16) {  // long enough for two orders to round differently
                ++can_tell[in == DType::kF32];
                if (*alt != *ref) ++told_apart[in == DType::kF32];
              }
              ++cases;
            }
          }
        }
      }
    }
  }
  // Per (op, dtype): keep 1: 3 unsplit configs + 2 split, 6 shapes each (N*Q + 1 is
  // Q + 1); keep 2, 4, 8: 3 configs x 10 shapes (Q = 256 or 512: none coincide).
  EXPECT_EQ(cases, 2 * 2 * ((3 + 2) * 6 + 3 * 3 * 10));
  // The inputs tell orders apart: on rows longer than 16, the reference summing left
  // to right (strip 1) gives other f32 bits (170 of 184 cases at these seeds), so a
  // kernel chaining its kept passes out of order would fail here (checked once by
  // hand: reducing the kept passes in reverse order fails 31 cases). bf16 outputs round
  // most of a sum's order away (16 of 184): their cases check the bf16 paths.
  EXPECT_GT(told_apart[1], can_tell[1] * 3 / 4) << told_apart[1] << " of " << can_tell[1];
  EXPECT_GT(told_apart[0], 0) << told_apart[0] << " of " << can_tell[0];
}

TEST(ReduceResident, KnobIsRefusedWhereItDoesNotApply) {
  ReduceConfig c{.warps = 2, .elems_per_thread = 4};
  c.keep_passes = 2;
  // The message names the field and its value.
  auto refused = [&](const ReduceDesc& d, const ReduceConfig& cfg) {
    absl::StatusOr<std::vector<tile::Program>> p = dsl::reduce_phases(d, cfg);
    const std::string named = absl::StrFormat("ReduceConfig.keep_passes %d", cfg.keep_passes);
    return !p.ok() && std::string(p.status().message()).find(named) != std::string::npos;
  };
  EXPECT_TRUE(refused({.op = ReduceOp::kSum, .strip = 256}, c));
  EXPECT_TRUE(refused({.op = ReduceOp::kMax, .strip = 256}, c));
  EXPECT_TRUE(refused({.op = ReduceOp::kRmsNorm, .axis = dsl::ReduceAxis::kColumn, .strip = 256}, c));
  ReduceConfig split = c;
  split.blocks_per_row = 2;
  EXPECT_TRUE(refused({.op = ReduceOp::kSoftmax, .strip = 256}, split));
  EXPECT_FALSE(refused({.op = ReduceOp::kSoftmax, .strip = 256}, c));
  ReduceConfig negative = c;
  negative.keep_passes = -1;
  EXPECT_TRUE(refused({.op = ReduceOp::kSoftmax, .strip = 256}, negative));
  EXPECT_FALSE(dsl::validate(negative).ok());
  // Registers: Q = 256 over 64 threads is 4 per thread, so at most 16 passes.
  const ReduceDesc rms{.op = ReduceOp::kRmsNorm, .strip = 256};
  EXPECT_EQ(dsl::max_keep_passes(rms, c), 16);
  ReduceConfig most = c;
  most.keep_passes = 16;
  EXPECT_FALSE(refused(rms, most));
  most.keep_passes = 17;
  EXPECT_TRUE(refused(rms, most));
  // A strip wider than the block: Q = 4096 over 256 threads, 16 per thread: 4 passes.
  const ReduceDesc wide{.op = ReduceOp::kRmsNorm, .strip = 4096};
  ReduceConfig w8{.warps = 8, .elems_per_thread = 8};
  EXPECT_EQ(dsl::max_keep_passes(wide, w8), 4);
  w8.keep_passes = 5;
  EXPECT_TRUE(refused(wide, w8));
  ReduceConfig too_many = c;
  too_many.keep_passes = 65;
  EXPECT_FALSE(dsl::validate(too_many).ok());
}

}  // namespace
}  // namespace fixbits
