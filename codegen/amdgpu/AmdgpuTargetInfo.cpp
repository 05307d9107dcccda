// AmdgpuTargetInfo: TargetInfo for AMD gfx942 (wave64) through LLVM's AMDGPU backend.
// Lane exchange is ds_bpermute_b32 addressed by (lane ^ offset) * 4 (lane from
// mbcnt); the barrier is a workgroup release fence, s_barrier, acquire fence;
// kernels use the AMDGPU_KERNEL calling convention.
// warp_reduce: for the full pinned wave64 sequence (offsets 1,2,4,8,16,32) it uses
// DPP: row_shr:1,2,4,8 leave in lane 15 of each row the balanced tree of that
// row's 16 lanes ((x14+x15)+(x12+x13), ...), row_bcast:15 folds row pairs and
// row_bcast:31 the two halves, so lane 63 holds the count-up butterfly's tree (up
// to swapped operands, which cannot change a bit); readlane 63 gives it to every
// lane. Any other sequence (free order, partial wave) is declined and the shared
// count-up shuffle tree runs instead.
// Example: shuffle_xor(v, 1) -> v_xor_b32 + ds_bpermute_b32.
#include <algorithm>
#include <bit>
#include <limits>

#include "codegen/TargetInfo.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IntrinsicsAMDGPU.h"
#include "llvm/IR/Module.h"

namespace fixbits::codegen {
namespace {

class AmdgpuTargetInfo final : public TargetInfo {
 public:
  Target target() const override { return Target::kAmdgpuGfx942; }
  std::string triple() const override { return "amdgcn-amd-amdhsa"; }
  std::string cpu() const override { return "gfx942"; }
  std::string features() const override { return "+wavefrontsize64"; }
  int warp_size() const override { return 64; }
  int64_t max_shared_bytes() const override { return 64 * 1024; }

  llvm::Value* thread_id(llvm::IRBuilder<>& b) const override {
    return b.CreateIntrinsic(llvm::Intrinsic::amdgcn_workitem_id_x, {}, {}, nullptr, "tid");
  }
  llvm::Value* block_id(llvm::IRBuilder<>& b, int axis) const override {
    llvm::Intrinsic::ID id = axis == 0   ? llvm::Intrinsic::amdgcn_workgroup_id_x
                             : axis == 1 ? llvm::Intrinsic::amdgcn_workgroup_id_y
                                         : llvm::Intrinsic::amdgcn_workgroup_id_z;
    return b.CreateIntrinsic(id, {}, {}, nullptr, "wgid");
  }
  llvm::Value* shuffle_xor(llvm::IRBuilder<>& b, llvm::Value* v, int offset) const override {
    llvm::Value* lo = b.CreateIntrinsic(llvm::Intrinsic::amdgcn_mbcnt_lo, {},
                                        {b.getInt32(0xffffffffu), b.getInt32(0)});
    llvm::Value* lane = b.CreateIntrinsic(llvm::Intrinsic::amdgcn_mbcnt_hi, {},
                                          {b.getInt32(0xffffffffu), lo}, nullptr, "lane");
    llvm::Value* addr = b.CreateShl(b.CreateXor(lane, b.getInt32(offset)), 2);
    llvm::Value* bits = b.CreateBitCast(v, b.getInt32Ty());
    llvm::Value* got = b.CreateIntrinsic(llvm::Intrinsic::amdgcn_ds_bpermute, {}, {addr, bits});
    return b.CreateBitCast(got, b.getFloatTy(), "bfly");
  }
  void barrier(llvm::IRBuilder<>& b) const override {
    llvm::LLVMContext& ctx = b.getContext();
    b.CreateFence(llvm::AtomicOrdering::Release, ctx.getOrInsertSyncScopeID("workgroup"));
    b.CreateIntrinsic(llvm::Intrinsic::amdgcn_s_barrier, llvm::ArrayRef<llvm::Type*>{}, llvm::ArrayRef<llvm::Value*>{});
    b.CreateFence(llvm::AtomicOrdering::Acquire, ctx.getOrInsertSyncScopeID("workgroup"));
  }
  bool warp_reduce(llvm::IRBuilder<>& b, llvm::Value*& v, tile::Combine c,
                   const std::vector<int>& offsets) const override {
    if (offsets != std::vector<int>{1, 2, 4, 8, 16, 32}) return false;
    llvm::Type* i32 = b.getInt32Ty();
    float ident = c == tile::Combine::kAdd ? -0.0f
                  : c == tile::Combine::kMax ? -std::numeric_limits<float>::infinity()
                                             : std::numeric_limits<float>::infinity();
    llvm::Value* old = b.getInt32(std::bit_cast<uint32_t>(ident));
    // dpp_ctrl, row_mask: row_shr:n = 0x110 + n; row_bcast:15 = 0x142; row_bcast:31 = 0x143.
    const std::pair<unsigned, unsigned> steps[] = {
        {0x111, 0xf}, {0x112, 0xf}, {0x114, 0xf}, {0x118, 0xf}, {0x142, 0xa}, {0x143, 0xc}};
    for (auto [ctrl, row_mask] : steps) {
      llvm::Value* bits = b.CreateBitCast(v, i32);
      llvm::Value* moved = b.CreateIntrinsic(
          llvm::Intrinsic::amdgcn_update_dpp, {i32},
          {old, bits, b.getInt32(ctrl), b.getInt32(row_mask), b.getInt32(0xf), b.getFalse()});
      v = emit_combine(b, c, v, b.CreateBitCast(moved, b.getFloatTy()));
    }
    llvm::Value* top = b.CreateIntrinsic(llvm::Intrinsic::amdgcn_readlane, {i32},
                                         {b.CreateBitCast(v, i32), b.getInt32(63)});
    v = b.CreateBitCast(top, b.getFloatTy(), "wave_reduced");
    return true;
  }
  void mark_kernel(llvm::Function* f, int block_threads) const override {
    f->setCallingConv(llvm::CallingConv::AMDGPU_KERNEL);
    f->addFnAttr("amdgpu-flat-work-group-size", "1," + std::to_string(block_threads));
  }
  // `blocks` work-groups on one CU of 4 SIMDs: at least ceil(blocks * waves / 4) waves
  // per SIMD (the EU), at most the 8 a gfx942 SIMD holds.
  bool mark_min_blocks(llvm::Function* f, int blocks, int block_threads) const override {
    const int waves = (block_threads + 63) / 64;
    const int per_eu = std::min(8, std::max(1, (blocks * waves + 3) / 4));
    f->addFnAttr("amdgpu-waves-per-eu", std::to_string(per_eu));
    return true;
  }
};

}  // namespace

std::unique_ptr<TargetInfo> make_amdgpu_target_info() { return std::make_unique<AmdgpuTargetInfo>(); }

}  // namespace fixbits::codegen
