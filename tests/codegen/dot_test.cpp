// tile dot: Program.h's kDot — d[i][j] = the count-up chain of f32 fmas over k from
// acc[i][j] — holds for user-written tile programs (tests/codegen/DotProgram.h: masked
// loads of a, b, acc, reshape, dot, masked store). The program interpreter's output
// equals an independent std::fma loop (memcmp) over (M, K, N) shapes with K = 1, K
// past the unroll limit, non-powers of two padded by masks, f32/f16/bf16 inputs and
// 1/2/4/8 warps, on fresh adversarial draws (+-L, tiny r, subnormals, -0.0, NaN, inf);
// with acc = +0.0 the chain is dsl::reference::gemm's scalar_fma leaf. The same
// programs compile for sm_90a and gfx942, with K fma.rn.f32 per output, a barrier and
// no unrounded add; the wrong (reversed) order is told apart on the same draws; an
// oversized dot is refused by name. The GPU run is tests/jit/dot_gpu_test.cpp.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "absl/strings/str_format.h"
#include "codegen/Compile.h"
#include "codegen/Layout.h"
#include "dsl/reference/Reference.h"
#include "tests/codegen/DotProgram.h"
#include "tests/codegen/ProgramInterpreter.h"
#include "tests/jit/RandomInputs.h"

namespace fixbits {
namespace {

using testing::Buffers;
using testing::DotShape;
using testing::HostBuffer;
using testing::Mix;

struct Case {
  DotShape s;
  int warps;
  bool k_loop = false;
};

// Every case is a valid blocked layout of (TM,TK), (TK,TN), (TM,TN) over its warps.
std::vector<Case> cases() {
  return {
      {{32, 8, 32, 32, 8, 32}, 1},      // exact tiles
      {{32, 8, 32, 29, 7, 31}, 1},      // m, k, n padded by masks
      {{32, 1, 32, 32, 1, 32}, 1},      // K = 1
      {{64, 1, 64, 61, 1, 3}, 2},       // K = 1, odd n
      {{32, 16, 32, 17, 13, 30}, 4},    // padded, 4 warps
      {{64, 32, 64, 64, 32, 64}, 4},
      {{64, 16, 32, 50, 11, 27}, 8},
      {{16, 128, 16, 16, 128, 16}, 1},  // K > kDotUnrollK: the loop
      {{16, 128, 16, 13, 120, 15}, 2},  // loop with padded K
      {{32, 8, 32, 30, 29, 31}, 1, true},  // a loop of 4 dots over K tiles of 8
      {{32, 16, 32, 32, 64, 32}, 4, true},
  };
}

struct Draw {
  std::vector<uint32_t> a, b, c;
};

Draw draw(const DotShape& s, DType in, std::mt19937_64& rng, bool specials) {
  Draw d;
  d.a = testing::random_bits(in, static_cast<size_t>(s.m * s.k), rng, Mix::kAdversarial, specials);
  d.b = testing::random_bits(in, static_cast<size_t>(s.k * s.n), rng, Mix::kAdversarial, specials);
  d.c = testing::random_bits(DType::kF32, static_cast<size_t>(s.m * s.n), rng, Mix::kAdversarial, specials);
  return d;
}

// Runs the program on the interpreter; the m x n output bits (0xffffffff where unwritten).
std::vector<uint32_t> interpret(const tile::Program& p, const DotShape& s, DType in, const Draw& d) {
  Buffers mem;
  mem["a"] = HostBuffer{in, d.a};
  mem["b"] = HostBuffer{in, d.b};
  mem["c"] = HostBuffer{DType::kF32, d.c};
  mem["d"] = HostBuffer{DType::kF32, std::vector<uint32_t>(static_cast<size_t>(s.m * s.n), 0xffffffffu)};
  absl::Status st = testing::run_block(p, 0, {{"m", s.m}, {"k", s.k}, {"n", s.n}}, {}, mem, 32);
  EXPECT_TRUE(st.ok()) << st;
  return mem["d"].bits;
}

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// Whether the case's tiles have blocked layouts over `warps` warps of `warp_size`
// lanes (wave64 needs twice the elements of warp32).
bool fits(const DotShape& s, int warp_size, int warps) {
  codegen::Layout l;
  for (std::vector<int64_t> shape : {std::vector<int64_t>{s.tm, s.tk}, {s.tk, s.tn}, {s.tm, s.tn},
                                     {s.tm * s.tk}, {s.tk * s.tn}, {s.tm * s.tn}}) {
    if (!codegen::blocked_layout(shape, warp_size, warps, &l).ok()) return false;
  }
  return true;
}

std::string label(const Case& c, tile::Elem e) {
  return absl::StrFormat("tile %dx%dx%d logical %dx%dx%d %s warps=%d%s", c.s.tm, c.s.tk, c.s.tn, c.s.m,
                         c.s.k, c.s.n, tile::elem_name(e), c.warps, c.k_loop ? " k_loop" : "");
}

TEST(Dot, InterpreterEqualsTheChain) {
  const uint64_t seed = testing::fresh_seed();
  std::mt19937_64 rng(seed);
  for (const Case& c : cases()) {
    for (tile::Elem e : {tile::Elem::kF32, tile::Elem::kF16, tile::Elem::kBF16}) {
      absl::StatusOr<tile::Program> p = testing::dot_program(c.s, e, c.warps, c.k_loop);
      ASSERT_TRUE(p.ok()) << label(c, e) << ": " << p.status();
      for (bool specials : {false, true}) {
        const DType in = testing::dot_dtype(e);
        Draw d = draw(c.s, in, rng, specials);
        std::vector<uint32_t> want = testing::dot_chain(c.s, in, d.a, d.b, d.c);
        std::vector<uint32_t> got = interpret(*p, c.s, in, d);
        ASSERT_EQ(got.size(), want.size());
        EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * 4), 0)
            << label(c, e) << " specials=" << specials << " seed=" << seed;
      }
    }
  }
}

