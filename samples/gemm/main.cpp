// fixbits-gemm: builds a GEMM from a written-down descriptor, compiles it under
// several speed-knob settings, prints each kernel's PTX signature (verify::signature:
// the hash of the trees the verifier reads back out of the PTX), and -- on a GPU --
// runs every setting and checks its output bits against the CPU reference
// (dsl::reference::gemm) with memcmp. Without a GPU it still compiles and verifies
// and says what it could not run.
//
// Usage: fixbits-gemm ['gemm{...}' descriptor text] [m n k]
//   (default: a plain mma_sync f16 GEMM, k_loop 64/first, m n k = 37 45 300)
// Example:
//   fixbits-gemm 'gemm{family=split_k a=f16 b=f16 acc=f32 out=f16 instr=scalar_fma ik=1
//     fast_accum=1 k_loop=0/last cuts=[128:chain] partial=f32 merge=f32
//     lane_layout=contiguous lanes=32 lane_tile=8 lane_fold=[] alpha_beta=0 bias=0
//     act=none}' 64 64 1000                                   (one line)
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "codegen/Compile.h"
#include "dsl/reference/Reference.h"
#include "dsl/tile/GemmProgram.h"
#include "jit/GemmRunner.h"
#include "runtime/Runtime.h"
#include "verify/Signature.h"

using namespace fixbits;

namespace {

const dsl::GemmConfig kConfigs[] = {{1, 1, 1}, {4, 1, 4}, {2, 4, 3}, {8, 2, 8}};
// wgmma runs per warpgroup: its knob settings keep warps a multiple of 4.
const dsl::GemmConfig kWgmmaConfigs[] = {{4, 1, 1}, {8, 1, 4}, {16, 4, 3}, {4, 2, 8}};

std::vector<dsl::GemmConfig> configs_for(const dsl::GemmDesc& d) {
  if (d.instruction == dsl::Instruction::kWgmma) {
    return {std::begin(kWgmmaConfigs), std::end(kWgmmaConfigs)};
  }
  return {std::begin(kConfigs), std::end(kConfigs)};
}

std::vector<uint32_t> random_bits(DType t, size_t n, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<uint32_t> v(n);
  for (auto& b : v) b = to_bits(t, std::ldexp(normal(rng), static_cast<int>(rng() % 9) - 4));
  return v;
}

std::string msg(const absl::Status& s) { return std::string(s.message()); }

// Compiles the descriptor's kernels under one knob setting and prints their
// signatures. Returns the joined signatures ("" on error).
std::string compile_and_sign(const dsl::GemmDesc& d, const dsl::GemmConfig& c) {
  auto progs = dsl::gemm(d, c);
  if (!progs.ok()) { std::printf("  error: %s\n", msg(progs.status()).c_str()); return ""; }
  std::vector<const tile::Program*> list = {&progs->main};
  if (progs->merge) list.push_back(&*progs->merge);
  std::string joined;
  for (const tile::Program* p : list) {
    auto k = codegen::compile(*p, codegen::Target::kNvptxSm90a);
    if (!k.ok()) { std::printf("  error: %s\n", msg(k.status()).c_str()); return ""; }
    auto sig = verify::signature(k->text, verify::Target::kPtx);
    std::string hex = sig.ok() ? sig->hex : "unavailable (" + msg(sig.status()) + ")";
    std::printf("  warps=%-2d rows/thread=%-2d block_n=%-2d %-52s %6zu B PTX, signature %s\n",
                c.warps, c.rows_per_thread, c.block_n, k->entry.c_str(), k->text.size(),
                hex.c_str());
    joined += hex + ";";
  }
  return joined;
}

}  // namespace

