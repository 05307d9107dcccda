// fixbits-reduce: the first program a new user runs. It writes down two reductions
// as descriptors (a pinned row sum and a pinned RMSNorm), compiles each under several
// block sizes / warp counts, and -- on a GPU -- runs them and shows that every
// configuration returns the same bits as every other and as the CPU reference, while
// the free order (what an unconstrained compiler does) moves with the configuration.
// Without a GPU it still compiles the kernels and says what it could not run.
//
// Usage: fixbits-reduce [rows] [cols]     (defaults 8 4099)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "codegen/Compile.h"
#include "dsl/reference/Reference.h"
#include "dsl/tile/ReduceProgram.h"
#include "jit/ReduceRunner.h"
#include "runtime/Runtime.h"

using namespace fixbits;

namespace {

const dsl::ReduceConfig kConfigs[] = {
    {.warps = 1, .elems_per_thread = 4}, {.warps = 4, .elems_per_thread = 4},
    {.warps = 8, .elems_per_thread = 2}, {.warps = 32, .elems_per_thread = 1}};

std::vector<uint32_t> random_bits(DType t, size_t n, std::mt19937& rng, bool positive) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<uint32_t> v(n);
  for (auto& b : v) {
    float x = std::ldexp(normal(rng), static_cast<int>(rng() % 9) - 4);
    b = to_bits(t, positive ? std::fabs(x) + 0.25f : x);
  }
  return v;
}

std::string head(const std::vector<uint32_t>& bits, DType t) {
  std::string s;
  for (size_t i = 0; i < bits.size() && i < 3; ++i) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%.9g (0x%0*x)", i ? ", " : "", to_float(t, bits[i]),
                  dtype_bits(t) / 4, bits[i]);
    s += buf;
  }
  return s;
}

// Compiles every configuration without a device, so the sample is useful anywhere.
int compile_only(const dsl::ReduceDesc& d) {
  for (const auto& c : kConfigs) {
    auto prog = dsl::reduce(d, c);
    if (!prog.ok()) { std::printf("  error: %s\n", std::string(prog.status().message()).c_str()); return 1; }
    auto k = codegen::compile(*prog, codegen::Target::kNvptxSm90a);
    if (!k.ok()) { std::printf("  error: %s\n", std::string(k.status().message()).c_str()); return 1; }
    std::printf("  warps=%-2d elems/thread=%-2d -> %s, %zu bytes of PTX, block %d\n", c.warps,
                c.elems_per_thread, k->entry.c_str(), k->text.size(), k->block_threads);
  }
  return 0;
}

// Runs `d` under every configuration and compares with the reference of `ref_desc`
// (the pinned descriptor itself, or for a free-order run the pinned twin).
int run_on_gpu(std::shared_ptr<runtime::Device> dev, const dsl::ReduceDesc& d,
               const dsl::ReduceDesc& ref_desc, const dsl::reference::ReduceProblem& p) {
  auto ref = dsl::reference::reduce(ref_desc, p);
  if (!ref.ok()) { std::printf("  reference error: %s\n", std::string(ref.status().message()).c_str()); return 1; }
  std::printf("  CPU reference (pinned): %s ...\n", head(*ref, d.out_dtype).c_str());
  int bad = 0;
  for (const auto& c : kConfigs) {
    auto r = jit::ReduceRunner::create(dev, d, c);
    absl::Status s = r.ok() ? r->upload(p) : r.status();
    if (s.ok()) s = r->launch();
    auto got = s.ok() ? r->download() : absl::StatusOr<std::vector<uint32_t>>(s);
    if (!got.ok()) { std::printf("  error: %s\n", std::string(got.status().message()).c_str()); return 1; }
    const bool same = got->size() == ref->size() &&
                      std::memcmp(got->data(), ref->data(), ref->size() * 4) == 0;
    bad += !same;
    std::printf("  warps=%-2d elems/thread=%-2d [%s] %s\n", c.warps, c.elems_per_thread,
                same ? "bit-identical to the reference" : "DIFFERS from the reference",
                head(*got, d.out_dtype).c_str());
  }
  return bad;
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t rows = argc > 1 ? std::atoll(argv[1]) : 8;
  const int64_t cols = argc > 2 ? std::atoll(argv[2]) : 4099;
  if (rows < 1 || cols < 1 || rows * cols > (int64_t{1} << 28)) {
    std::fprintf(stderr, "usage: fixbits-reduce [rows >= 1] [cols >= 1], rows*cols <= 2^28\n");
    return 2;
  }
  const dsl::ReduceDesc sum{.op = dsl::ReduceOp::kSum, .in_dtype = DType::kBF16,
                            .out_dtype = DType::kF32, .strip = 1024};
  const dsl::ReduceDesc rms{.op = dsl::ReduceOp::kRmsNorm, .in_dtype = DType::kBF16,
                            .out_dtype = DType::kBF16, .strip = 1024};
  dsl::ReduceDesc free_sum = sum;
  free_sum.order = dsl::TreeOrder::kFree;

  std::mt19937 rng(2026);
  dsl::reference::ReduceProblem p{.rows = rows, .cols = cols};
  p.x = random_bits(DType::kBF16, static_cast<size_t>(rows * cols), rng, false);
  p.w = random_bits(DType::kBF16, static_cast<size_t>(cols), rng, true);

  auto dev = runtime::cuda(0);
  int bad = 0;
  for (const dsl::ReduceDesc* d : {&sum, &rms, static_cast<const dsl::ReduceDesc*>(&free_sum)}) {
    std::printf("\n%s   (hash %016llx)\n", dsl::to_string(*d).c_str(),
                static_cast<unsigned long long>(dsl::hash(*d)));
    if (!dev.ok()) { bad += compile_only(*d); continue; }
    const int diffs = run_on_gpu(*dev, *d, d == &free_sum ? sum : *d, p);
    if (d == &free_sum) {
      std::printf("  free order: %d of %zu configurations differ from the pinned reference "
                  "(expected: most of them; its bits depend on the layout)\n",
                  diffs, std::size(kConfigs));
    } else {
      bad += diffs;
    }
  }
  if (!dev.ok()) {
    std::printf("\nno GPU: %s\nThe kernels above compiled to PTX; running them and comparing "
                "bits needs a CUDA device.\n", std::string(dev.status().message()).c_str());
    return bad ? 1 : 0;
  }
  std::printf("\n%s\n", bad ? "FAILED: a pinned configuration differed from the reference"
                            : "OK: every pinned configuration returned the reference's bits");
  return bad ? 1 : 0;
}
