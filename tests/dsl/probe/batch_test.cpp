// Tests of the instrument's batching and memo (dsl/probe/Experiments.h): a batched
// instrument answers every placement exactly as one call per placement does, never
// hands the black box a problem larger than its limits, runs a placement once, and
// recover_gemm_desc on it recovers the same descriptor with far fewer calls. The
// black box is the CPU reference of a fixed descriptor, which computes every output
// element from its own row and column (the property batching relies on). A batch box
// (several problems a call) gives the same outcomes in BatchLimits::problems times
// fewer calls, and the same descriptor.
#include <string>

#include "dsl/probe/Probe.h"
#include "dsl/reference/Reference.h"
#include "gtest/gtest.h"

namespace fixbits::dsl::probe {
namespace {

// The reference of `d`; records the largest problem and counts calls.
struct CountingBox {
  GemmDesc d;
  int64_t max_m = 0, max_n = 0, calls = 0;
  GemmBlackBox box() {
    return [this](const reference::GemmProblem& p) {
      ++calls;
      max_m = std::max(max_m, p.m);
      max_n = std::max(max_n, p.n);
      return reference::gemm(d, p);
    };
  }
};

GemmDesc split_desc() {
  GemmDesc d;  // f16 wgmma-like ik 16, fast accumulation
  d.family = GemmFamily::kSplitK;
  d.k_cuts = {{96, Fold::kChain}};
  return d;
}

std::vector<Placement> mixed_placements(int64_t k) {
  std::vector<Placement> ps;
  for (int64_t m = 1; m + 1 < k; ++m) ps.push_back({k, {{0, 'r'}, {m, '+'}, {m + 1, '-'}}});
  for (int64_t m = 1; m < k; m += 3) ps.push_back({k, {{0, '+'}, {17, '-'}, {m, 'r'}}});
  for (int64_t m = 0; m + 2 < k; m += 5) ps.push_back({k, {{m, '+'}, {m + 1, '-'}, {m + 2, 'r'}}});
  return ps;
}

// Every placement's outcome from a batched instrument equals its outcome alone, for
// row-wide, column-wide (swapped) and square limits; the problems stay inside them.
TEST(BatchTest, BatchedOutcomesEqualOneCallEach) {
  const int64_t k = 200;
  const std::vector<Placement> ps = mixed_placements(k);
  auto name = [](size_t i) { return std::to_string(i); };
  CountingBox single{split_desc()};
  Instrument one(single.box(), DType::kF16, DType::kF16, DType::kF16);
  absl::StatusOr<std::vector<Outcome>> want = one.run_all(ps, name);
  ASSERT_TRUE(want.ok()) << want.status();
  EXPECT_EQ(single.calls, static_cast<int64_t>(ps.size()));
  EXPECT_EQ(single.max_m, 1);
  EXPECT_EQ(single.max_n, 1);
  int zeros = 0;
  for (Outcome o : *want) zeros += o == Outcome::kZero;
  EXPECT_GT(zeros, 0) << "the walk must show the split, or the comparison proves nothing";
  for (BatchLimits lim : {BatchLimits{16, 1}, BatchLimits{1, 16}, BatchLimits{8, 8},
                          BatchLimits{3, 40}, BatchLimits{40, 3, false}}) {
    CountingBox batched{split_desc()};
    Instrument inst(batched.box(), DType::kF16, DType::kF16, DType::kF16, lim);
    absl::StatusOr<std::vector<Outcome>> got = inst.run_all(ps, name);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, *want) << "limits " << lim.rows << " x " << lim.cols;
    EXPECT_LE(batched.max_m, lim.rows);
    EXPECT_LE(batched.max_n, lim.cols);
    EXPECT_LT(batched.calls, single.calls / 2) << "limits " << lim.rows << " x " << lim.cols;
    EXPECT_EQ(inst.placements(), static_cast<int64_t>(ps.size()));
  }
}

// An r walk (r at a different index in each placement) at a one-column limit, as at an
// N = 1 shape: f16/bf16 placements live in A alone (every b is the fill), so they fill
// the rows of one call; fp8's r carries its own b and needs a column per r index.
TEST(BatchTest, RWalkAtOneColumnFillsTheRows) {
  const int64_t k = 300;
  std::vector<Placement> ps;
  for (int64_t q = 2; q < k; ++q) ps.push_back({k, {{0, '+'}, {1, '-'}, {q, 'r'}}});
  auto name = [](size_t i) { return std::to_string(i); };
  for (DType t : {DType::kF16, DType::kBF16}) {
    GemmDesc d = split_desc();
    d.a_dtype = d.b_dtype = d.out_dtype = t;
    CountingBox c{d};
    Instrument inst(c.box(), t, t, t, BatchLimits{16, 1});
    absl::StatusOr<std::vector<Outcome>> got = inst.run_all(ps, name);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(c.calls, (static_cast<int64_t>(ps.size()) + 15) / 16) << dtype_name(t);
    EXPECT_EQ(c.max_n, 1);
    CountingBox one{d};
    Instrument single(one.box(), t, t, t);
    absl::StatusOr<std::vector<Outcome>> want = single.run_all(ps, name);
    ASSERT_TRUE(want.ok()) << want.status();
    EXPECT_EQ(*got, *want) << dtype_name(t);
  }
  GemmDesc d8 = split_desc();
  d8.a_dtype = d8.b_dtype = DType::kF8E4M3;
  d8.out_dtype = DType::kF16;
  d8.instruction_k = 32;
  ASSERT_TRUE(validate(d8).ok()) << validate(d8);
  CountingBox c8{d8};
  Instrument inst8(c8.box(), DType::kF8E4M3, DType::kF8E4M3, DType::kF16, BatchLimits{16, 1});
  ASSERT_TRUE(inst8.run_all(ps, name).ok());
  EXPECT_EQ(c8.calls, static_cast<int64_t>(ps.size()));
}

// A placement already run is answered from the memo; a repeat inside one list runs once.
TEST(BatchTest, MemoRunsAPlacementOnce) {
  const int64_t k = 64;
  CountingBox c{split_desc()};
  Instrument inst(c.box(), DType::kF16, DType::kF16, DType::kF16);
  std::vector<Placement> ps = {{k, {{0, 'r'}, {5, '+'}, {6, '-'}}},
                               {k, {{6, '-'}, {0, 'r'}, {5, '+'}}},  // same marks, reordered
                               {k, {{0, 'r'}, {7, '+'}, {8, '-'}}}};
  auto name = [](size_t i) { return std::to_string(i); };
  absl::StatusOr<std::vector<Outcome>> a = inst.run_all(ps, name);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(c.calls, 2);
  EXPECT_EQ((*a)[0], (*a)[1]);
  absl::StatusOr<std::vector<Outcome>> b = inst.run_all(ps, name);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(c.calls, 2);
  EXPECT_EQ(*a, *b);
  // Another K is another memo.
  absl::StatusOr<Outcome> other = inst.run({k + 1, {{0, 'r'}, {5, '+'}, {6, '-'}}}, "k+1");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(c.calls, 3);
  // Mixed K in one list is refused, naming the experiment.
  absl::StatusOr<std::vector<Outcome>> mixed =
      inst.run_all({{k, {{0, 'r'}}}, {k + 2, {{0, 'r'}}}}, name);
  EXPECT_EQ(mixed.status().code(), absl::StatusCode::kInvalidArgument);
}

// recover_gemm_desc on a batched instrument gives the unbatched result with far
// fewer black-box calls, for a split-K, a plain and a GEMV descriptor.
TEST(BatchTest, RecoverWithBatchesGivesTheSameDescriptor) {
  GemmDesc plain;
  plain.k_loop_step = {32, ShortTurn::kFirst};
  GemmDesc gemv;
  gemv.family = GemmFamily::kGemv;
  gemv.instruction = Instruction::kScalarFma;
  gemv.instruction_k = 1;
  gemv.k_loop_step = {0, ShortTurn::kLast};
  gemv.lanes = 8;
  gemv.lane_tile = 2;
  gemv.lane_layout = LaneLayout::kStrided;
  gemv.lane_fold = {4, 1, 2};
  for (const GemmDesc& d : {split_desc(), plain, gemv}) {
    ASSERT_TRUE(validate(d).ok()) << validate(d);
    ProbeOptions o;
    o.family = d.family;
    o.k = 230;
    CountingBox single{d}, batched{d};
    absl::StatusOr<GemmDesc> want = recover_gemm_desc(single.box(), o);
    ASSERT_TRUE(want.ok()) << want.status();
    Instrument inst(batched.box(), o.a_dtype, o.b_dtype, o.out_dtype, {32, 32});
    absl::StatusOr<GemmDesc> got = recover_gemm_desc(inst, o);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, *want);
    EXPECT_LT(batched.calls * 8, single.calls) << d;
  }
}

