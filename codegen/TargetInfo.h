// TargetInfo: what shared lowering asks of a GPU target — thread/block ids, lane
// exchange, shared memory, barriers, kernel marking, and an optional
// instruction-level warp reduction. Included only by LLVM translation units.
//
// Contract: shuffle_xor(v, off) returns lane (lane ^ off)'s v for every lane of a
// full warp; barrier() is a block-wide execution and shared-memory barrier.
// warp_reduce may decline (return false, emitting nothing), in which case the
// caller builds the same tree from shuffle_xor steps; when it accepts, it must
// produce exactly the tree of combining partners lane ^ off for off in `offsets`,
// in that order, with every lane holding the result. cluster_barrier / mark_cluster
// (thread-block clusters, tile::OpKind::kClusterBarrier) may decline by returning
// false, emitting nothing; the lowering then reports the op as unsupported.
// async_copy (staged loads) may decline too; the lowering then copies through
// registers with plain loads and shared stores.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "codegen/Compile.h"
#include "dsl/tile/Program.h"
#include "llvm/IR/IRBuilder.h"

namespace fixbits::codegen {

class TargetInfo {
 public:
  virtual ~TargetInfo() = default;
  virtual Target target() const = 0;
  virtual std::string triple() const = 0;
  virtual std::string cpu() const = 0;
  virtual std::string features() const = 0;
  virtual int warp_size() const = 0;
  virtual unsigned global_address_space() const { return 1; }
  virtual unsigned shared_address_space() const { return 3; }
  // Shared memory one block may take, static and dynamic together, once the launch opts
  // in (sm_90: 227 KiB; gfx942: the 64 KiB of LDS a work-group may have).
  virtual int64_t max_shared_bytes() const = 0;
  // Whether every f32 arithmetic result that is a NaN is the target's one canonical NaN,
  // whatever NaN operands it had (PTX: 0x7fffffff), so a NaN need not be selected apart
  // to get its bits (codegen/LowerExp.h). False keeps the reference's select.
  virtual bool nan_results_are_canonical() const { return false; }
  // Whether a program's divide_by_reciprocal is lowered: an f32 tile divided by one value
  // in every register as one reciprocal and two fmas a register (codegen/LowerDivide.h:
  // the same bits as a division each, with a branch to the division outside its range).
  // False: such a program is refused. Only a target whose verifier walk is shown to read
  // that data-dependent branch says yes (NVPTX).
  virtual bool divide_by_uniform_reciprocal() const { return false; }
  // For such a target: the IEEE f32 division n / d as an op LLVM does not speculate out
  // of its block, so the branch around it stays a branch (LowerDivide.h, IeeeDivide).
  virtual llvm::Value* ieee_divide_in_branch(llvm::IRBuilder<>& b, llvm::Value* n, llvm::Value* d) const {
    return b.CreateFDiv(n, d);
  }
  virtual llvm::Value* thread_id(llvm::IRBuilder<>& b) const = 0;  // i32 within the block
  // The thread index read again, as a value no optimizer merges with an earlier read,
  // so what code after a barrier computes from it is computed there rather than kept
  // live across the barrier (NVPTX: a volatile mov from %tid.x). Same value.
  virtual llvm::Value* thread_id_again(llvm::IRBuilder<>& b) const { return thread_id(b); }
  virtual llvm::Value* block_id(llvm::IRBuilder<>& b, int axis) const = 0;  // i32
  virtual llvm::Value* shuffle_xor(llvm::IRBuilder<>& b, llvm::Value* v, int offset) const = 0;
  virtual void barrier(llvm::IRBuilder<>& b) const = 0;
  virtual void mark_kernel(llvm::Function* f, int block_threads) const = 0;
  // Asks the compiler to fit `blocks` blocks of `block_threads` on one SM / CU (a speed
  // request: registers are capped to fit). May decline (false, nothing marked).
  virtual bool mark_min_blocks(llvm::Function* f, int blocks, int block_threads) const { return false; }
  // Declares that the kernel runs in clusters of `blocks` blocks along x.
  virtual bool mark_cluster(llvm::Function* f, int blocks) const { return false; }
  // Cluster-wide barrier: arrive (release) then wait (acquire), every thread.
  virtual bool cluster_barrier(llvm::IRBuilder<>& b) const { return false; }
  // Copies `bytes` (4, 8 or 16; both addresses aligned to it) from global `src` to
  // shared `dst` asynchronously, through no register. The copies a thread issued are
  // complete and visible to that thread after async_copy_wait. May decline (return
  // false, emitting nothing): the caller then copies through registers. Copies are
  // grouped: async_copy_commit closes the thread's open group (an empty group is
  // complete at once), and async_copy_wait(b, n) returns once at most the n groups
  // committed last may still be pending, so a use of an early group need not wait for
  // the copies issued after it.
  virtual bool async_copy(llvm::IRBuilder<>& b, llvm::Value* dst, llvm::Value* src,
                          unsigned bytes) const {
    return false;
  }
  virtual void async_copy_commit(llvm::IRBuilder<>& b) const {}
  // Waits until at most `pending` of the thread's committed groups are incomplete
  // (0: every async_copy this thread issued; nothing where async_copy declines).
  virtual void async_copy_wait(llvm::IRBuilder<>& b, int pending) const {}
  virtual bool warp_reduce(llvm::IRBuilder<>& b, llvm::Value*& v, tile::Combine c,
                           const std::vector<int>& offsets) const {
    return false;
  }
};

std::unique_ptr<TargetInfo> make_nvptx_target_info();
std::unique_ptr<TargetInfo> make_amdgpu_target_info();

// The combine as one IEEE binary32 instruction (fadd / llvm.maximum / llvm.minimum).
llvm::Value* emit_combine(llvm::IRBuilder<>& b, tile::Combine c, llvm::Value* x, llvm::Value* y);

}  // namespace fixbits::codegen