// With acc = +0.0 and no padding the chain is the scalar_fma leaf of GemmDesc.h, so
// dsl::reference::gemm (plain, scalar_fma, f32 out) gives the same bits.
TEST(Dot, ZeroAccIsTheReferenceScalarFmaGemm) {
  const uint64_t seed = testing::fresh_seed();
  std::mt19937_64 rng(seed);
  for (tile::Elem e : {tile::Elem::kF32, tile::Elem::kF16, tile::Elem::kBF16}) {
    const DType in = testing::dot_dtype(e);
    for (DotShape s : {DotShape{32, 8, 32, 32, 8, 32}, DotShape{32, 8, 32, 29, 7, 31},
                       DotShape{16, 128, 16, 16, 128, 16}}) {
      Draw d = draw(s, in, rng, /*specials=*/true);
      d.c.assign(d.c.size(), 0u);  // +0.0
      dsl::GemmDesc desc;
      desc.a_dtype = desc.b_dtype = in;
      desc.out_dtype = DType::kF32;
      desc.instruction = dsl::Instruction::kScalarFma;
      desc.instruction_k = 1;
      dsl::reference::GemmProblem prob;
      prob.m = s.m, prob.n = s.n, prob.k = s.k;
      prob.a = d.a;
      prob.b = d.b;
      absl::StatusOr<std::vector<uint32_t>> ref = dsl::reference::gemm(desc, prob);
      ASSERT_TRUE(ref.ok()) << ref.status();
      absl::StatusOr<tile::Program> p = testing::dot_program(s, e, 1);
      ASSERT_TRUE(p.ok()) << p.status();
      std::vector<uint32_t> got = interpret(*p, s, in, d);
      EXPECT_EQ(got, *ref) << tile::elem_name(e) << " " << s.m << "x" << s.k << "x" << s.n
                           << " seed=" << seed;
      EXPECT_EQ(testing::dot_chain(s, in, d.a, d.b, d.c), *ref);
    }
  }
}

