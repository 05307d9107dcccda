// LowerMma: before/after for one warp (E = 128, so R = 4 c values per thread):
//   %d = mma_sync %a, %b, %c : f32<128>        ; a: f16<256>, b: f16<128>
// becomes (per thread; a0..a7, b0..b3, c0..c3 its registers in order)
//   A_j = bitcast <2 x half> {a_2j, a_2j+1} to i32     j = 0..3
//   B_j = bitcast <2 x half> {b_2j, b_2j+1} to i32     j = 0..1
//   {d0,d1,d2,d3} = asm "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 ..."
// The asm call is convergent (a warp-collective instruction must not be moved
// into divergent control flow) and has no other side effects.
#include "codegen/LowerMma.h"

#include "absl/strings/str_format.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Instructions.h"

namespace fixbits::codegen {

absl::StatusOr<Lowered> lower_mma_sync(LoweringContext& ctx, const tile::Op& op, int n) {
  auto fail = [&](const std::string& what) {
    return absl::UnimplementedError(absl::StrFormat("mma_sync #%d: %s", n, what));
  };
  if (ctx.target.target() != Target::kNvptxSm90a) {
    return fail("mma.sync exists only on NVIDIA targets");
  }
  const Lowered& a = ctx.values[op.args[0]];
  const Lowered& b = ctx.values[op.args[1]];
  const Lowered& c = ctx.values[op.args[2]];
  if (a.scalar || b.scalar || c.scalar || a.regs.size() != 8 || b.regs.size() != 4 ||
      c.regs.size() != 4) {
    return fail(absl::StrFormat(
        "each thread must hold 8 a, 4 b and 4 c values (c's extent = 4 x %d threads); it "
        "holds %d, %d and %d",
        ctx.target.warp_size() * ctx.program.num_warps, a.regs.size(), b.regs.size(),
        c.regs.size()));
  }
  const tile::Elem in = ctx.program.values[op.args[0]].elem;
  llvm::IRBuilder<>& bld = ctx.b;
  llvm::Type* half = in == tile::Elem::kF16 ? bld.getHalfTy() : bld.getBFloatTy();
  auto* pair_ty = llvm::FixedVectorType::get(half, 2);
  auto pack = [&](const std::vector<llvm::Value*>& v, size_t j) {
    llvm::Value* p = llvm::PoisonValue::get(pair_ty);
    p = bld.CreateInsertElement(p, v[2 * j], uint64_t{0});
    p = bld.CreateInsertElement(p, v[2 * j + 1], uint64_t{1});
    return bld.CreateBitCast(p, bld.getInt32Ty());
  };
  std::vector<llvm::Value*> args;
  std::vector<llvm::Type*> arg_types;
  for (size_t j = 0; j < 4; ++j) args.push_back(pack(a.regs, j));
  for (size_t j = 0; j < 2; ++j) args.push_back(pack(b.regs, j));
  for (size_t j = 0; j < 4; ++j) args.push_back(c.regs[j]);
  for (llvm::Value* v : args) arg_types.push_back(v->getType());
  llvm::Type* f32 = bld.getFloatTy();
  auto* ret_ty = llvm::StructType::get(bld.getContext(), {f32, f32, f32, f32});
  auto* fty = llvm::FunctionType::get(ret_ty, arg_types, false);
  const char* ty = in == tile::Elem::kF16 ? "f16" : "bf16";
  std::string text = absl::StrFormat(
      "mma.sync.aligned.m16n8k16.row.col.f32.%s.%s.f32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, "
      "{$8, $9}, {$10, $11, $12, $13};",
      ty, ty);
  llvm::InlineAsm* asm_fn = llvm::InlineAsm::get(fty, text, "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f",
                                                 /*hasSideEffects=*/false);
  llvm::CallInst* call = bld.CreateCall(fty, asm_fn, args, "mma");
  call->addFnAttr(llvm::Attribute::Convergent);
  call->addFnAttr(llvm::Attribute::NoUnwind);
  Lowered out = c;
  for (unsigned j = 0; j < 4; ++j) out.regs[j] = bld.CreateExtractValue(call, {j});
  return out;
}

}  // namespace fixbits::codegen
