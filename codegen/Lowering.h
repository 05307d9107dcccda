// Lowering: the state shared by the passes that turn a tile Program into LLVM IR
// (LowerProgram for every op, LowerReduce for kReduce). Internal to codegen/;
// included only by LLVM translation units.
//
// Invariant: a lowered tile value holds regs(layout) LLVM values per thread, in
// the layout's register order; a lowered scalar (rank 0) holds one value that is
// the same in every thread of the block (uniform).
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "codegen/Layout.h"
#include "codegen/TargetInfo.h"
#include "dsl/tile/Program.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace fixbits::codegen {

struct Lowered {
  bool scalar = true;
  Layout layout;                   // tiles only
  std::vector<llvm::Value*> regs;  // scalar: 1 value; tile: regs(layout) values
};

struct LoweringContext {
  const tile::Program& program;
  const TargetInfo& target;
  llvm::Module& module;
  llvm::IRBuilder<>& b;
  llvm::Function* kernel = nullptr;
  llvm::Value* tid = nullptr;   // i32 thread index in the block
  llvm::Value* lane = nullptr;  // i32 tid % warp_size
  llvm::Value* warp = nullptr;  // i32 tid / warp_size
  std::vector<Lowered> values;  // by value id
  int smem_arrays = 0;          // shared arrays created so far (for names)
  // The kernel's dynamic shared memory (staged loads): one extern array, carved into
  // 16-byte aligned pieces; its size is what a launch must pass.
  llvm::GlobalVariable* dynamic_smem = nullptr;
  int64_t dynamic_bytes = 0;
};

// Static shared memory a kernel may take without opting in (NVIDIA; gfx942 has 64 KiB of
// LDS a work-group, so the NVIDIA limit binds both).
inline constexpr int64_t kMaxStaticSharedBytes = 48 * 1024;

// Lowers the whole program into a new kernel function of `ctx.module` and returns the
// dynamic shared bytes a launch must pass (staged loads; 0 without). A program whose
// static shared arrays pass kMaxStaticSharedBytes, or whose static and dynamic shared
// memory pass TargetInfo::max_shared_bytes, is an InvalidArgument naming them.
absl::StatusOr<int64_t> lower_program(const tile::Program& program, const TargetInfo& target,
                           llvm::Module& module);

}  // namespace fixbits::codegen
