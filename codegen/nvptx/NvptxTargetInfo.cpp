// NvptxTargetInfo: TargetInfo for NVIDIA sm_90a through LLVM's NVPTX backend.
// Lane exchange is shfl.sync.bfly.b32 with the full mask (llvm.nvvm.shfl.sync.bfly.f32,
// clamp 31); the barrier is bar.sync 0 (llvm.nvvm.barrier.cta.sync.aligned.all);
// kernels use the PTX_Kernel calling convention. warp_reduce declines: the shared
// count-up shuffle tree is already the pinned tree on NVIDIA. Staged loads copy with
// cp.async (cg for 16 bytes, ca for 4 and 8), one cp.async.commit_group a staged load,
// and wait with cp.async.wait_group N (N: the groups a use may leave pending).
// Example: shuffle_xor(v, 4) -> shfl.sync.bfly.b32 %r, %v, 4, 31, -1;
#include "codegen/TargetInfo.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Module.h"

namespace fixbits::codegen {
namespace {

class NvptxTargetInfo final : public TargetInfo {
 public:
  Target target() const override { return Target::kNvptxSm90a; }
  std::string triple() const override { return "nvptx64-nvidia-cuda"; }
  std::string cpu() const override { return "sm_90a"; }
  // PTX ISA 8.6: accepted by CUDA 12.7+ drivers, including CUDA 13.
  std::string features() const override { return "+ptx86"; }
  int warp_size() const override { return 32; }
  int64_t max_shared_bytes() const override { return 227 * 1024; }
  // Every f32 add/mul/fma/cvt result that is a NaN is 0x7fffffff on sm_90: the references
  // write that NaN for every f32 output (ReduceReference, GemmReference), and the GPU
  // tests' NaN inputs come out as it from sums, maxima, exp and products.
  bool nan_results_are_canonical() const override { return true; }
  // A div.rn.f32 a register is a MUFU.RCP and about ten SASS instructions (softmax's
  // e_i / s; performance.md, session 24).
  bool divide_by_uniform_reciprocal() const override { return true; }
  // div.rn.f32 itself, as inline asm with side effects: LLVM keeps it in its block (an
  // fdiv there is speculated into a select). The same instruction fdiv lowers to.
  llvm::Value* ieee_divide_in_branch(llvm::IRBuilder<>& b, llvm::Value* n, llvm::Value* d) const override {
    auto* fty = llvm::FunctionType::get(b.getFloatTy(), {b.getFloatTy(), b.getFloatTy()}, false);
    llvm::InlineAsm* div = llvm::InlineAsm::get(fty, "div.rn.f32 $0, $1, $2;", "=f,f,f", /*hasSideEffects=*/true);
    return b.CreateCall(fty, div, {n, d}, "div.rn");
  }

  llvm::Value* thread_id(llvm::IRBuilder<>& b) const override {
    return b.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, {}, {}, nullptr, "tid");
  }
  llvm::Value* thread_id_again(llvm::IRBuilder<>& b) const override {
    auto* fty = llvm::FunctionType::get(b.getInt32Ty(), false);
    llvm::InlineAsm* mov = llvm::InlineAsm::get(fty, "mov.u32 $0, %tid.x;", "=r", /*hasSideEffects=*/true);
    return b.CreateCall(fty, mov, {}, "tid.again");
  }
  llvm::Value* block_id(llvm::IRBuilder<>& b, int axis) const override {
    llvm::Intrinsic::ID id = axis == 0   ? llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x
                             : axis == 1 ? llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y
                                         : llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z;
    return b.CreateIntrinsic(id, {}, {}, nullptr, "ctaid");
  }
  llvm::Value* shuffle_xor(llvm::IRBuilder<>& b, llvm::Value* v, int offset) const override {
    llvm::Value* args[] = {b.getInt32(0xffffffffu), v, b.getInt32(offset), b.getInt32(31)};
    return b.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_bfly_f32, {}, args, nullptr, "bfly");
  }
  void barrier(llvm::IRBuilder<>& b) const override {
    b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier_cta_sync_aligned_all, {}, {b.getInt32(0)});
  }
  void mark_kernel(llvm::Function* f, int block_threads) const override {
    f->setCallingConv(llvm::CallingConv::PTX_Kernel);
    f->addFnAttr("nvvm.maxntid", std::to_string(block_threads));
  }
  bool mark_min_blocks(llvm::Function* f, int blocks, int) const override {
    f->addFnAttr("nvvm.minctasm", std::to_string(blocks));  // .minnctapersm
    return true;
  }
  bool mark_cluster(llvm::Function* f, int blocks) const override {
    f->addFnAttr("nvvm.cluster_dim", std::to_string(blocks) + ",1,1");
    return true;
  }
  bool cluster_barrier(llvm::IRBuilder<>& b) const override {
    b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier_cluster_arrive, llvm::ArrayRef<llvm::Value*>{});
    b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier_cluster_wait, llvm::ArrayRef<llvm::Value*>{});
    return true;
  }
  // cp.async.cg (L2 only, 16 bytes) for the streaming case, cp.async.ca for 4 and 8
  // bytes (cg takes only 16).
  bool async_copy(llvm::IRBuilder<>& b, llvm::Value* dst, llvm::Value* src,
                  unsigned bytes) const override {
    llvm::Intrinsic::ID id;
    switch (bytes) {
      case 16: id = llvm::Intrinsic::nvvm_cp_async_cg_shared_global_16; break;
      case 8: id = llvm::Intrinsic::nvvm_cp_async_ca_shared_global_8; break;
      case 4: id = llvm::Intrinsic::nvvm_cp_async_ca_shared_global_4; break;
      default: return false;
    }
    b.CreateIntrinsic(id, {}, {dst, src});
    return true;
  }
  void async_copy_commit(llvm::IRBuilder<>& b) const override {
    b.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_commit_group, llvm::ArrayRef<llvm::Value*>{});
  }
  void async_copy_wait(llvm::IRBuilder<>& b, int pending) const override {
    b.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_wait_group, {b.getInt32(static_cast<uint32_t>(pending))});
  }
};

}  // namespace

std::unique_ptr<TargetInfo> make_nvptx_target_info() { return std::make_unique<NvptxTargetInfo>(); }

}  // namespace fixbits::codegen