// A dot in a loop stages through two alternating shared arrays (one barrier per
// iteration); a single dot keeps only the one it uses.
TEST(Dot, LoopOfDotsAlternatesTwoBuffers) {
  absl::StatusOr<tile::Program> p = testing::dot_program(DotShape{32, 8, 32, 32, 64, 32}, tile::Elem::kF16, 4, true);
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<codegen::CompiledKernel> k = codegen::compile(*p, codegen::Target::kNvptxSm90a);
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(count(k->text, ".shared .align 16 .b8 dot_smem_0_"), 2) << k->text;
  EXPECT_EQ(count(k->text, "bar.sync"), 1);
  p = testing::dot_program(DotShape{32, 8, 32, 32, 8, 32}, tile::Elem::kF16, 4, false);
  ASSERT_TRUE(p.ok());
  k = codegen::compile(*p, codegen::Target::kNvptxSm90a);
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(count(k->text, ".shared .align 16 .b8 dot_smem_0_"), 1);
}

// The comparison can fail: on the adversarial draws a reversed-k chain differs from
// the interpreter's output. And the -0.0 padding of a is needed: with -0.0 products
// a -0.0 acc stays -0.0 through the padded k, where a +0.0 pad would make it +0.0.
TEST(Dot, WrongOrderIsToldApart) {
  const uint64_t seed = testing::fresh_seed();
  std::mt19937_64 rng(seed);
  DotShape s{32, 16, 32, 32, 16, 32};
  absl::StatusOr<tile::Program> p = testing::dot_program(s, tile::Elem::kF32, 1);
  ASSERT_TRUE(p.ok()) << p.status();
  Draw d = draw(s, DType::kF32, rng, /*specials=*/false);
  // Row 0 of a is L, -L, r, 0, ... against a column of ones: forward gives r,
  // reversed gives 0 — so at least one output differs on every draw.
  const float big = 65536.0f, tiny = std::ldexp(1.0f, -20);
  for (int64_t k = 0; k < s.k; ++k) {
    d.a[static_cast<size_t>(k)] = std::bit_cast<uint32_t>(k == 0 ? big : k == 1 ? -big : k == 2 ? tiny : 0.0f);
    d.b[static_cast<size_t>(k * s.n)] = std::bit_cast<uint32_t>(1.0f);
  }
  d.c[0] = 0;
  std::vector<uint32_t> got = interpret(*p, s, DType::kF32, d);
  EXPECT_EQ(got, testing::dot_chain(s, DType::kF32, d.a, d.b, d.c));
  std::vector<uint32_t> reversed = testing::dot_chain(s, DType::kF32, d.a, d.b, d.c, /*reverse=*/true);
  EXPECT_NE(got, reversed);
  int differ = 0;
  for (size_t i = 0; i < got.size(); ++i) differ += got[i] != reversed[i];
  EXPECT_GT(differ, 1) << "only the planted row differs; seed=" << seed;

  // fma(+0, +0, -0.0) = +0.0 for a real k; fma(-0, +0, -0.0) = -0.0 for real and padded k.
  DotShape padded{32, 8, 32, 32, 7, 32};
  absl::StatusOr<tile::Program> q = testing::dot_program(padded, tile::Elem::kF32, 1);
  ASSERT_TRUE(q.ok());
  Draw z;
  z.a.assign(32 * 7, 0u);                       // +0.0
  z.b.assign(7 * 32, 0u);
  z.c.assign(32 * 32, 0x80000000u);             // -0.0
  std::vector<uint32_t> out = interpret(*q, padded, DType::kF32, z);
  EXPECT_EQ(out, std::vector<uint32_t>(32 * 32, 0x00000000u));  // +0 * +0 + -0 = +0 (k real)
  z.a.assign(32 * 7, 0x80000000u);              // -0.0 a: every product -0.0, acc stays -0.0
  out = interpret(*q, padded, DType::kF32, z);
  EXPECT_EQ(out, std::vector<uint32_t>(32 * 32, 0x80000000u)) << "the padded k changed a bit";
}

