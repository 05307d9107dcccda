// ReducePlan, LLVM-free: running the plans of dsl::reduce's program pass by pass
// (simulate_plan executes exactly the steps LowerReduce emits) gives the bits of
// reference::reduce for every knob setting (warps, elements per thread, 32 or 64
// lanes), row length and strip, pinned and free, on adversarial inputs
// (cancellation, +-0, subnormals, inf, NaN).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>

#include "codegen/Layout.h"
#include "codegen/ReducePlan.h"
#include "dsl/reference/Reference.h"
#include "dsl/tile/ReduceProgram.h"

namespace fixbits::codegen {
namespace {

using dsl::ReduceDesc;
using dsl::ReduceOp;
using dsl::TreeOrder;

tile::Op reduce_op(int axis, tile::Combine c, TreeOrder o, int64_t strip) {
  tile::Op op;
  op.kind = tile::OpKind::kReduce;
  op.imm = axis;
  op.combine = c;
  op.order = o;
  op.strip = strip;
  return op;
}

// The row reduction of dsl::reduce's program for `cfg`, executed with plans.
float run_program(const ReduceDesc& d, const dsl::ReduceConfig& cfg, tile::Combine c,
                  const std::vector<float>& row) {
  const int64_t q = dsl::pass_extent(d, cfg);
  const int64_t n = static_cast<int64_t>(row.size());
  const int threads = cfg.lanes * cfg.warps;
  auto pass = [&](int64_t k) {
    std::vector<float> v(q);
    for (int64_t i = 0; i < q; ++i) v[i] = k + i < n ? row[k + i] : identity_f32(c);
    return v;
  };
  Layout flat;
  EXPECT_TRUE(blocked_layout({q}, cfg.lanes, cfg.warps, &flat).ok());
  if (d.order == TreeOrder::kPinned) {
    ReducePlan p = *plan_reduce(flat, reduce_op(0, c, TreeOrder::kPinned, d.strip), 0);
    float acc = identity_f32(c);
    for (int64_t k = 0; k < n; k += q) acc = simulate_plan(p, c, pass(k), {acc})[0];
    return acc;
  }
  Layout per_thread, acc_layout;
  EXPECT_TRUE(blocked_layout({threads, cfg.elems_per_thread}, cfg.lanes, cfg.warps, &per_thread).ok());
  EXPECT_TRUE(blocked_layout({threads}, cfg.lanes, cfg.warps, &acc_layout).ok());
  ReducePlan in_thread = *plan_reduce(per_thread, reduce_op(1, c, TreeOrder::kFree, 0), 0);
  ReducePlan across = *plan_reduce(acc_layout, reduce_op(0, c, TreeOrder::kFree, 0), 0);
  std::vector<float> acc(threads, identity_f32(c));
  for (int64_t k = 0; k < n; k += q) acc = simulate_plan(in_thread, c, pass(k), acc);
  return simulate_plan(across, c, acc, {})[0];
}

std::vector<float> adversarial_row(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) {
    switch (rng() % 8) {
      case 0: v[i] = std::ldexp(static_cast<float>(rng() % 1000), 20); break;   // large
      case 1: v[i] = -std::ldexp(static_cast<float>(rng() % 1000), 20); break;  // cancels
      case 2: v[i] = std::bit_cast<float>(static_cast<uint32_t>(rng() % 0x7fffff)); break;  // subnormal
      case 3: v[i] = (rng() & 1) ? 0.0f : -0.0f; break;
      default: v[i] = std::ldexp(static_cast<float>(static_cast<int32_t>(rng() % 200001) - 100000), -7);
    }
  }
  return v;
}

uint32_t reference_bits(const ReduceDesc& d, const dsl::ReduceConfig& cfg, const std::vector<float>& row) {
  dsl::reference::ReduceProblem prob;
  prob.rows = 1;
  prob.cols = static_cast<int64_t>(row.size());
  for (float f : row) prob.x.push_back(std::bit_cast<uint32_t>(f));
  auto out = dsl::reference::reduce(d, prob, dsl::free_layout(cfg));
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? (*out)[0] : 0;
}

uint32_t bits_of(float f) { return std::isnan(f) ? 0x7fffffffu : std::bit_cast<uint32_t>(f); }

TEST(ReducePlan, ProgramMatchesReferenceForEveryKnob) {
  int cases = 0;
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin}) {
    tile::Combine c = op == ReduceOp::kSum ? tile::Combine::kAdd
                      : op == ReduceOp::kMax ? tile::Combine::kMax : tile::Combine::kMin;
    for (TreeOrder order : {TreeOrder::kPinned, TreeOrder::kFree}) {
      for (int64_t strip : {1, 4, 32, 128, 1024, 4096}) {
        for (int warps : {1, 2, 4, 8}) {
          for (int ept : {1, 2, 4, 8}) {
           for (int lanes : {32, 64}) {
            dsl::ReduceConfig cfg{warps, ept, lanes};
            ReduceDesc d{.op = op, .order = order, .strip = strip};
            if (!dsl::reduce(d, cfg).ok()) continue;
            for (int64_t n : {1, 3, 31, 100, 1000, 4097, 9000}) {
              std::vector<float> row = adversarial_row(n, static_cast<uint32_t>(n * 131 + strip));
              ASSERT_EQ(bits_of(run_program(d, cfg, c, row)), reference_bits(d, cfg, row))
                  << "op " << static_cast<int>(op) << " order " << static_cast<int>(order)
                  << " strip " << strip << " warps " << warps << " ept " << ept << " lanes " << lanes << " n " << n;
              ++cases;
            }
           }
          }
        }
      }
    }
  }
  EXPECT_GT(cases, 3000);
}

