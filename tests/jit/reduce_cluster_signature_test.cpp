// The verify-before-load hook on cluster-row kernels (CPU): every ReduceConfig.cluster_rows
// kernel (RMSNorm / softmax, f32/bf16/f16, P = 2, 3, 4, 8, kept strips 0 and 2) reads
// as PTX to the static checker and gets a signature, so the runtime loads it: the
// cluster directives and barrier.cluster.arrive / wait are parsed, never a rejected
// load. The signature is its own: not the split phases' normalize kernel's (which
// stores no strip results), and softmax's is not RMSNorm's.
#include <set>
#include <string>

#include "absl/strings/str_format.h"
#include "dsl/tile/ReduceProgram.h"
#include "gtest/gtest.h"
#include "tests/jit/ProgramSignature.h"

namespace fixbits {
namespace {

using testing::sm90a_signature;

TEST(ReduceClusterSignature, EveryClusterKernelIsSigned) {
  std::set<std::string> cluster_sigs, split_sigs;
  int signed_kernels = 0;
  for (dsl::ReduceOp op : {dsl::ReduceOp::kRmsNorm, dsl::ReduceOp::kSoftmax}) {
    for (DType in : {DType::kF32, DType::kBF16, DType::kF16}) {
      const dsl::ReduceDesc d{.op = op, .in_dtype = in, .out_dtype = in, .strip = 1024};
      for (int p : {2, 3, 4, 8}) {
        for (int keep : {0, 2}) {
          const dsl::ReduceConfig c{.warps = 4, .elems_per_thread = 8, .blocks_per_row = p,
                                    .keep_passes = keep, .cluster_rows = true};
          auto progs = dsl::reduce_phases(d, c);
          ASSERT_TRUE(progs.ok()) << progs.status();
          auto sig = sm90a_signature(progs->front());
          ASSERT_TRUE(sig.ok()) << dsl::to_string(d) << " P=" << p << " keep=" << keep << ": " << sig.status();
          EXPECT_FALSE(sig->empty());
          cluster_sigs.insert(*sig);
          ++signed_kernels;
        }
        auto split = dsl::reduce_phases(d, {.warps = 4, .elems_per_thread = 8, .blocks_per_row = p});
        ASSERT_TRUE(split.ok());
        auto sig = sm90a_signature(split->back());  // the normalize kernel
        ASSERT_TRUE(sig.ok()) << sig.status();
        split_sigs.insert(*sig);
      }
    }
  }
  EXPECT_EQ(signed_kernels, 2 * 3 * 4 * 2);
  for (const std::string& s : split_sigs) EXPECT_EQ(cluster_sigs.count(s), 0u) << s;
  EXPECT_GE(cluster_sigs.size(), 2u * 3u);  // at least one class per op and dtype
}

}  // namespace
}  // namespace fixbits