int main(int argc, char** argv) {
  dsl::GemmDesc d;  // mma_sync f16 -> f16, ik 16
  d.k_loop_step = {.step = 64, .short_turn = dsl::ShortTurn::kFirst};
  int arg = 1;
  if (argc > arg && std::strncmp(argv[arg], "gemm{", 5) == 0) {
    auto parsed = dsl::parse_gemm_desc(argv[arg]);
    if (!parsed.ok()) {
      std::fprintf(stderr, "bad descriptor: %s\n", msg(parsed.status()).c_str());
      return 2;
    }
    d = *parsed;
    ++arg;
  }
  int64_t m = 37, n = 45, k = 300;
  if (argc > arg) {
    if (argc != arg + 3) {
      std::fprintf(stderr, "usage: fixbits-gemm ['gemm{...}'] [m n k]\n");
      return 2;
    }
    m = std::atoll(argv[arg]);
    n = std::atoll(argv[arg + 1]);
    k = std::atoll(argv[arg + 2]);
    if (m < 1 || n < 1 || k < 0 || m * n > (int64_t{1} << 24) || m * k > (int64_t{1} << 26) ||
        k * n > (int64_t{1} << 26)) {
      std::fprintf(stderr, "m, n >= 1, k >= 0, m*n <= 2^24, m*k and k*n <= 2^26\n");
      return 2;
    }
  }
  std::printf("%s\n  (hash %016llx), m=%lld n=%lld k=%lld\n\n", dsl::to_string(d).c_str(),
              static_cast<unsigned long long>(dsl::hash(d)), static_cast<long long>(m),
              static_cast<long long>(n), static_cast<long long>(k));
  if (absl::Status s = dsl::validate(d); !s.ok()) {
    std::printf("invalid descriptor: %s\n", msg(s).c_str());
    return 1;
  }

  int bad = 0;
  // A signature hashes every store's tree of one kernel, so settings that give a
  // thread a different number of outputs sign differently; the bits per output
  // element are what the knobs must not change, and the GPU run below checks them.
  std::printf("kernels (signature: the verifier's hash of each kernel's store trees):\n");
  for (const auto& c : configs_for(d)) bad += compile_and_sign(d, c).empty();
  if (bad) return 1;

  std::mt19937 rng(2026);
  dsl::reference::GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.a = random_bits(d.a_dtype, static_cast<size_t>(m * k), rng);
  p.b = random_bits(d.b_dtype, static_cast<size_t>(k * n), rng);
  if (d.alpha_beta) {
    p.c = random_bits(d.out_dtype, static_cast<size_t>(m * n), rng);
    p.alpha = 0.5f;
    p.beta = 2.0f;
  }
  if (d.bias) p.bias = random_bits(DType::kF32, static_cast<size_t>(n), rng);
  auto ref = dsl::reference::gemm(d, p);
  if (!ref.ok()) { std::printf("reference error: %s\n", msg(ref.status()).c_str()); return 1; }

  auto dev = runtime::cuda(0);
  if (!dev.ok()) {
    std::printf("\nno GPU: %s\nThe kernels above compiled to PTX and the verifier signed them; running them "
                "and comparing their bits with the CPU reference needs a CUDA device.\n",
                msg(dev.status()).c_str());
    return 0;
  }
  std::printf("\non %s:\n", (*dev)->info().name.c_str());
  for (const auto& c : configs_for(d)) {
    auto r = jit::GemmRunner::create(*dev, d, c);
    absl::Status s = r.ok() ? r->upload(p) : r.status();
    if (s.ok()) s = r->launch();
    auto got = s.ok() ? r->download() : absl::StatusOr<std::vector<uint32_t>>(s);
    if (!got.ok()) { std::printf("  error: %s\n", msg(got.status()).c_str()); return 1; }
    const bool same = got->size() == ref->size() &&
                      std::memcmp(got->data(), ref->data(), ref->size() * 4) == 0;
    bad += !same;
    std::printf("  warps=%-2d rows/thread=%-2d block_n=%-2d [%s]\n", c.warps, c.rows_per_thread,
                c.block_n, same ? "bit-identical to the CPU reference" : "DIFFERS from the reference");
  }
  std::printf("\n%s\n", bad ? "FAILED: a knob setting differed from the reference"
                            : "OK: every knob setting returned the reference's bits");
  return bad ? 1 : 0;
}
