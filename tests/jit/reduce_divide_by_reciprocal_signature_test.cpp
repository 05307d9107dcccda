// ReduceConfig.divide_by_reciprocal on the CPU: every pinned softmax kernel of the sweep
// configurations (warps 1-32 x elements 1-16, f32/f16/bf16) with the knob is read by the
// static checker and signed. With whole_strips they all sign as one class per dtype --
// each output's tree is guard(its own range test, the fma path, the division), whatever
// the registers a thread holds -- which is not the class of the same kernels without the
// knob (the guard is part of the tree); masked kernels sign as one class from 2 elements
// a thread, and those of 1 element as another. And the knob's errors name the field: lanes 64 (gfx942
// keeps a division each) and an op other than softmax (no tile is divided).
#include <map>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "dsl/tile/ReduceProgram.h"
#include "gtest/gtest.h"
#include "tests/jit/ProgramSignature.h"
#include "tests/jit/ReduceSweep.h"

namespace fixbits {
namespace {

using testing::sm90a_signature;

class DivideByReciprocalSignature : public ::testing::TestWithParam<DType> {};

// The signatures of the sweep's pinned softmax kernels with the knob (and, apart, without
// it), with or without whole_strips; signature -> the configs that sign so.
struct Classes {
  std::map<std::string, std::string> with;
  std::set<std::string> without;
  int built = 0;
  std::string list() const {
    std::string out;
    for (const auto& [sig, configs] : with) absl::StrAppend(&out, "\n  ", sig.substr(0, 16), ":", configs);
    return out;
  }
};

Classes sign_sweep(DType t, bool whole_strips, bool (*take)(const dsl::ReduceConfig&)) {
  const dsl::ReduceDesc d = testing::sweep_desc({dsl::ReduceOp::kSoftmax, t}, dsl::TreeOrder::kPinned);
  Classes out;
  for (dsl::ReduceConfig c : testing::sweep_configs()) {
    if (!take(c)) continue;
    c.whole_strips = whole_strips;
    auto plain = dsl::reduce(d, c);
    c.divide_by_reciprocal = true;
    auto knob = dsl::reduce(d, c);
    if (!plain.ok()) {  // a block wider than the strip: refused with or without the knob
      EXPECT_FALSE(knob.ok()) << testing::sweep_key(d, c);
      continue;
    }
    EXPECT_TRUE(knob.ok()) << testing::sweep_key(d, c) << ": " << knob.status();
    if (!knob.ok()) continue;
    EXPECT_TRUE(knob->divide_by_reciprocal);
    EXPECT_NE(knob->name.find("_rd"), std::string::npos) << knob->name;
    auto sig = sm90a_signature(*knob);
    auto plain_sig = sm90a_signature(*plain);
    EXPECT_TRUE(sig.ok()) << testing::sweep_key(d, c) << ": " << sig.status();
    EXPECT_TRUE(plain_sig.ok()) << plain_sig.status();
    if (!sig.ok() || !plain_sig.ok()) continue;
    out.with[*sig] += absl::StrCat(" w", c.warps, "e", c.elems_per_thread);
    out.without.insert(*plain_sig);
    ++out.built;
  }
  return out;
}

bool every(const dsl::ReduceConfig&) { return true; }
bool two_or_more(const dsl::ReduceConfig& c) { return c.elems_per_thread >= 2; }
bool one(const dsl::ReduceConfig& c) { return c.elems_per_thread == 1; }

// Whole passes (no masks; the bench's softmax winners): one class over every config,
// not the class of the same kernels without the knob.
TEST_P(DivideByReciprocalSignature, WholeStripKernelsSignAsOneClassOfTheirOwn) {
  const Classes c = sign_sweep(GetParam(), true, every);
  EXPECT_GE(c.built, 20);
  EXPECT_EQ(c.with.size(), 1u) << "the knob's kernels split:" << c.list();
  EXPECT_EQ(c.without.size(), 1u);
  for (const auto& [sig, configs] : c.with) EXPECT_EQ(c.without.count(sig), 0u) << configs;
}

// Masked passes: one class over every config of 2 or more elements a thread. With one
// element a thread (a scalar load under its mask feeds the range test) the kernels sign,
// as a class apart: the checker does not yet merge the two forms, so the autotuner
// keeps them apart (never merging what it cannot show equal).
TEST_P(DivideByReciprocalSignature, MaskedKernelsSignAsOneClassFromTwoElementsAThread) {
  const Classes c = sign_sweep(GetParam(), false, two_or_more);
  EXPECT_GE(c.built, 15);
  EXPECT_EQ(c.with.size(), 1u) << "the knob's kernels split:" << c.list();
  const Classes e1 = sign_sweep(GetParam(), false, one);
  EXPECT_GE(e1.built, 5);
  EXPECT_EQ(e1.with.size(), 1u) << e1.list();
}

INSTANTIATE_TEST_SUITE_P(Softmax, DivideByReciprocalSignature,
                         ::testing::Values(DType::kF32, DType::kF16, DType::kBF16),
                         [](const ::testing::TestParamInfo<DType>& i) {
                           return std::string(dtype_name(i.param));
                         });

TEST(DivideByReciprocalErrors, NameTheField) {
  dsl::ReduceDesc softmax = testing::sweep_desc({dsl::ReduceOp::kSoftmax, DType::kF32}, dsl::TreeOrder::kPinned);
  auto amd = dsl::reduce(softmax, {.warps = 4, .elems_per_thread = 4, .lanes = 64, .divide_by_reciprocal = true});
  ASSERT_FALSE(amd.ok());
  EXPECT_NE(std::string(amd.status().message()).find("ReduceConfig.divide_by_reciprocal needs lanes 32"),
            std::string::npos)
      << amd.status();
  for (dsl::ReduceOp op : {dsl::ReduceOp::kSum, dsl::ReduceOp::kMax, dsl::ReduceOp::kRmsNorm}) {
    dsl::ReduceDesc d = testing::sweep_desc({op, DType::kF32}, dsl::TreeOrder::kPinned);
    auto p = dsl::reduce(d, {.divide_by_reciprocal = true});
    ASSERT_FALSE(p.ok()) << dsl::to_string(d);
    EXPECT_NE(std::string(p.status().message()).find("ReduceConfig.divide_by_reciprocal applies to softmax"),
              std::string::npos)
        << p.status();
  }
}

}  // namespace
}  // namespace fixbits