TEST(ReducePlan, PinnedBitsDoNotMoveWithKnobsButFreeBitsDo) {
  ReduceDesc pinned{.strip = 1024};
  ReduceDesc free_d{.order = TreeOrder::kFree};
  std::vector<float> row = adversarial_row(3000, 7);
  uint32_t first = bits_of(run_program(pinned, {1, 1}, tile::Combine::kAdd, row));
  bool free_differs = false;
  uint32_t free_first = bits_of(run_program(free_d, {1, 1}, tile::Combine::kAdd, row));
  for (int warps : {1, 2, 4, 8, 16, 32}) {
    for (int ept : {1, 2, 4, 8, 16, 32}) {
      EXPECT_EQ(bits_of(run_program(pinned, {warps, ept}, tile::Combine::kAdd, row)), first);
      free_differs |= bits_of(run_program(free_d, {warps, ept}, tile::Combine::kAdd, row)) != free_first;
    }
  }
  EXPECT_TRUE(free_differs) << "the adversarial row should expose the free order's layout dependence";
}

TEST(ReducePlan, NanAndInfPropagate) {
  ReduceDesc d{.op = ReduceOp::kMax, .strip = 64};
  std::vector<float> row(300, 1.0f);
  row[17] = std::nanf("");
  EXPECT_EQ(bits_of(run_program(d, {4, 2}, tile::Combine::kMax, row)), 0x7fffffffu);
  row[17] = INFINITY;
  EXPECT_EQ(std::bit_cast<uint32_t>(run_program(d, {4, 2}, tile::Combine::kMax, row)), 0x7f800000u);
  ReduceDesc s{.strip = 64};
  row[18] = -INFINITY;
  EXPECT_TRUE(std::isnan(run_program(s, {4, 2}, tile::Combine::kAdd, row)));
}

TEST(ReducePlan, LevelsFollowTheLayout) {
  Layout l;
  ASSERT_TRUE(blocked_layout({512}, 32, 4, &l).ok());  // R = 4
  ReducePlan p = *plan_reduce(l, reduce_op(0, tile::Combine::kAdd, TreeOrder::kPinned, 256), 0);
  EXPECT_EQ(p.reg_group, 4);
  EXPECT_EQ(p.lane_offsets, (std::vector<int>{1, 2, 4, 8, 16}));
  EXPECT_EQ(p.unit, 128);
  EXPECT_EQ(p.units, 4);
  EXPECT_EQ(p.units_per_strip, 2);
  EXPECT_EQ(p.strips, 2);
  ReducePlan f = *plan_reduce(l, reduce_op(0, tile::Combine::kAdd, TreeOrder::kFree, 0), 0);
  EXPECT_EQ(f.lane_offsets, (std::vector<int>{16, 8, 4, 2, 1}));
  ReducePlan small = *plan_reduce(l, reduce_op(0, tile::Combine::kAdd, TreeOrder::kPinned, 8), 0);
  EXPECT_EQ(small.lane_offsets, (std::vector<int>{1}));
  EXPECT_EQ(small.units, 64);
}

// Rank 2: an axis wholly in registers (either axis, fastest in the register order)
// is an in-thread plan of `lines` lines; an axis across lanes or warps is refused,
// naming the reduce (SelectLayout converts such operands first).
TEST(ReducePlan, Rank2AxisInRegistersIsInThreadElseRefused) {
  Layout rows_in_regs{{8, 128}, {8, 1}, {1, 32}, {1, 4}, {0, 1}};
  ReducePlan p = *plan_reduce(rows_in_regs, reduce_op(0, tile::Combine::kAdd, TreeOrder::kPinned, 4), 0);
  EXPECT_FALSE(p.across_threads);
  EXPECT_EQ(p.lines, 1);
  EXPECT_EQ(p.regs, 8);
  EXPECT_EQ(p.reg_group, 4);
  EXPECT_EQ(p.strips, 2);
  Layout coalesced;
  ASSERT_TRUE(blocked_layout({8, 128}, 32, 4, &coalesced).ok());  // rows across warps
  auto refused = plan_reduce(coalesced, reduce_op(0, tile::Combine::kAdd, TreeOrder::kPinned, 8), 6);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(refused.status().message().rfind("reduce #6: reducing axis 0", 0), 0u) << refused.status();
  // Simulated in logical order, line k of thread t is column t*1 + k.
  std::vector<float> x(8 * 128);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 128) + 0.5f * static_cast<float>(i / 128);
  std::vector<float> out = simulate_reduce(rows_in_regs, p, tile::Combine::kAdd, x, {});
  ASSERT_EQ(out.size(), 128u);
  for (int c = 0; c < 128; ++c) EXPECT_EQ(out[c], 8.0f * c + 0.5f * 28.0f) << c;
}

}  // namespace
}  // namespace fixbits::codegen