TEST(Dot, CompilesForBothTargetsWithOneFmaPerStep) {
  for (const Case& c : cases()) {
    for (tile::Elem e : {tile::Elem::kF32, tile::Elem::kF16, tile::Elem::kBF16}) {
      absl::StatusOr<tile::Program> p = testing::dot_program(c.s, e, c.warps, c.k_loop);
      ASSERT_TRUE(p.ok());
      absl::StatusOr<codegen::CompiledKernel> k = codegen::compile(*p, codegen::Target::kNvptxSm90a);
      ASSERT_TRUE(k.ok()) << label(c, e) << ": " << k.status();
      const int64_t per_thread = c.s.tm * c.s.tn / (32 * c.warps);
      EXPECT_GE(count(k->text, "bar.sync"), 1) << label(c, e);
      EXPECT_EQ(count(k->text, "add.f32"), 0) << label(c, e);
      EXPECT_EQ(count(k->text, "fma.rn.ftz"), 0) << label(c, e);
      if (c.s.tk <= 64) {  // unrolled (once per loop body with k_loop)
        EXPECT_EQ(count(k->text, "fma.rn.f32"), c.s.tk * per_thread) << label(c, e);
      } else {
        EXPECT_GE(count(k->text, "fma.rn.f32"), per_thread) << label(c, e);  // a loop
      }
      absl::StatusOr<codegen::CompiledKernel> g = codegen::compile(*p, codegen::Target::kAmdgpuGfx942);
      if (!fits(c.s, 64, c.warps)) {  // too few elements for wave64: refused by name
        ASSERT_FALSE(g.ok()) << label(c, e);
        EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented) << g.status();
        continue;
      }
      ASSERT_TRUE(g.ok()) << label(c, e) << ": " << g.status();
      // One wave needs no barrier (the backend drops it); more need s_barrier.
      if (c.warps > 1) {
        EXPECT_GE(count(g->text, "s_barrier"), 1) << label(c, e);
      }
      EXPECT_GE(count(g->text, "v_fma"), 1) << label(c, e);
    }
  }
}

// Every (shape, warps) of the GPU sweep (tests/jit/dot_gpu_test.cpp) compiles for both
// targets, and the interpreter gives its chain (the GPU test compares the device to
// the same chain).
TEST(Dot, GpuSweepCompilesAndInterprets) {
  const uint64_t seed = testing::fresh_seed();
  std::mt19937_64 rng(seed);
  for (const testing::DotCase& dc : testing::dot_sweep()) {
    const Case c{dc.s, dc.warps, dc.k_loop};
    for (tile::Elem e : {tile::Elem::kF32, tile::Elem::kF16, tile::Elem::kBF16}) {
      absl::StatusOr<tile::Program> p = testing::dot_program(c.s, e, c.warps, c.k_loop);
      ASSERT_TRUE(p.ok()) << label(c, e) << ": " << p.status();
      absl::StatusOr<codegen::CompiledKernel> k = codegen::compile(*p, codegen::Target::kNvptxSm90a);
      EXPECT_TRUE(k.ok()) << label(c, e) << ": " << k.status();
      if (fits(c.s, 64, c.warps)) {
        k = codegen::compile(*p, codegen::Target::kAmdgpuGfx942);
        EXPECT_TRUE(k.ok()) << label(c, e) << " gfx942: " << k.status();
      }
      const DType in = testing::dot_dtype(e);
      Draw d = draw(c.s, in, rng, /*specials=*/true);
      EXPECT_EQ(interpret(*p, c.s, in, d), testing::dot_chain(c.s, in, d.a, d.b, d.c))
          << label(c, e) << " seed=" << seed;
    }
  }
}

TEST(Dot, OversizedStagingIsRefusedByName) {
  absl::StatusOr<tile::Program> p = testing::dot_program(DotShape{64, 64, 64, 64, 64, 64}, tile::Elem::kF16, 4);
  ASSERT_TRUE(p.ok());
  absl::StatusOr<codegen::CompiledKernel> k = codegen::compile(*p, codegen::Target::kNvptxSm90a);
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), absl::StatusCode::kUnimplemented);
  const std::string msg(k.status().message());
  EXPECT_NE(msg.find("dot #"), std::string::npos) << msg;
  EXPECT_NE(msg.find("a (64x64) and b (64x64)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("49152"), std::string::npos) << msg;
}

}  // namespace
}  // namespace fixbits
