// Cluster rows (ReduceConfig.cluster_rows), on the CPU: the one kernel of a split
// RMSNorm / softmax row, run by the test interpreter a cluster at a time (every block
// up to the cluster barrier, then on: testing::run_cluster), gives exactly the CPU
// reference's bits and the split phases' bits for P = 2, 3, 4, 8 and every kept-strip
// count K, on odd lengths, 1-element rows and rows with NaN, inf, -0.0 and subnormals;
// without its barrier it does not (the test can fail). Also: the program's shape
// (one program, cluster = P, barriers at the top level), the knob's errors name the
// field, the PTX declares the cluster and has the release/acquire cluster barrier,
// and gfx942 refuses the program with a Status.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>
#include <string>

#include "absl/strings/str_format.h"
#include "codegen/Compile.h"
#include "dsl/reference/Reference.h"
#include "dsl/tile/ReduceProgram.h"
#include "tests/codegen/ProgramInterpreter.h"
#include "tests/codegen/ReduceInputs.h"
#include "tests/codegen/ReducePhases.h"
#include "tests/codegen/TextCount.h"

namespace fixbits {
namespace {

using dsl::ReduceConfig;
using dsl::ReduceDesc;
using dsl::ReduceOp;
using dsl::TreeOrder;
using testing::Buffers;

using testing::plain_bits;

using testing::run_clusters;

std::string where(const ReduceDesc& d, const ReduceConfig& c, int64_t cols, int specials) {
  return absl::StrFormat("%s warps=%d ept=%d P=%d keep=%d cols=%d specials=%d", dsl::to_string(d),
                         c.warps, c.elems_per_thread, c.blocks_per_row, c.keep_passes, cols, specials);
}

TEST(ReduceCluster, BitIdenticalToReferenceAndSplitForEveryPAndKeep) {
  int cases = 0, kept_cases = 0;
  for (ReduceOp op : {ReduceOp::kRmsNorm, ReduceOp::kSoftmax}) {
    for (DType in : {DType::kF32, DType::kBF16, DType::kF16}) {
      const ReduceDesc d{.op = op, .in_dtype = in, .out_dtype = in, .strip = 256};
      // Block extent = strip (one pass a strip), and half of it.
      for (ReduceConfig c : {ReduceConfig{.warps = 1, .elems_per_thread = 8},
                             ReduceConfig{.warps = 2, .elems_per_thread = 2}}) {
        const int64_t most = dsl::max_keep_passes(d, c);  // 8 and 16 strips
        for (int p : {2, 3, 4, 8}) {
          // Rows of 1 element, below/at/above one strip, several strips per block, and
          // longer than the kept strips of every block (K*P strips) for small K.
          for (int64_t cols : {int64_t{1}, int64_t{255}, int64_t{257}, int64_t{2000}, int64_t{4099}}) {
            for (int specials = 0; specials < 2; ++specials) {
              const uint32_t seed = static_cast<uint32_t>(cols * 31 + p * 7 + specials);
              const dsl::reference::ReduceProblem prob = testing::fused_row_problem(d, 2, cols, seed, specials);
              auto ref = dsl::reference::reduce(d, prob);
              ASSERT_TRUE(ref.ok()) << ref.status();
              ReduceConfig split = c;
              split.blocks_per_row = p;
              auto want = testing::run_reduce_phases(d, split, prob);
              ASSERT_TRUE(want.ok()) << want.status();
              ASSERT_EQ(*want, *ref) << where(d, split, cols, specials);
              for (int64_t keep : {int64_t{0}, int64_t{1}, int64_t{2}, most}) {
                ReduceConfig k = split;
                k.cluster_rows = true;
                k.keep_passes = static_cast<int>(keep);
                auto got = testing::run_cluster_config(d, k, prob);  // one program, or an error
                ASSERT_TRUE(got.ok()) << where(d, k, cols, specials) << ": " << got.status();
                // memcmp-equal to the reference (and so to the split phases).
                ASSERT_EQ(got->size(), ref->size());
                ASSERT_EQ(std::memcmp(got->data(), ref->data(), ref->size() * 4), 0)
                    << where(d, k, cols, specials);
                ++cases;
                if (keep * p * d.strip >= cols) ++kept_cases;  // the whole row from registers
              }
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 2 * 3 * 2 * 4 * 5 * 2 * 4);
  EXPECT_GT(kept_cases, cases / 4);
}

// A long odd row, the bench's strip and block: 1000003 elements over 8 blocks.
TEST(ReduceCluster, LongOddRowMatchesReference) {
  for (ReduceOp op : {ReduceOp::kRmsNorm, ReduceOp::kSoftmax}) {
    const ReduceDesc d{.op = op, .in_dtype = DType::kBF16, .out_dtype = DType::kBF16, .strip = 4096};
    const ReduceConfig c{.warps = 8, .elems_per_thread = 8, .blocks_per_row = 8, .keep_passes = 4,
                         .cluster_rows = true};
    dsl::reference::ReduceProblem prob{.rows = 1, .cols = 1000003, .x = {}, .w = {}};
    prob.x = plain_bits(d.in_dtype, 1000003, 11u, -4.0f, 4.0f);
    prob.w = plain_bits(d.in_dtype, 1000003, 12u, 0.5f, 1.5f);
    prob.eps = 1e-5f;
    auto ref = dsl::reference::reduce(d, prob);
    ASSERT_TRUE(ref.ok());
    auto progs = dsl::reduce_phases(d, c);
    ASSERT_TRUE(progs.ok()) << progs.status();
    auto got = run_clusters(progs->front(), d, prob, 32);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, *ref);
  }
}

// The barrier is what makes it right: without it the blocks of a row fold a
// workspace the later blocks have not written yet (NaN), and the test sees it.
TEST(ReduceCluster, WithoutTheBarrierTheBitsDiffer) {
  for (ReduceOp op : {ReduceOp::kRmsNorm, ReduceOp::kSoftmax}) {
    const ReduceDesc d{.op = op, .in_dtype = DType::kF32, .out_dtype = DType::kF32, .strip = 256};
    const ReduceConfig c{.warps = 1, .elems_per_thread = 8, .blocks_per_row = 4, .keep_passes = 2,
                         .cluster_rows = true};
    dsl::reference::ReduceProblem prob{.rows = 2, .cols = 2000, .x = {}, .w = {}};
    prob.x = plain_bits(d.in_dtype, 4000, 3u, -4.0f, 4.0f);
    prob.w = plain_bits(d.in_dtype, 2000, 4u, 0.5f, 1.5f);
    auto ref = dsl::reference::reduce(d, prob);
    ASSERT_TRUE(ref.ok());
    auto progs = dsl::reduce_phases(d, c);
    ASSERT_TRUE(progs.ok()) << progs.status();
    tile::Program prog = progs->front();
    auto with = run_clusters(prog, d, prob, 32);
    ASSERT_TRUE(with.ok()) << with.status();
    EXPECT_EQ(*with, *ref);
    std::erase_if(prog.body, [](const tile::Op& o) { return o.kind == tile::OpKind::kClusterBarrier; });
    auto without = run_clusters(prog, d, prob, 32);
    ASSERT_TRUE(without.ok()) << without.status();
    EXPECT_NE(*without, *ref) << "a missing cluster barrier went unnoticed";
    // And block by block, a barrier is refused rather than ignored.
    Buffers mem = testing::reduce_buffers(d, prob);
    absl::Status s = testing::run_block(progs->front(), 0, {{"cols", 2000}}, {}, mem, 32);
    EXPECT_NE(std::string(s.message()).find("run_cluster"), std::string::npos) << s;
  }
}

TEST(ReduceCluster, OneProgramWithItsClusterAndTopLevelBarriers) {
  for (ReduceOp op : {ReduceOp::kRmsNorm, ReduceOp::kSoftmax}) {
    const ReduceDesc d{.op = op, .in_dtype = DType::kBF16, .out_dtype = DType::kBF16, .strip = 4096};
    const ReduceConfig c{.warps = 8, .elems_per_thread = 8, .blocks_per_row = 4, .keep_passes = 2,
                         .cluster_rows = true};
    auto progs = dsl::reduce_phases(d, c);
    ASSERT_TRUE(progs.ok()) << progs.status();
    ASSERT_EQ(progs->size(), 1u);
    const tile::Program& p = progs->front();
    EXPECT_EQ(p.cluster, 4);
    EXPECT_EQ(p.grid, "row_blocks");
    EXPECT_TRUE(p.name.ends_with("_k2_p4_cluster")) << p.name;
    int barriers = 0;
    for (const tile::Op& o : p.body) barriers += o.kind == tile::OpKind::kClusterBarrier;
    EXPECT_EQ(barriers, op == ReduceOp::kSoftmax ? 2 : 1);
    const std::string text = tile::to_string(p);
    EXPECT_NE(text.find("grid=row_blocks cluster=4 {"), std::string::npos) << text.substr(0, 300);
    EXPECT_NE(text.find("cluster_barrier"), std::string::npos);
    // The parameters of ReduceProgram.h.
    std::vector<std::string> names;
    for (const tile::Param& prm : p.params) names.push_back(prm.name);
    const std::vector<std::string> want =
        op == ReduceOp::kRmsNorm ? std::vector<std::string>{"x", "w", "ws", "y", "cols", "eps"}
                                 : std::vector<std::string>{"x", "wsm", "wss", "y", "cols"};
    EXPECT_EQ(names, want);
    // Programs without clusters print as before (their hashes key caches).
    auto split = dsl::reduce_phases(d, {.warps = 8, .elems_per_thread = 8, .blocks_per_row = 4});
    ASSERT_TRUE(split.ok());
    for (const tile::Program& q : *split) EXPECT_EQ(tile::to_string(q).find("cluster"), std::string::npos);
  }
}

TEST(ReduceCluster, ProgramRulesForClusterBarriers) {
  tile::Builder b("k");
  b.param("x", tile::Type::ptr(DType::kF32));
  b.cluster_barrier();
  auto no_cluster = b.finish();
  ASSERT_FALSE(no_cluster.ok());
  EXPECT_NE(std::string(no_cluster.status().message()).find("needs Program.cluster > 1"), std::string::npos)
      << no_cluster.status();
  tile::Builder l("k");
  l.set_cluster(2);
  tile::Value zero = l.const_int(tile::Elem::kI32, 0);
  l.begin_for(zero, zero, zero, {});
  l.cluster_barrier();
  l.end_for({});
  auto in_loop = l.finish();
  ASSERT_FALSE(in_loop.ok());
  EXPECT_NE(std::string(in_loop.status().message()).find("top level"), std::string::npos) << in_loop.status();
  tile::Builder big("k");
  big.set_cluster(9);
  auto too_big = big.finish();
  ASSERT_FALSE(too_big.ok());
  EXPECT_NE(std::string(too_big.status().message()).find("cluster 9 is not in [1, 8]"), std::string::npos);
}

TEST(ReduceCluster, KnobErrorsNameTheField) {
  const ReduceDesc rms{.op = ReduceOp::kRmsNorm, .strip = 1024};
  auto msg = [&](const ReduceDesc& desc, ReduceConfig c) {
    auto r = dsl::reduce_phases(desc, c);
    return r.ok() ? std::string("ok") : std::string(r.status().message());
  };
  const ReduceConfig ok{.warps = 4, .elems_per_thread = 8, .blocks_per_row = 4, .cluster_rows = true};
  EXPECT_EQ(msg(rms, ok), "ok");
  ReduceConfig c = ok;
  c.lanes = 64;
  c.warps = 2;
  EXPECT_NE(msg(rms, c).find("ReduceConfig.cluster_rows needs lanes 32"), std::string::npos) << msg(rms, c);
  EXPECT_NE(msg(rms, c).find("gfx942"), std::string::npos);
  for (int p : {1, 9, 16}) {
    c = ok;
    c.blocks_per_row = p;
    EXPECT_NE(msg(rms, c).find(absl::StrFormat("ReduceConfig.blocks_per_row %d with cluster_rows is not in [2, 8]", p)),
              std::string::npos) << msg(rms, c);
  }
  ReduceDesc sum = rms;
  sum.op = ReduceOp::kSum;
  EXPECT_NE(msg(sum, ok).find("ReduceConfig.cluster_rows applies to rms_norm and softmax"), std::string::npos);
  ReduceDesc col = rms;
  col.axis = dsl::ReduceAxis::kColumn;
  EXPECT_NE(msg(col, ok).find("ReduceConfig.cluster_rows needs axis=row and order=pinned"), std::string::npos)
      << msg(col, ok);
  ReduceDesc free = rms;
  free.order = TreeOrder::kFree;
  EXPECT_NE(msg(free, ok).find("cluster_rows needs axis=row and order=pinned"), std::string::npos) << msg(free, ok);
  // Kept strips: 1024 / 128 threads = 8 values each, so at most 8 strips.
  c = ok;
  c.keep_passes = 8;
  EXPECT_EQ(msg(rms, c), "ok");
  c.keep_passes = 9;
  EXPECT_NE(msg(rms, c).find("ReduceConfig.keep_passes 9 keeps 9 x 8 = 72 values of x per thread"),
            std::string::npos) << msg(rms, c);
  // keep_passes with a split row still needs the cluster.
  c.cluster_rows = false;
  c.keep_passes = 1;
  EXPECT_NE(msg(rms, c).find("ReduceConfig.keep_passes 1 needs axis=row and blocks_per_row 1 or cluster_rows"),
            std::string::npos) << msg(rms, c);
  // dsl::reduce (one kernel, no split) with the knob names blocks_per_row.
  auto one = dsl::reduce(rms, {.cluster_rows = true});
  ASSERT_FALSE(one.ok());
  EXPECT_NE(std::string(one.status().message()).find("blocks_per_row 1 with cluster_rows"), std::string::npos);
}

using testing::count_of;

TEST(ReduceCluster, PtxDeclaresTheClusterAndHasTheClusterBarrier) {
  for (ReduceOp op : {ReduceOp::kRmsNorm, ReduceOp::kSoftmax}) {
    for (DType in : {DType::kF32, DType::kBF16, DType::kF16}) {
      for (int p : {2, 3, 4, 8}) {
        const ReduceDesc d{.op = op, .in_dtype = in, .out_dtype = in, .strip = 4096};
        const ReduceConfig c{.warps = 8, .elems_per_thread = 8, .blocks_per_row = p, .keep_passes = 2,
                             .cluster_rows = true};
        auto progs = dsl::reduce_phases(d, c);
        ASSERT_TRUE(progs.ok()) << progs.status();
        auto k = codegen::compile(progs->front(), codegen::Target::kNvptxSm90a);
        ASSERT_TRUE(k.ok()) << k.status();
        const std::string& t = k->text;
        EXPECT_NE(t.find(".explicitcluster"), std::string::npos);
        EXPECT_NE(t.find(absl::StrFormat(".reqnctapercluster %d, 1, 1", p)), std::string::npos);
        const int barriers = op == ReduceOp::kSoftmax ? 2 : 1;
        // arrive (.release by default) then wait (.acquire by default), not .relaxed.
        EXPECT_EQ(count_of(t, "barrier.cluster.arrive;\n\tbarrier.cluster.wait;"), barriers);
        EXPECT_EQ(count_of(t, "barrier.cluster.arrive"), barriers);
        EXPECT_EQ(count_of(t, ".relaxed"), 0);
        EXPECT_EQ(count_of(t, "atom."), 0);
        EXPECT_EQ(k->grid, "row_blocks");
      }
    }
  }
}

TEST(ReduceCluster, Gfx942RefusesAClusterProgram) {
  const ReduceDesc d{.op = ReduceOp::kRmsNorm, .strip = 1024};
  auto progs = dsl::reduce_phases(d, {.warps = 4, .elems_per_thread = 8, .blocks_per_row = 2, .cluster_rows = true});
  ASSERT_TRUE(progs.ok()) << progs.status();
  auto k = codegen::compile(progs->front(), codegen::Target::kAmdgpuGfx942);
  ASSERT_FALSE(k.ok());
  EXPECT_NE(std::string(k.status().message()).find("has no thread-block clusters"), std::string::npos) << k.status();
}

}  // namespace
}  // namespace fixbits
