// The verify-before-load hook on the backward phases of alternate_row_order (CPU): every
// split RMSNorm / softmax phase that walks the rows last to first (normalize_rev,
// exppart_rev; f32/bf16/f16, P = 2, 3, 8) reads as PTX to the static checker and gets a
// signature, so the runtime loads it. The signature is not the forward phase's: the
// leaves' addresses carry the row expression rows-1 - b/P, which the walk does not
// blank as it blanks a plain block coordinate, so a backward phase signs as a class of
// its own (as keep_passes and cluster kernels do); its bits are shown equal on the
// interpreter (tests/codegen/reduce_row_order_test) and on the device
// (reduce_gpu_test). The forward phases of an alternating split are the forward
// order's programs, so they sign alike.
#include <string>

#include "dsl/tile/ReduceProgram.h"
#include "gtest/gtest.h"
#include "tests/jit/ProgramSignature.h"

namespace fixbits {
namespace {

using testing::sm90a_signature;

TEST(ReduceRowOrderSignature, EveryBackwardPhaseIsSigned) {
  int checked = 0;
  for (dsl::ReduceOp op : {dsl::ReduceOp::kRmsNorm, dsl::ReduceOp::kSoftmax}) {
    for (DType in : {DType::kF32, DType::kBF16, DType::kF16}) {
      const dsl::ReduceDesc d{.op = op, .in_dtype = in, .out_dtype = in, .strip = 1024};
      for (int p : {2, 3, 8}) {
        dsl::ReduceConfig c{.warps = 4, .elems_per_thread = 8, .blocks_per_row = p};
        auto forward = dsl::reduce_phases(d, c);
        c.alternate_row_order = true;
        auto alternating = dsl::reduce_phases(d, c);
        ASSERT_TRUE(forward.ok()) << forward.status();
        ASSERT_TRUE(alternating.ok()) << alternating.status();
        auto back = sm90a_signature((*alternating)[1]);
        ASSERT_TRUE(back.ok()) << (*alternating)[1].name << ": " << back.status();
        EXPECT_FALSE(back->empty());
        auto fwd = sm90a_signature((*forward)[1]);
        ASSERT_TRUE(fwd.ok()) << fwd.status();
        EXPECT_NE(*back, *fwd) << (*alternating)[1].name << ": the walk now blanks the row expression; "
                               << "say so in this file's header and expect equal signatures";
        for (size_t i = 0; i < forward->size(); i += 2) {  // the forward phases
          EXPECT_EQ((*alternating)[i], (*forward)[i]) << "phase " << i;
        }
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 2 * 3 * 3);
}

}  // namespace
}  // namespace fixbits
