// The run-time test in front of a vector load (codegen/LowerProgram.cpp,
// vector_access): for offsets that are consecutive by construction (arange, plus a
// uniform, sign-extended to i64, plus a uniform i64) it compares only the thread's
// last offset with the first + (R-1), not all R of them. A pinned bf16 row sum with
// 32 elements a thread per pass (strip 4096 over 4 warps) used to spend 31 64-bit
// compares (and 32 address computations) per pass on that test; the bytes per
// instruction of a bf16 row are half an f32 row's, so the test mattered most there.
// Checked on the PTX: the fast path stays (ld.global.v4.b32) and the pass's test is a
// couple of setp.eq.b64 (the last offset, the alignment), for sum, RMSNorm, softmax.
#include <gtest/gtest.h>

#include <string>

#include "codegen/Compile.h"
#include "dsl/tile/ReduceProgram.h"

namespace fixbits {
namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(VectorAccess, ConsecutiveOffsetsAreTestedByTheirLastRegisterOnly) {
  for (dsl::ReduceOp op : {dsl::ReduceOp::kSum, dsl::ReduceOp::kRmsNorm, dsl::ReduceOp::kSoftmax}) {
    const dsl::ReduceDesc d{.op = op, .in_dtype = DType::kBF16,
                            .out_dtype = op == dsl::ReduceOp::kSum ? DType::kF32 : DType::kBF16,
                            .strip = 4096};
    auto prog = dsl::reduce(d, {.warps = 4, .elems_per_thread = 8});
    ASSERT_TRUE(prog.ok()) << prog.status();
    auto k = codegen::compile(*prog, codegen::Target::kNvptxSm90a);
    ASSERT_TRUE(k.ok()) << k.status();
    // Vector accesses: sum 1 load; RMSNorm 1 + x, w loads and the y store; softmax
    // 2 + x load and y store. Each test: <= 2 compares; 31 per test before.
    const size_t accesses = op == dsl::ReduceOp::kSum ? 1 : op == dsl::ReduceOp::kRmsNorm ? 4 : 4;
    EXPECT_LE(count(k->text, "setp.eq.b64"), 2 * accesses) << k->entry << "\n" << k->text;
    EXPECT_GE(count(k->text, "ld.global.v4.b32"), 1u) << k->entry;
  }
}

}  // namespace
}  // namespace fixbits
