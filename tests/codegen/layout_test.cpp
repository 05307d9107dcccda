// Layout: exhaustive property tests over every slot of several blocked layouts —
// coord_of is a bijection onto the tile and slot_of inverts it — plus the worked
// example of the header and the error messages of check/blocked_layout.
#include <gtest/gtest.h>

#include <set>

#include "codegen/Layout.h"

namespace fixbits::codegen {
namespace {

std::vector<Layout> sample_layouts() {
  std::vector<Layout> out;
  out.push_back({{8}, {2}, {4}, {1}, {0}});
  out.push_back({{512}, {4}, {32}, {4}, {0}});
  out.push_back({{8, 4}, {1, 4}, {8, 1}, {1, 1}, {1, 0}});
  out.push_back({{16, 8}, {2, 2}, {4, 4}, {2, 1}, {1, 0}});
  out.push_back({{16, 8}, {2, 2}, {4, 4}, {2, 1}, {0, 1}});  // column-major order
  out.push_back({{64, 2}, {1, 2}, {32, 1}, {2, 1}, {1, 0}});
  return out;
}

TEST(Layout, CoordOfIsABijectionAndSlotOfInvertsIt) {
  for (const Layout& l : sample_layouts()) {
    ASSERT_TRUE(check(l).ok()) << to_string(l);
    std::set<std::vector<int64_t>> seen;
    for (int w = 0; w < warp_count(l); ++w) {
      for (int ln = 0; ln < lane_count(l); ++ln) {
        for (int64_t r = 0; r < regs(l); ++r) {
          Slot s{r, ln, w};
          std::vector<int64_t> c = coord_of(l, s);
          for (int d = 0; d < rank(l); ++d) {
            ASSERT_GE(c[d], 0);
            ASSERT_LT(c[d], l.shape[d]) << to_string(l);
          }
          EXPECT_TRUE(seen.insert(c).second) << "two slots map to one element in " << to_string(l);
          EXPECT_EQ(slot_of(l, c), s) << to_string(l);
        }
      }
    }
    int64_t elems = 1;
    for (int64_t d : l.shape) elems *= d;
    EXPECT_EQ(static_cast<int64_t>(seen.size()), elems);
  }
}

TEST(Layout, WorkedExampleFromTheHeader) {
  Layout l{{8}, {2}, {4}, {1}, {0}};
  EXPECT_EQ(coord_of(l, {1, 3, 0}), (std::vector<int64_t>{7}));
  EXPECT_EQ(coord_of(l, {0, 1, 0}), (std::vector<int64_t>{2}));
  Layout two{{8, 4}, {1, 4}, {8, 1}, {1, 1}, {1, 0}};
  EXPECT_EQ(coord_of(two, {3, 5, 0}), (std::vector<int64_t>{5, 3}));
}

TEST(Layout, RankOneIndexIsThreadMajor) {
  Layout l;
  ASSERT_TRUE(blocked_layout({1024}, 32, 4, &l).ok());
  EXPECT_EQ(regs(l), 8);
  for (int w = 0; w < 4; ++w) {
    for (int ln = 0; ln < 32; ++ln) {
      for (int64_t r = 0; r < 8; ++r) {
        EXPECT_EQ(coord_of(l, {r, ln, w})[0], (w * 32 + ln) * 8 + r);
      }
    }
  }
}

TEST(Layout, ReshapeOfRegistersKeepsRowMajorIndex) {
  // (128) over 32 threads (R = 4) and (32, 4) with the last axis in registers hold
  // each element in the same register of the same thread.
  Layout flat, two;
  ASSERT_TRUE(blocked_layout({128}, 32, 1, &flat).ok());
  ASSERT_TRUE(blocked_layout({32, 4}, 32, 1, &two).ok());
  for (int ln = 0; ln < 32; ++ln) {
    for (int64_t r = 0; r < 4; ++r) {
      std::vector<int64_t> c = coord_of(two, {r, ln, 0});
      EXPECT_EQ(coord_of(flat, {r, ln, 0})[0], c[0] * 4 + c[1]);
    }
  }
  EXPECT_EQ(drop_dim(two, 1).shape, (std::vector<int64_t>{32}));
  EXPECT_EQ(drop_dim(two, 1).order, (std::vector<int>{0}));
}

TEST(Layout, ErrorsNameTheDimension) {
  Layout bad{{8, 4}, {1, 3}, {8, 1}, {1, 1}, {1, 0}};
  EXPECT_EQ(check(bad).message(),
            "layout: dimension 1 has extent 4 but elems_per_thread*lanes*warps = 3*1*1.");
  Layout perm{{8}, {2}, {4}, {1}, {1}};
  EXPECT_FALSE(check(perm).ok());
  Layout l;
  EXPECT_EQ(blocked_layout({64}, 32, 4, &l).message(),
            "layout: a tile of shape (64) needs its leading extent to be a multiple of 128 threads "
            "(4 warps of 32 lanes).");
  EXPECT_EQ(blocked_layout({2, 2, 2}, 32, 1, &l).code(), absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace fixbits::codegen
