// GPU test of the tile dot (label gpu): the hand-built dot programs of
// tests/codegen/DotProgram.h (masked loads of a, b, acc; dot; masked store), loaded
// through jit::load (compile, cache, verify-before-load, driver) and run on the device
// over the sweep dot_sweep() — padded and exact tiles, K = 1, K past the unroll limit,
// a loop of dots chained over K tiles, 1/2/4/8 warps, f32/f16/bf16 inputs — give exactly Program.h's kDot chain
// (testing::dot_chain, std::fma in k order; memcmp) on fresh random draws with
// adversarial values (+-L, tiny r, subnormals, -0.0, NaN, inf), and the same bits
// under every number of warps, one dot or a loop of dots. Without a device every test prints [SKIP] <reason>; a
// failing draw prints its seed (replay with FIXBITS_SEED=<n>).
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "jit/Jit.h"
#include "jit/ReduceRunner.h"  // pack_bits / unpack_bits
#include "runtime/Runtime.h"
#include "tests/codegen/DotProgram.h"
#include "tests/jit/RandomInputs.h"
#include "tests/jit/SeededGpuTest.h"

namespace fixbits {
namespace {

using testing::DotShape;
using testing::Mix;

class DotGpuTest : public testing::SeededGpuTest {
 protected:
  // Uploads `bits` packed as `t` (at least 4 bytes, so an empty buffer is valid).
  absl::StatusOr<runtime::Buffer> upload(DType t, const std::vector<uint32_t>& bits) {
    std::vector<uint8_t> bytes = jit::pack_bits(t, bits);
    if (bytes.size() < 4) bytes.resize(4, 0xff);
    absl::StatusOr<runtime::Buffer> buf = device_->alloc(bytes.size());
    if (!buf.ok()) return buf.status();
    if (absl::Status s = buf->copy_from_host(bytes.data(), bytes.size()); !s.ok()) return s;
    return buf;
  }

  // Runs the dot program of (s, e, warps) on one block; the m x n f32 output bits,
  // or empty after ADD_FAILURE. d starts as 0xff bytes, so a skipped output shows.
  std::vector<uint32_t> run(const DotShape& s, tile::Elem e, int warps, bool k_loop,
                            const std::vector<uint32_t>& a, const std::vector<uint32_t>& b,
                            const std::vector<uint32_t>& c) {
    const std::string what = absl::StrFormat("dot %dx%dx%d (logical %dx%dx%d) %s warps=%d%s", s.tm, s.tk,
                                             s.tn, s.m, s.k, s.n, tile::elem_name(e), warps,
                                             k_loop ? " k_loop" : "");
    absl::StatusOr<tile::Program> p = testing::dot_program(s, e, warps, k_loop);
    if (!p.ok()) {
      ADD_FAILURE() << what << ": " << p.status();
      return {};
    }
    absl::StatusOr<std::shared_ptr<const jit::JitKernel>> k = jit::load(*device_, *p);
    if (!k.ok()) {
      ADD_FAILURE() << what << ": " << k.status();
      return {};
    }
    const DType in = testing::dot_dtype(e);
    const std::vector<uint32_t> fill(static_cast<size_t>(s.m * s.n), 0xffffffffu);
    absl::StatusOr<runtime::Buffer> ba = upload(in, a), bb = upload(in, b),
                                    bc = upload(DType::kF32, c), bd = upload(DType::kF32, fill);
    for (const auto* buf : {&ba, &bb, &bc, &bd}) {
      if (!buf->ok()) {
        ADD_FAILURE() << what << ": " << buf->status();
        return {};
      }
    }
    std::vector<runtime::KernelArg> args = {
        runtime::KernelArg::pointer(*ba), runtime::KernelArg::pointer(*bb),
        runtime::KernelArg::pointer(*bc), runtime::KernelArg::pointer(*bd),
        runtime::KernelArg::scalar<int32_t>(static_cast<int32_t>(s.m)),
        runtime::KernelArg::scalar<int32_t>(static_cast<int32_t>(s.k)),
        runtime::KernelArg::scalar<int32_t>(static_cast<int32_t>(s.n))};
    runtime::LaunchConfig cfg;
    cfg.grid.x = 1;
    cfg.block.x = (*k)->block_threads;
    cfg.dynamic_shared_bytes = (*k)->dynamic_shared_bytes;
    if (absl::Status st = (*k)->kernel().launch(cfg, args); !st.ok()) {
      ADD_FAILURE() << what << ": " << st;
      return {};
    }
    std::vector<uint8_t> bytes(fill.size() * 4);
    if (absl::Status st = bd->copy_to_host(bytes.data(), bytes.size()); !st.ok()) {
      ADD_FAILURE() << what << ": " << st;
      return {};
    }
    return jit::unpack_bits(DType::kF32, bytes);
  }
};

TEST_F(DotGpuTest, EqualsTheChainUnderEveryWarpCount) {
  for (const testing::DotCase& dc : testing::dot_sweep()) {
    for (tile::Elem e : {tile::Elem::kF32, tile::Elem::kF16, tile::Elem::kBF16}) {
      const DType in = testing::dot_dtype(e);
      for (bool specials : {false, true}) {
        const DotShape& s = dc.s;
        std::vector<uint32_t> a = testing::random_bits(in, static_cast<size_t>(s.m * s.k), rng_, Mix::kAdversarial, specials);
        std::vector<uint32_t> b = testing::random_bits(in, static_cast<size_t>(s.k * s.n), rng_, Mix::kAdversarial, specials);
        std::vector<uint32_t> c = testing::random_bits(DType::kF32, static_cast<size_t>(s.m * s.n), rng_, Mix::kAdversarial, specials);
        const std::vector<uint32_t> want = testing::dot_chain(s, in, a, b, c);
        const std::vector<uint32_t> got = run(s, e, dc.warps, dc.k_loop, a, b, c);
        ASSERT_EQ(got.size(), want.size());
        size_t bad = 0;
        for (size_t i = 0; i < want.size(); ++i) bad += got[i] != want[i];
        EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * 4), 0)
            << "dot " << s.tm << "x" << s.tk << "x" << s.tn << " " << tile::elem_name(e)
            << " warps=" << dc.warps << " k_loop=" << dc.k_loop << " specials=" << specials << ": " << bad << " of "
            << want.size() << " outputs differ; seed=" << seed_;
      }
    }
  }
}

// One draw, every warp count: the bits do not depend on the layout.
TEST_F(DotGpuTest, WarpsMoveNoBit) {
  const DotShape s{64, 16, 64, 61, 13, 59};
  const DType in = DType::kBF16;
  std::vector<uint32_t> a = testing::random_bits(in, static_cast<size_t>(s.m * s.k), rng_, Mix::kAdversarial, true);
  std::vector<uint32_t> b = testing::random_bits(in, static_cast<size_t>(s.k * s.n), rng_, Mix::kAdversarial, true);
  std::vector<uint32_t> c = testing::random_bits(DType::kF32, static_cast<size_t>(s.m * s.n), rng_, Mix::kAdversarial, true);
  const std::vector<uint32_t> want = testing::dot_chain(s, in, a, b, c);
  for (int w : {1, 2, 4, 8}) {
    EXPECT_EQ(run(s, tile::Elem::kBF16, w, false, a, b, c), want) << "warps=" << w << " seed=" << seed_;
    EXPECT_EQ(run(s, tile::Elem::kBF16, w, true, a, b, c), want) << "k_loop warps=" << w << " seed=" << seed_;
  }
}

}  // namespace
}  // namespace fixbits