// The reference's sparse box taking several problems a call; records each call's size.
struct QueueBox {
  GemmDesc d;
  std::vector<size_t> sizes;
  SparseBatchBox box() {
    return [this, each = one_by_one(reference_sparse_box(d))](const std::vector<SparseProblem>& ps) {
      sizes.push_back(ps.size());
      return each(ps);
    };
  }
};

TEST(BatchTest, AQueueOfProblemsAnswersAsOneCallEach) {
  const int64_t k = 200;
  const std::vector<Placement> ps = mixed_placements(k);
  auto name = [](size_t i) { return std::to_string(i); };
  CountingBox dense{split_desc()};
  Instrument each(dense.box(), DType::kF16, DType::kF16, DType::kF16, {8, 1});
  each.use_sparse_box(reference_sparse_box(split_desc()));
  absl::StatusOr<std::vector<Outcome>> want = each.run_all(ps, name);
  ASSERT_TRUE(want.ok()) << want.status();
  const int64_t one_each = each.calls();
  ASSERT_GT(one_each, 20);
  for (int64_t problems : {1, 7, 64, 100000}) {
    QueueBox queue{split_desc()};
    Instrument inst(dense.box(), DType::kF16, DType::kF16, DType::kF16, {8, 1, true, problems});
    inst.use_sparse_batch_box(queue.box());
    absl::StatusOr<std::vector<Outcome>> got = inst.run_all(ps, name);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, *want) << problems;
    EXPECT_EQ(inst.calls(), (one_each + problems - 1) / problems) << problems;
    size_t total = 0;
    for (size_t n : queue.sizes) {
      EXPECT_LE(static_cast<int64_t>(n), problems);
      total += n;
    }
    EXPECT_EQ(static_cast<int64_t>(total), one_each) << "the same batches";
  }
  // A box that answers fewer problems than it was given is an error naming the experiment.
  Instrument short_box(dense.box(), DType::kF16, DType::kF16, DType::kF16, {8, 1, true, 4});
  short_box.use_sparse_batch_box([](const std::vector<SparseProblem>&)
                                     -> absl::StatusOr<std::vector<std::vector<uint32_t>>> {
    return std::vector<std::vector<uint32_t>>{};
  });
  absl::Status st = short_box.run_all(ps, name).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << st;
  EXPECT_NE(std::string(st.message()).find("answered 0 of the 4 problems of experiment 0"), std::string::npos) << st;
  Instrument zero(dense.box(), DType::kF16, DType::kF16, DType::kF16, {8, 1, true, 0});
  EXPECT_NE(std::string(zero.run_all(ps, name).status().message()).find("BatchLimits.problems is 0"),
            std::string::npos);
}

