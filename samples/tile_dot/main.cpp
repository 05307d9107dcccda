// fixbits-tile-dot: a tile kernel written by hand with the DSL's dot, the way a user
// writes one. One block computes D = A B + C for A (32 x 16) f16, B (16 x 32) f16,
// C and D (32 x 32) f32, all row-major. The sample prints the program, compiles it for
// sm_90a under 1, 2 and 4 warps, shows each kernel's verifier signature, and on a
// CUDA device runs each and compares its output bytes with the CPU chain the DSL
// defines for dot
// (d = fma(a[i][k], b[k][j], d) for k = 0, 1, ..., K-1, from c[i][j]; std::fma here).
// The warp count moves no bit (the chain is fixed per output), but the verifier does
// not prove that for dot yet: it signs each warp count apart (over-splitting, the
// sound direction; docs/verify.md), so the three signatures printed differ.
// Exit 0 when every run is bit-identical (or there is no GPU), 1 otherwise.
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "codegen/Compile.h"
#include "dsl/FloatFormat.h"
#include "dsl/tile/Program.h"
#include "jit/Jit.h"
#include "jit/ReduceRunner.h"  // pack_bits / unpack_bits
#include "runtime/Runtime.h"
#include "verify/Signature.h"

namespace fixbits {
namespace {

constexpr int64_t kM = 32, kK = 16, kN = 32;

std::string msg(const absl::Status& s) { return std::string(s.message()); }

// The kernel: load the three tiles (whole, so no masks), reshape them to rank 2,
// d = dot(a, b, c), store d.
absl::StatusOr<tile::Program> dot_kernel(int warps) {
  tile::Builder b("user_dot_w" + std::to_string(warps));
  b.set_num_warps(warps);
  tile::Value pa = b.param("a", tile::Type::ptr(DType::kF16));
  tile::Value pb = b.param("b", tile::Type::ptr(DType::kF16));
  tile::Value pc = b.param("c", tile::Type::ptr(DType::kF32));
  tile::Value pd = b.param("d", tile::Type::ptr(DType::kF32));
  tile::Value a = b.reshape(b.load(pa, b.arange(kM * kK)), {kM, kK});  // (M, K) f16
  tile::Value bt = b.reshape(b.load(pb, b.arange(kK * kN)), {kK, kN}); // (K, N) f16
  tile::Value c = b.reshape(b.load(pc, b.arange(kM * kN)), {kM, kN});  // (M, N) f32
  tile::Value d = b.dot(a, bt, c);                                     // (M, N) f32
  b.store(pd, b.arange(kM * kN), b.reshape(d, {kM * kN}));
  return b.finish();
}

// The chain dot is defined to compute, on the CPU.
std::vector<uint32_t> cpu_dot(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b,
                              const std::vector<uint32_t>& c) {
  std::vector<uint32_t> d(static_cast<size_t>(kM * kN));
  for (int64_t i = 0; i < kM; ++i) {
    for (int64_t j = 0; j < kN; ++j) {
      float acc = std::bit_cast<float>(c[static_cast<size_t>(i * kN + j)]);
      for (int64_t k = 0; k < kK; ++k) {
        acc = std::fma(to_float(DType::kF16, a[static_cast<size_t>(i * kK + k)]),
                       to_float(DType::kF16, b[static_cast<size_t>(k * kN + j)]), acc);
      }
      d[static_cast<size_t>(i * kN + j)] = std::bit_cast<uint32_t>(acc);
    }
  }
  return d;
}

// Values whose sum depends on the order: +-1024 and small ones, in f16.
std::vector<uint32_t> draw(DType t, size_t n, std::mt19937& rng) {
  std::vector<uint32_t> out(n);
  for (auto& v : out) {
    const unsigned r = rng() % 8;
    const float x = r == 0 ? 1024.0f : r == 1 ? -1024.0f
                                              : std::ldexp(static_cast<float>(static_cast<int>(rng() % 2001) - 1000), -10);
    v = to_bits(t, x);
  }
  return out;
}

absl::StatusOr<runtime::Buffer> upload(const runtime::Device& dev, DType t, const std::vector<uint32_t>& bits) {
  std::vector<uint8_t> bytes = jit::pack_bits(t, bits);
  absl::StatusOr<runtime::Buffer> buf = dev.alloc(bytes.size());
  if (!buf.ok()) return buf.status();
  if (absl::Status s = buf->copy_from_host(bytes.data(), bytes.size()); !s.ok()) return s;
  return buf;
}

}  // namespace
}  // namespace fixbits

