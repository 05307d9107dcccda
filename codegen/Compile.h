// Compile: the codegen's public entry — a tile Program in, PTX (sm_90a) or AMDGCN
// (gfx942) text out, with everything the runtime needs to launch it.
//
// Contract: compile() validates the program first and returns a Status naming the
// op for anything it cannot lower (never an LLVM assert); the LLVM module is
// verified before emission. Float ops are emitted without fast-math flags and with
// contraction off, so PTX carries add.rn.f32 / mul.rn.f32 and no fma unless the
// program asks for one (fixbits_exp).
//
// Kernel parameter ABI (in Program::params order, one kernel parameter each):
//   ptr<T>  -> 64-bit global pointer (PTX .param .u64 .ptr .global; AMDGPU
//              addrspace(1) pointer, 8 bytes)
//   i32 / i64 / f32 -> the scalar by value (4 / 8 / 4 bytes)
// Launch: grid = (value of the problem size named by `grid`, 1, 1) — for
// dsl::reduce programs that is one block per row; block = (block_threads, 1, 1);
// dynamic shared memory = dynamic_shared_bytes (static shared memory is in the text).
// Example:
//   auto prog = dsl::reduce(desc, {.warps = 8});
//   auto k = codegen::compile(*prog, codegen::Target::kNvptxSm90a);
//   // k->text is PTX; launch k->entry with grid (rows), block (k->block_threads).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/tile/Program.h"

namespace fixbits::codegen {

enum class Target : uint8_t { kNvptxSm90a, kAmdgpuGfx942 };
std::string target_name(Target t);  // "nvptx-sm_90a", "amdgpu-gfx942"

enum class ParamKind : uint8_t { kPointer, kI32, kI64, kF32 };

struct KernelParam {
  std::string name;
  ParamKind kind = ParamKind::kPointer;
  DType pointee = DType::kF32;  // kPointer only
  int size_bytes = 8;
};

struct CompiledKernel {
  Target target = Target::kNvptxSm90a;
  std::string entry;               // kernel symbol
  std::string text;                // PTX or AMDGCN assembly
  std::vector<KernelParam> params; // in launch order
  int block_threads = 128;         // block = (block_threads, 1, 1)
  int dynamic_shared_bytes = 0;
  std::string grid = "rows";       // grid.x = the named problem size
  uint64_t program_hash = 0;       // tile::hash(program)
};

// Instructions (of the optimized LLVM module) past which the codegen skips LLVM's
// straight-line strength reduction ("slsr", an optional IR pass of the NVPTX and AMDGPU
// codegen pipelines). Its cost grows with the square of a kernel's blocks (LLVM 22's
// SCEV reuse check scans the block after each candidate): 4.2 of 4.6 s of codegen for a
// softmax kernel keeping 8 strips in shared memory at 8 warps x 8, 17 s for 16 strips.
// It rewrites integer address arithmetic only, so no output bit depends on it: the PTX
// has the same floating-point instructions (tests/codegen/emit_test.cpp), and ptxas gave
// the kernels it was compared on the same registers. The verifier's signature of such a
// kernel may differ from the full pipeline's (a vector store keeps its run-time
// contiguity test, which the pass folds, and the signature hashes that guard); these
// kernels' signatures already differed between keep counts. Smaller modules get the
// whole pipeline as before (the kernels docs/performance.md measured are below it, and
// the 970 kernels of jit_reduce_partition_test split into the same 452 classes).
inline constexpr int64_t kStrengthReductionLimit = 8000;

// For tests and tools; the runtime and its cache compile with the defaults.
struct CompileOptions {
  int64_t strength_reduction_limit = kStrengthReductionLimit;
};

absl::StatusOr<CompiledKernel> compile(const tile::Program& program, Target target,
                                       const CompileOptions& options = {});

}  // namespace fixbits::codegen
