// SelectLayout (reference §5.2): exhaustive property tests over the layouts the pass
// builds and the blocked layouts it starts from — every element index maps to exactly
// one (register, lane, warp); a line of registers is consecutive logical indices of
// the axis, and each shuffle level pairs indices that differ in exactly its bit — then
// the pass's choices (and refusals, naming the op), and the whole reduce simulated
// thread by thread against a logical balanced tree, bit for bit, for every layout.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>
#include <set>

#include "codegen/ReducePlan.h"
#include "codegen/SelectLayout.h"

namespace fixbits::codegen {
namespace {

struct Shape2 {
  int64_t a, b;
};

std::vector<Shape2> shapes() {
  return {{1, 128}, {4, 128}, {32, 128}, {2, 256}, {16, 64}, {128, 4}, {256, 1}, {1, 1024},
          {64, 32}, {8, 512}, {1024, 1}, {4, 1024}};
}

// Every slot maps to a distinct in-range element and the count matches: a bijection.
void expect_bijection(const Layout& l) {
  ASSERT_TRUE(check(l).ok()) << to_string(l);
  std::set<int64_t> seen;
  for (int w = 0; w < warp_count(l); ++w) {
    for (int ln = 0; ln < lane_count(l); ++ln) {
      for (int64_t r = 0; r < regs(l); ++r) {
        std::vector<int64_t> c = coord_of(l, {r, ln, w});
        for (int d = 0; d < rank(l); ++d) ASSERT_LT(c[d], l.shape[d]) << to_string(l);
        ASSERT_TRUE(seen.insert(flat_index(l, c)).second) << "two slots share an element: " << to_string(l);
        ASSERT_EQ(slot_of(l, c), (Slot{r, ln, w})) << to_string(l);
      }
    }
  }
  int64_t elems = 1;
  for (int64_t e : l.shape) elems *= e;
  EXPECT_EQ(static_cast<int64_t>(seen.size()), elems) << to_string(l);
}

TEST(SelectLayout, BlockedRank2IsTheFlatSplitSoReshapesNeverMoveData) {
  int checked = 0;
  for (int warp_size : {32, 64}) {
    for (int warps : {1, 2, 4, 8, 32}) {
      for (Shape2 s : shapes()) {
        Layout l;
        if (!blocked_layout({s.a, s.b}, warp_size, warps, &l).ok()) continue;
        expect_bijection(l);
        const int64_t r = regs(l);
        for (int t = 0; t < warp_size * warps; ++t) {
          for (int64_t k = 0; k < r; ++k) {
            Slot slot{k, t % warp_size, t / warp_size};
            ASSERT_EQ(flat_index(l, coord_of(l, slot)), t * r + k) << to_string(l);
          }
        }
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 60);
}

TEST(SelectLayout, HeaderExampleLayouts) {
  Layout producer;
  ASSERT_TRUE(blocked_layout({4, 128}, 32, 4, &producer).ok());
  EXPECT_EQ(to_string(producer), "blocked(shape=4x128 ept=1x4 lanes=1x32 warps=4x1 order=1,0)");
  absl::StatusOr<Layout> f = reduce_friendly_layout({4, 128}, 0, 32, 4);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(to_string(*f), "blocked(shape=4x128 ept=4x1 lanes=1x32 warps=1x4 order=0,1)");
  Layout mid;
  ASSERT_TRUE(blocked_layout({32, 128}, 32, 4, &mid).ok());
  EXPECT_EQ(to_string(mid), "blocked(shape=32x128 ept=1x32 lanes=8x4 warps=4x1 order=1,0)");
}

// Friendly layouts: a bijection; the kept dimension takes the warps first; a line
// (regs[line*E, line*E+E)) is axis coordinates 0..E-1 of one kept coordinate; the
// axis lane bits are the low lane bits, so shuffle offset o pairs axis blocks that
// differ in exactly one bit, the one just above the registers'.
TEST(SelectLayout, FriendlyLayoutLinesAndLaneLevelsPairTheLogicalIndices) {
  int checked = 0;
  for (int warp_size : {32, 64}) {
    for (int warps : {1, 2, 4, 8}) {
      for (Shape2 s : shapes()) {
        for (int axis : {0, 1}) {
          absl::StatusOr<Layout> f = reduce_friendly_layout({s.a, s.b}, axis, warp_size, warps);
          if (!f.ok()) continue;
          const Layout& l = *f;
          expect_bijection(l);
          const int kept = 1 - axis;
          EXPECT_EQ(l.warps[kept], std::min<int64_t>(warps, l.shape[kept])) << to_string(l);
          const int64_t e = l.elems_per_thread[axis];
          for (int w = 0; w < warp_count(l); ++w) {
            for (int ln = 0; ln < lane_count(l); ++ln) {
              for (int64_t r = 0; r < regs(l); ++r) {
                std::vector<int64_t> c = coord_of(l, {r, ln, w});
                std::vector<int64_t> first = coord_of(l, {r - r % e, ln, w});
                ASSERT_EQ(c[kept], first[kept]) << to_string(l);
                ASSERT_EQ(c[axis] - first[axis], r % e) << to_string(l);
                for (int o = 1; o < l.lanes[axis]; o *= 2) {
                  std::vector<int64_t> p = coord_of(l, {r, ln ^ o, w});
                  ASSERT_EQ(p[kept], c[kept]) << to_string(l);
                  ASSERT_EQ(p[axis] ^ c[axis], e * o) << to_string(l);
                }
              }
            }
          }
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 100);
}

tile::Op reduce_op(int axis, dsl::TreeOrder order, int64_t strip, tile::Combine c = tile::Combine::kAdd) {
  tile::Op op;
  op.kind = tile::OpKind::kReduce;
  op.imm = axis;
  op.order = order;
  op.strip = strip;
  op.combine = c;
  return op;
}

TEST(SelectLayout, ConvertsAColumnReduceOfACoalescedTile) {
  Layout producer;
  ASSERT_TRUE(blocked_layout({4, 128}, 32, 4, &producer).ok());
  auto choice = select_reduce_layout(producer, reduce_op(0, dsl::TreeOrder::kPinned, 4), 3, 32, 4);
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_TRUE(choice->convert) << choice->why;
  EXPECT_EQ(choice->reduce, *reduce_friendly_layout({4, 128}, 0, 32, 4));
  // The op is untouched: the plan of the chosen layout is an in-thread tree of 4.
  auto plan = plan_reduce(choice->reduce, reduce_op(0, dsl::TreeOrder::kPinned, 4), 3);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_FALSE(plan->across_threads);
  EXPECT_EQ(plan->regs, 4);
  EXPECT_EQ(plan->lines, 1);
}

TEST(SelectLayout, KeepsTheProducerWhenItIsAlreadyFriendly) {
  Layout producer;
  ASSERT_TRUE(blocked_layout({128, 4}, 32, 4, &producer).ok());
  for (dsl::TreeOrder o : {dsl::TreeOrder::kPinned, dsl::TreeOrder::kFree}) {
    auto choice = select_reduce_layout(producer, reduce_op(1, o, 0), 0, 32, 4);
    ASSERT_TRUE(choice.ok()) << choice.status();
    EXPECT_FALSE(choice->convert);
    EXPECT_EQ(choice->reduce, producer);
  }
  Layout one;
  ASSERT_TRUE(blocked_layout({512}, 32, 4, &one).ok());
  auto choice = select_reduce_layout(one, reduce_op(0, dsl::TreeOrder::kPinned, 0), 0, 32, 4);
  ASSERT_TRUE(choice.ok());
  EXPECT_FALSE(choice->convert);
}

TEST(SelectLayout, RefusalsNameTheReduce) {
  Layout producer;
  ASSERT_TRUE(blocked_layout({4, 128}, 32, 4, &producer).ok());
  auto free = select_reduce_layout(producer, reduce_op(0, dsl::TreeOrder::kFree, 0), 7, 32, 4);
  EXPECT_EQ(free.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(free.status().message().find("reduce #7: reducing axis 0"), std::string::npos)
      << free.status();
  Layout big;
  ASSERT_TRUE(blocked_layout({64, 128}, 32, 4, &big).ok());
  auto too_big = select_reduce_layout(big, reduce_op(0, dsl::TreeOrder::kPinned, 64), 2, 32, 4);
  EXPECT_NE(too_big.status().message().find("reduce #2:"), std::string::npos) << too_big.status();
  EXPECT_NE(too_big.status().message().find("at most 4096"), std::string::npos) << too_big.status();
  // Kept extent 4 < 128 threads: the axis would stay across warps.
  Layout narrow;
  ASSERT_TRUE(blocked_layout({128, 4}, 32, 4, &narrow).ok());
  auto across = select_reduce_layout(narrow, reduce_op(0, dsl::TreeOrder::kPinned, 128), 5, 32, 4);
  EXPECT_NE(across.status().message().find("reduce #5:"), std::string::npos) << across.status();
}

// The logical definition: per kept index, the axis cut in strips of S, each a
// balanced tree over its logical index, chained in order from init.
std::vector<float> logical_reduce(const std::vector<float>& x, Shape2 s, int axis, int64_t strip,
                                  tile::Combine c, const std::vector<float>& init) {
  const int64_t n_axis = axis == 0 ? s.a : s.b, n_kept = axis == 0 ? s.b : s.a;
  std::vector<float> out(n_kept);
  for (int64_t k = 0; k < n_kept; ++k) {
    float r = init.empty() ? identity_f32(c) : init[init.size() == 1 ? 0 : k];
    for (int64_t s0 = 0; s0 < n_axis; s0 += strip) {
      std::vector<float> level;
      for (int64_t i = s0; i < s0 + strip; ++i) level.push_back(x[axis == 0 ? i * s.b + k : k * s.b + i]);
      while (level.size() > 1) {
        for (size_t j = 0; j < level.size() / 2; ++j) level[j] = combine_f32(c, level[2 * j], level[2 * j + 1]);
        level.resize(level.size() / 2);
      }
      r = combine_f32(c, r, level[0]);
    }
    out[k] = r;
  }
  return out;
}

std::vector<float> adversarial(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<float> v(n);
  for (float& f : v) {
    switch (rng() % 8) {
      case 0: f = std::ldexp(static_cast<float>(rng() % 1000), 20); break;
      case 1: f = -std::ldexp(static_cast<float>(rng() % 1000), 20); break;
      case 2: f = std::bit_cast<float>(static_cast<uint32_t>(rng() % 0x7fffff)); break;
      case 3: f = (rng() & 1) ? 0.0f : -0.0f; break;
      default: f = std::ldexp(static_cast<float>(static_cast<int32_t>(rng() % 20001) - 10000), -13);
    }
  }
  return v;
}

TEST(SelectLayout, EveryChoiceGivesTheLogicalTreeBitForBit) {
  int checked = 0, converted = 0;
  for (int warp_size : {32, 64}) {
    for (int warps : {1, 2, 4, 8}) {
      for (Shape2 s : shapes()) {
        for (int axis : {0, 1}) {
          const int64_t n_axis = axis == 0 ? s.a : s.b;
          for (int64_t strip : {int64_t{1}, int64_t{2}, n_axis}) {
            if (strip > n_axis) continue;
            for (tile::Combine c : {tile::Combine::kAdd, tile::Combine::kMax}) {
              tile::Op op = reduce_op(axis, dsl::TreeOrder::kPinned, strip, c);
              std::vector<float> x = adversarial(static_cast<size_t>(s.a * s.b), static_cast<uint32_t>(s.a * 7 + s.b + strip));
              const int64_t n_kept = axis == 0 ? s.b : s.a;
              std::vector<float> init = adversarial(static_cast<size_t>(n_kept), 99);
              auto got = simulate_reduce_op({s.a, s.b}, op, 0, warp_size, warps, x, init);
              if (!got.ok()) continue;  // refusals are covered above
              std::vector<float> want = logical_reduce(x, s, axis, strip, c, init);
              ASSERT_EQ(got->size(), want.size());
              for (size_t k = 0; k < want.size(); ++k) {
                ASSERT_EQ(std::bit_cast<uint32_t>((*got)[k]), std::bit_cast<uint32_t>(want[k]))
                    << s.a << "x" << s.b << " axis " << axis << " strip " << strip << " warps " << warps
                    << " lanes " << warp_size << " result " << k;
              }
              Layout producer;
              ASSERT_TRUE(blocked_layout({s.a, s.b}, warp_size, warps, &producer).ok());
              converted += select_reduce_layout(producer, op, 0, warp_size, warps)->convert;
              ++checked;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 100);
  EXPECT_GT(converted, 20);
}

}  // namespace
}  // namespace fixbits::codegen