int main() {
  using namespace fixbits;
  absl::StatusOr<tile::Program> first = dot_kernel(1);
  if (!first.ok()) { std::printf("error: %s\n", msg(first.status()).c_str()); return 1; }
  std::printf("the tile program (1 warp):\n%s\n", tile::to_string(*first).c_str());

  std::printf("compiled for sm_90a (signature: the verifier's hash of the kernel's store trees):\n");
  for (int warps : {1, 2, 4}) {
    absl::StatusOr<tile::Program> p = dot_kernel(warps);
    absl::StatusOr<codegen::CompiledKernel> k =
        p.ok() ? codegen::compile(*p, codegen::Target::kNvptxSm90a)
               : absl::StatusOr<codegen::CompiledKernel>(p.status());
    if (!k.ok()) { std::printf("  warps=%d error: %s\n", warps, msg(k.status()).c_str()); return 1; }
    size_t fmas = 0;
    for (size_t at = k->text.find("fma.rn.f32"); at != std::string::npos; at = k->text.find("fma.rn.f32", at + 1)) ++fmas;
    auto sig = verify::signature(k->text, verify::Target::kPtx);
    std::printf("  warps=%d  %zu threads, %zu fma.rn.f32 in the PTX, signature %s\n", warps,
                static_cast<size_t>(k->block_threads), fmas,
                sig.ok() ? sig->hex.c_str() : ("unavailable: " + msg(sig.status())).c_str());
  }

  std::mt19937 rng(2026);
  const std::vector<uint32_t> a = draw(DType::kF16, kM * kK, rng), b = draw(DType::kF16, kK * kN, rng),
                              c = draw(DType::kF32, kM * kN, rng);
  const std::vector<uint32_t> want = cpu_dot(a, b, c);
  auto dev = runtime::cuda(0);
  if (!dev.ok()) {
    std::printf("\nno GPU: %s\nOn a CUDA device each kernel runs and its bytes are compared with the "
                "CPU chain.\n", msg(dev.status()).c_str());
    return 0;
  }
  std::printf("\non %s:\n", (*dev)->info().name.c_str());
  int bad = 0;
  for (int warps : {1, 2, 4}) {
    absl::StatusOr<tile::Program> p = dot_kernel(warps);
    if (!p.ok()) { std::printf("  error: %s\n", msg(p.status()).c_str()); return 1; }
    auto k = jit::load(**dev, *p);
    auto ba = upload(**dev, DType::kF16, a), bb = upload(**dev, DType::kF16, b);
    auto bc = upload(**dev, DType::kF32, c), bd = upload(**dev, DType::kF32, c);
    absl::Status s = !k.ok() ? k.status() : !ba.ok() ? ba.status() : !bb.ok() ? bb.status()
                   : !bc.ok() ? bc.status() : bd.status();
    if (s.ok()) {
      runtime::LaunchConfig cfg;
      cfg.grid.x = 1;
      cfg.block.x = (*k)->block_threads;
      cfg.dynamic_shared_bytes = (*k)->dynamic_shared_bytes;
      s = (*k)->kernel().launch(cfg, {runtime::KernelArg::pointer(*ba), runtime::KernelArg::pointer(*bb),
                                      runtime::KernelArg::pointer(*bc), runtime::KernelArg::pointer(*bd)});
    }
    std::vector<uint8_t> bytes(want.size() * 4);
    if (s.ok()) s = (*dev)->synchronize();
    if (s.ok()) s = bd->copy_to_host(bytes.data(), bytes.size());
    if (!s.ok()) { std::printf("  warps=%d error: %s\n", warps, msg(s).c_str()); return 1; }
    const bool same = std::memcmp(bytes.data(), want.data(), bytes.size()) == 0;
    bad += !same;
    std::printf("  warps=%d [%s]\n", warps, same ? "bit-identical to the CPU chain" : "DIFFERS from the CPU chain");
  }
  std::printf("\n%s\n", bad ? "FAILED" : "OK: every warp count returned the chain's bits");
  return bad ? 1 : 0;
}
