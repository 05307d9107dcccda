// tile::OpKind::kReduceGroup on the CPU, through the static checker: the one-block row
// kernels whose kept passes are held in registers reduce them as one group, one
// barrier for all. Each such kernel is compared with the same program
// with every group split back into its K plain reduce ops (the lowering before the
// group): both sign the same, so every output's tree is unchanged, while the grouped
// PTX has K - 1 fewer bar.sync a group. Flipping a row group's `chained` (each pass from
// the identity instead of from the previous pass) changes the signature: the check can
// fail. Cluster rows group their kept strips unchained (each stored apart) and sign as
// their reduces too. keep_in_shared kernels keep one reduce a pass or strip (no group).
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "codegen/Compile.h"
#include "dsl/tile/ReduceProgram.h"
#include "gtest/gtest.h"
#include "tests/codegen/TextCount.h"
#include "tests/jit/ProgramSignature.h"

namespace fixbits {
namespace {

using testing::count_of;
using testing::sm90a_signature;

// The groups of `p`'s top level, and p with each replaced by its K reduce ops
// (Program.h's meaning of the group, op for op). A top-level store of member j's result
// whose other operands exist before the group (a cluster block storing a kept strip's
// tree to ws) moves up right after member j: the order the kernel had before groups.
struct Split {
  int groups = 0;
  int tiles = 0;  // summed over the groups
  tile::Program program;
};
Split split_groups(const tile::Program& p) {
  Split out{0, 0, p};
  out.program.body.clear();
  std::map<int, size_t> def_at;  // value id -> the index of its defining top-level op
  for (size_t i = 0; i < p.body.size(); ++i) {
    for (int r : p.body[i].results) def_at[r] = i;
  }
  std::set<size_t> moved;
  for (size_t i = 0; i < p.body.size(); ++i) {
    const tile::Op& op = p.body[i];
    if (moved.count(i)) continue;
    if (op.kind != tile::OpKind::kReduceGroup) {
      out.program.body.push_back(op);
      continue;
    }
    const size_t k = static_cast<size_t>(op.imm);
    ++out.groups;
    out.tiles += static_cast<int>(k);
    for (size_t j = 0; j < k; ++j) {
      out.program.body.push_back(tile::group_member(op, j));
      for (size_t s = i + 1; s < p.body.size(); ++s) {
        const tile::Op& st = p.body[s];
        if (st.kind != tile::OpKind::kStore || moved.count(s)) continue;
        bool uses = false, ready = true;
        for (int a : st.args) {
          if (a == op.results[j]) {
            uses = true;
          } else if (auto d = def_at.find(a); d != def_at.end() && d->second >= i) {
            ready = false;
          }
        }
        if (uses && ready) {
          out.program.body.push_back(st);
          moved.insert(s);
        }
      }
    }
  }
  return out;
}

std::string ptx_of(const tile::Program& p) {
  auto k = codegen::compile(p, codegen::Target::kNvptxSm90a);
  EXPECT_TRUE(k.ok()) << k.status();
  return k.ok() ? k->text : "";
}

struct Case {
  dsl::ReduceOp op;
  DType dtype;
  int warps, ept, keep, cluster;  // cluster: blocks a row (0: one block)
  bool staged = false;
};

std::string name_of(const Case& c) {
  return absl::StrFormat("%s %s w%d e%d keep %d cluster %d%s", c.op == dsl::ReduceOp::kSoftmax ? "softmax" : "rmsnorm",
                         dtype_name(c.dtype), c.warps, c.ept, c.keep, c.cluster, c.staged ? " staged" : "");
}

absl::StatusOr<tile::Program> build(const Case& c) {
  const dsl::ReduceDesc d{.op = c.op, .in_dtype = c.dtype, .out_dtype = c.dtype, .strip = 1024};
  dsl::ReduceConfig cfg{.warps = c.warps, .elems_per_thread = c.ept, .keep_passes = c.keep,
                        .keep_in_shared = c.staged};
  if (c.cluster > 0) {
    cfg.blocks_per_row = c.cluster;
    cfg.cluster_rows = true;
  }
  auto progs = dsl::reduce_phases(d, cfg);
  if (!progs.ok()) return progs.status();
  if (progs->size() != 1) return absl::InternalError("expected one kernel");
  return progs->front();
}

TEST(ReduceGroupSignature, GroupsSignAsTheirReducesWithFewerBarriers) {
  const std::vector<Case> cases = {
      {dsl::ReduceOp::kSoftmax, DType::kBF16, 4, 8, 2, 0},  {dsl::ReduceOp::kSoftmax, DType::kBF16, 4, 4, 4, 0},
      {dsl::ReduceOp::kSoftmax, DType::kF32, 8, 4, 3, 0},   {dsl::ReduceOp::kRmsNorm, DType::kBF16, 4, 8, 2, 0},
      {dsl::ReduceOp::kRmsNorm, DType::kF16, 2, 8, 4, 0},   {dsl::ReduceOp::kRmsNorm, DType::kF32, 16, 4, 2, 0},
      // cluster rows: K kept strips of a block, P blocks a row
      {dsl::ReduceOp::kSoftmax, DType::kBF16, 4, 8, 2, 2},  {dsl::ReduceOp::kSoftmax, DType::kF16, 8, 4, 3, 4},
      {dsl::ReduceOp::kRmsNorm, DType::kBF16, 4, 8, 3, 4},  {dsl::ReduceOp::kRmsNorm, DType::kF32, 8, 4, 2, 2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(name_of(c));
    absl::StatusOr<tile::Program> grouped = build(c);
    ASSERT_TRUE(grouped.ok()) << grouped.status();
    const Split split = split_groups(*grouped);
    // softmax: the max and the sum; RMSNorm: the sum of squares.
    EXPECT_EQ(split.groups, c.op == dsl::ReduceOp::kSoftmax ? 2 : 1);
    EXPECT_EQ(split.tiles, split.groups * c.keep);
    ASSERT_TRUE(tile::validate(split.program).ok()) << tile::validate(split.program);
    auto sig = sm90a_signature(*grouped);
    auto split_sig = sm90a_signature(split.program);
    ASSERT_TRUE(sig.ok()) << sig.status();
    ASSERT_TRUE(split_sig.ok()) << split_sig.status();
    EXPECT_EQ(*sig, *split_sig);
    const int bars = count_of(ptx_of(*grouped), "bar.sync"), split_bars = count_of(ptx_of(split.program), "bar.sync");
    EXPECT_EQ(split_bars - bars, split.groups * (c.keep - 1)) << bars << " vs " << split_bars;
  }
}

TEST(ReduceGroupSignature, AnUnchainedRowGroupSignsApart) {
  for (dsl::ReduceOp op : {dsl::ReduceOp::kSoftmax, dsl::ReduceOp::kRmsNorm}) {
    const Case c{op, DType::kBF16, 4, 8, 2, 0};
    SCOPED_TRACE(name_of(c));
    absl::StatusOr<tile::Program> p = build(c);
    ASSERT_TRUE(p.ok()) << p.status();
    tile::Program unchained = *p;
    int flipped = 0;
    for (tile::Op& op2 : unchained.body) {
      if (op2.kind == tile::OpKind::kReduceGroup && op2.chained) {
        op2.chained = false;
        ++flipped;
      }
    }
    ASSERT_GE(flipped, 1);
    auto sig = sm90a_signature(*p);
    auto other = sm90a_signature(unchained);
    ASSERT_TRUE(sig.ok() && other.ok());
    EXPECT_NE(*sig, *other);
  }
}

TEST(ReduceGroupSignature, StagedPassesAndStripsKeepOneReduceEach) {
  for (const Case& c : {Case{dsl::ReduceOp::kRmsNorm, DType::kBF16, 8, 8, 2, 0, true},
                        Case{dsl::ReduceOp::kSoftmax, DType::kBF16, 4, 8, 2, 2, true},
                        Case{dsl::ReduceOp::kRmsNorm, DType::kBF16, 4, 8, 3, 4, true}}) {
    SCOPED_TRACE(name_of(c));
    absl::StatusOr<tile::Program> p = build(c);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(split_groups(*p).groups, 0);
    EXPECT_EQ(count_of(tile::to_string(*p), "reduce_group"), 0);
  }
}

}  // namespace
}  // namespace fixbits