// recover_gemm_desc through a queued box: the descriptor of one call per batch.
TEST(BatchTest, RecoverThroughAQueueGivesTheSameDescriptor) {
  GemmDesc gemv;
  gemv.family = GemmFamily::kGemv;
  gemv.instruction = Instruction::kScalarFma;
  gemv.instruction_k = 1;
  gemv.k_loop_step = {0, ShortTurn::kLast};
  gemv.lanes = 8;
  gemv.lane_tile = 1;
  gemv.lane_layout = LaneLayout::kStrided;
  gemv.lane_fold = {4, 2, 1};
  gemv.k_cuts = {{300, Fold::kChain}};
  ProbeOptions o;
  o.family = gemv.family;
  o.k = 1500;
  o.gemv_split = true;
  o.split_dtypes = {{DType::kF32, DType::kF32}};
  CountingBox dense{gemv};
  Instrument each(dense.box(), o.a_dtype, o.b_dtype, o.out_dtype, {1, 17});
  each.use_sparse_box(reference_sparse_box(gemv));
  absl::StatusOr<GemmDesc> want = recover_gemm_desc(each, o);
  ASSERT_TRUE(want.ok()) << want.status();
  EXPECT_EQ(*want, gemv) << to_string(*want);
  QueueBox queue{gemv};
  Instrument inst(dense.box(), o.a_dtype, o.b_dtype, o.out_dtype, {1, 17, true, 64});
  inst.use_sparse_batch_box(queue.box());
  absl::StatusOr<GemmDesc> got = recover_gemm_desc(inst, o);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, *want);
  EXPECT_EQ(inst.placements(), each.placements());
  // 52 calls against 848 here: the random draws and each short run_all (one queue each)
  // are calls of their own.
  EXPECT_LT(inst.calls() * 10, each.calls()) << inst.calls() << " against " << each.calls();
}

TEST(BatchTest, InstrumentDtypesMustMatchTheOptions) {
  CountingBox c{split_desc()};
  Instrument inst(c.box(), DType::kBF16, DType::kBF16, DType::kF16);
  ProbeOptions o;
  o.k = 64;
  absl::Status s = recover_gemm_desc(inst, o).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("a_dtype, b_dtype, out_dtype"), std::string::npos) << s;
  Instrument bad(c.box(), DType::kF16, DType::kF16, DType::kF16, {0, 4});
  EXPECT_EQ(bad.run({64, {{0, 'r'}}}, "x").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fixbits::dsl::probe
