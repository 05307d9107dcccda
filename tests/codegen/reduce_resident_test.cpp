// ReduceConfig.keep_first_pass: the row kept in registers between the passes of a
// fused RMSNorm / softmax (kRow, one block per row), on the CPU. dsl::reduce loads the
// row's first pass (elements [0, Q)) once, before any loop, and reuses those registers
// for the statistic and the elementwise pass; every loop that reads x starts at Q. So
// a row of at most Q elements is read from memory once (the loops run zero times), and:
//   - structure: exactly one load of x outside loops; every loop that loads x starts
//     at the constant Q (so it runs zero times when cols <= Q);
//   - bits: the test interpreter's output equals reference::reduce's bits (memcmp of
//     the bit vectors) for the pinned order (the interpreter runs rank-1 reduces only,
//     so the free order is checked by structure here and on the GPU) over 1-element rows, rows shorter
//     than, equal to and longer than Q, non-powers of two, Q wider than the block,
//     adversarial values (NaN, inf, -0.0, subnormals) and split rows (blocks_per_row,
//     whose kernels are unchanged: the statistic and the rows come from other kernels);
//   - the knob is off by default (no load of x outside loops) and is refused, naming
//     the field, for plain reductions, columns and split rows.
#include <gtest/gtest.h>

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

// x values that stress the order: large values that cancel, subnormals, signed
// zeros, and (when `specials`) NaN and infinities.
std::vector<uint32_t> row_bits(DType t, size_t n, uint32_t seed, bool specials) {
  std::mt19937 rng(seed);
  std::vector<uint32_t> out(n);
  for (auto& b : out) {
    float v = 0.0f;
    switch (rng() % (specials ? 9 : 6)) {
      case 0: v = std::ldexp(static_cast<float>(rng() % 1000), 6); break;
      case 1: v = -std::ldexp(static_cast<float>(rng() % 1000), 6); break;
      case 2: v = std::bit_cast<float>(static_cast<uint32_t>(rng() % 0x7fffff)); break;  // subnormal
      case 3: v = (rng() & 1) ? 0.0f : -0.0f; break;
      case 6: v = std::bit_cast<float>(static_cast<uint32_t>(0x7fc00000u | (rng() & 0xffff))); break;
      case 7: v = (rng() & 1) ? INFINITY : -INFINITY; break;
      default: v = std::ldexp(static_cast<float>(static_cast<int32_t>(rng() % 20001) - 10000), -11);
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

TEST(ReduceResident, RowIsLoadedOnceAndEveryLoopOverXStartsAtQ) {
  for (ReduceOp op : {ReduceOp::kRmsNorm, ReduceOp::kSoftmax}) {
    for (TreeOrder order : {TreeOrder::kPinned, TreeOrder::kFree}) {
      for (ReduceConfig c : {ReduceConfig{.warps = 4, .elems_per_thread = 8},
                             ReduceConfig{.warps = 1, .elems_per_thread = 2}}) {
        const ReduceDesc d{.op = op, .in_dtype = DType::kBF16, .out_dtype = DType::kBF16,
                           .order = order, .strip = 1024};
        absl::StatusOr<tile::Program> plain = dsl::reduce(d, c);
        ASSERT_TRUE(plain.ok()) << plain.status();
        EXPECT_EQ(x_loads(*plain).top, 0) << plain->name << ": off by default";
        c.keep_first_pass = true;
        absl::StatusOr<tile::Program> p = dsl::reduce(d, c);
        ASSERT_TRUE(p.ok()) << p.status();
        const int64_t q = dsl::pass_extent(d, c);
        const XLoads loads = x_loads(*p);
        EXPECT_EQ(loads.top, 1) << p->name;
        int loops_over_x = 0;
        for (auto [lo, inside] : loads.loops) {
          if (inside == 0) continue;
          ++loops_over_x;
          EXPECT_EQ(const_value(*p, lo), q) << p->name << ": a loop over x does not start at Q = " << q;
        }
        // RMSNorm: statistic + elementwise; softmax: max + exp sum + elementwise.
        EXPECT_EQ(loops_over_x, op == ReduceOp::kRmsNorm ? 2 : 3) << p->name;
      }
    }
  }
}

TEST(ReduceResident, BitIdenticalToReferenceOverShapesAndConfigs) {
  int cases = 0;
  for (ReduceOp op : {ReduceOp::kRmsNorm, ReduceOp::kSoftmax}) {
    for (DType in : {DType::kF32, DType::kBF16}) {
      {
        const TreeOrder order = TreeOrder::kPinned;
        const ReduceDesc d{.op = op, .in_dtype = in, .out_dtype = in, .order = order, .strip = 256};
        // Q = 256 = B, Q = 256 > B = 64, Q = B = 512 (block wider than the strip).
        for (ReduceConfig c : {ReduceConfig{.warps = 2, .elems_per_thread = 4},
                               ReduceConfig{.warps = 1, .elems_per_thread = 2},
                               ReduceConfig{.warps = 4, .elems_per_thread = 4}}) {
          for (int bpr : {1, 3}) {
            if (bpr > 1 && c.warps * 32 * c.elems_per_thread > d.strip) continue;
            c.blocks_per_row = bpr;
            c.keep_first_pass = bpr == 1;  // split rows: the unchanged phases, for contrast
            const int64_t q = dsl::pass_extent(d, c);
            for (int64_t cols : {int64_t{1}, int64_t{7}, q - 1, q, q + 1, 3 * q + 5}) {
              const int64_t rows = 3;
              dsl::reference::ReduceProblem p{.rows = rows, .cols = cols, .x = {}, .w = {}};
              p.x = row_bits(in, static_cast<size_t>(rows * cols), static_cast<uint32_t>(cols * 7 + bpr),
                             /*specials=*/cols % 2 == 1);
              std::mt19937 rng(static_cast<uint32_t>(cols));
              std::uniform_real_distribution<float> u(0.5f, 2.0f);
              p.w.resize(static_cast<size_t>(cols));
              for (auto& b : p.w) b = to_bits(in, u(rng));
              auto ref = dsl::reference::reduce(d, p, dsl::free_layout(c));
              ASSERT_TRUE(ref.ok()) << ref.status();
              auto got = run(d, c, p);
              const std::string where = absl::StrFormat("%s warps=%d ept=%d bpr=%d cols=%d",
                                                        dsl::to_string(d), c.warps, c.elems_per_thread,
                                                        bpr, cols);
              ASSERT_TRUE(got.ok()) << where << ": " << got.status();
              ASSERT_EQ(got->size(), ref->size()) << where;
              EXPECT_EQ(std::memcmp(got->data(), ref->data(), got->size() * sizeof(uint32_t)), 0) << where;
              ++cases;
            }
          }
        }
      }
    }
  }
  // 2 ops x 2 dtypes x (3 configs unsplit + the 2 whose block fits the strip, split) x 6 shapes.
  EXPECT_EQ(cases, 2 * 2 * (3 + 2) * 6);
}

TEST(ReduceResident, KnobIsRefusedWhereItDoesNotApply) {
  ReduceConfig c{.warps = 2, .elems_per_thread = 4};
  c.keep_first_pass = true;
  auto refused = [&](const ReduceDesc& d, const ReduceConfig& cfg) {
    absl::StatusOr<std::vector<tile::Program>> p = dsl::reduce_phases(d, cfg);
    return !p.ok() && std::string(p.status().message()).find("keep_first_pass") != std::string::npos;
  };
  EXPECT_TRUE(refused({.op = ReduceOp::kSum, .strip = 256}, c));
  EXPECT_TRUE(refused({.op = ReduceOp::kRmsNorm, .axis = dsl::ReduceAxis::kColumn, .strip = 256}, c));
  ReduceConfig split = c;
  split.blocks_per_row = 2;
  EXPECT_TRUE(refused({.op = ReduceOp::kSoftmax, .strip = 256}, split));
  EXPECT_FALSE(refused({.op = ReduceOp::kSoftmax, .strip = 256}, c));
}

}  // namespace
}  // namespace fixbits
