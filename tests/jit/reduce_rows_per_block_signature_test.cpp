// The verify-before-load hook on rows_per_block kernels (CPU): every RMSNorm / softmax
// kernel that takes R > 1 rows a block in turn (f32/bf16/f16, pinned and free, R = 2 and
// 4, the next row kept in registers or staged in shared memory by a double buffer) reads
// as PTX to the static checker and gets a signature, so the runtime loads it.
// The signature is not the R = 1 kernel's: a row's kept x reaches its trees through the
// row loop's carried registers (phis of the loads before the loop and of the previous
// iteration), so such a kernel signs as a class of its own, as keep_passes, cluster
// and backward-walking kernels do; its bits are shown equal on the interpreter
// (tests/codegen/reduce_rows_per_block_test) and on the device (reduce_gpu_test).
#include <string>

#include "dsl/tile/ReduceProgram.h"
#include "gtest/gtest.h"
#include "tests/jit/ProgramSignature.h"

namespace fixbits {
namespace {

using testing::sm90a_signature;

TEST(ReduceRowsPerBlockSignature, EveryKernelIsSigned) {
  int checked = 0;
  for (dsl::ReduceOp op : {dsl::ReduceOp::kRmsNorm, dsl::ReduceOp::kSoftmax}) {
    for (DType in : {DType::kF32, DType::kBF16, DType::kF16}) {
      for (dsl::TreeOrder order : {dsl::TreeOrder::kPinned, dsl::TreeOrder::kFree}) {
        const dsl::ReduceDesc d{.op = op, .in_dtype = in, .out_dtype = in, .order = order, .strip = 1024};
        for (int r : {2, 4}) {
          for (bool shared : {false, true}) {
            dsl::ReduceConfig c{.warps = 4, .elems_per_thread = 8, .keep_passes = 2, .keep_in_shared = shared,
                                .rows_per_block = r};
            auto one = dsl::reduce(d, c);
            ASSERT_TRUE(one.ok()) << one.status();
            auto sig = sm90a_signature(*one);
            ASSERT_TRUE(sig.ok()) << one->name << ": " << sig.status();
            EXPECT_FALSE(sig->empty());
            c.rows_per_block = 1;
            auto base = sm90a_signature(*dsl::reduce(d, c));
            ASSERT_TRUE(base.ok());
            EXPECT_NE(*sig, *base) << one->name << ": the walk now reads the row loop's carried x as "
                                   << "R = 1's loads; say so in this file's header and expect equal signatures";
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, 2 * 3 * 2 * 2 * 2);
}

}  // namespace
}  // namespace fixbits
