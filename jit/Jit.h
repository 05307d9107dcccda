// Jit: the one call that turns a tile program into a launchable kernel on a device:
// codegen::compile -> kernel cache (memory, disk) -> verify-before-load -> driver load.
//
// Contract: the cache key is the program's canonical text (so two programs share an
// entry only if they are equal) -- or, through load_keyed(), a caller's key that
// determines the program (a descriptor's text plus its speed knobs) --, the target,
// and the compiler version joined with a digest of the code generator's and the
// verifier's sources (so a changed codegen never reuses a stale disk entry, and a
// changed verifier never meets a signature an older one stored). A kernel already loaded
// on a device is kept in a process-wide table (under a lock) and returned without
// touching the cache, the verifier or the driver again; the launch
// metadata codegen returns (block size, dynamic shared memory, parameter list) is
// stored with the entry, so a cache hit launches exactly like a fresh build.
// Errors from any stage come back as the Status of that stage, unchanged.
//
// Example:
//   auto dev = runtime::cuda();
//   auto prog = dsl::reduce(desc, {.warps = 8});
//   auto k = jit::load(**dev, *prog);             // StatusOr<jit::JitKernel>
//   (*k)->kernel().launch({.grid = {rows}, .block = {k->block_threads}}, args);
#pragma once

#include <memory>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "codegen/Compile.h"
#include "dsl/tile/Program.h"
#include "runtime/Device.h"
#include "runtime/KernelCache.h"
#include "runtime/KernelLoader.h"

namespace fixbits::jit {

struct JitKernel {
  runtime::LoadedKernel loaded;     // module, kernel, cache entry, where it came from
  const runtime::Kernel& kernel() const { return loaded.kernel; }
  uint32_t block_threads = 0;
  uint32_t dynamic_shared_bytes = 0;
  std::string grid;                 // the problem size grid.x is taken from ("rows")
};

// The target string the runtime and verifier use for a codegen target.
std::string runtime_target(codegen::Target t);  // "sm_90a" / "gfx942"

// The compiler version string of cache keys: runtime's default plus the digest.
std::string compiler_version();

absl::StatusOr<std::shared_ptr<const JitKernel>> load(const runtime::Device& device, const tile::Program& program,
                               codegen::Target target = codegen::Target::kNvptxSm90a,
                               runtime::KernelCache* cache = nullptr);

// As load(), keyed by `key`, which must determine the program `build` returns; the
// program is built only when no loaded kernel or cache entry has that key. `device`
// must outlive the process-wide table (runtime::cuda()'s devices do).
using ProgramBuilder = absl::FunctionRef<absl::StatusOr<tile::Program>()>;
absl::StatusOr<std::shared_ptr<const JitKernel>> load_keyed(const runtime::Device& device, const std::string& key,
                                     ProgramBuilder build,
                                     codegen::Target target = codegen::Target::kNvptxSm90a,
                                     runtime::KernelCache* cache = nullptr);

// Forgets every loaded kernel (the kernel cache is left alone); for benchmarks that
// measure cache hits.
void forget_loaded_kernels();

}  // namespace fixbits::jit
