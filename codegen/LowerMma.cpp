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
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Instructions.h"

namespace fixbits::codegen {
namespace {

// One warp-collective inline-asm call (convergent, nounwind) of `args` whose f32
// results (as many as c has registers) are the d fragment: they replace c's
// registers in the returned value.
Lowered emit_matrix_asm(llvm::IRBuilder<>& bld, const Lowered& c,
                        const std::vector<llvm::Value*>& args, const std::string& text,
                        const std::string& constraints, bool side_effects, const char* name) {
  std::vector<llvm::Type*> arg_types;
  for (llvm::Value* v : args) arg_types.push_back(v->getType());
  llvm::Type* f32 = bld.getFloatTy();
  auto* ret_ty = llvm::StructType::get(bld.getContext(),
                                       std::vector<llvm::Type*>(c.regs.size(), f32));
  auto* fty = llvm::FunctionType::get(ret_ty, arg_types, false);
  llvm::InlineAsm* asm_fn = llvm::InlineAsm::get(fty, text, constraints, side_effects);
  llvm::CallInst* call = bld.CreateCall(fty, asm_fn, args, name);
  call->addFnAttr(llvm::Attribute::Convergent);
  call->addFnAttr(llvm::Attribute::NoUnwind);
  Lowered out = c;
  for (unsigned j = 0; j < c.regs.size(); ++j) out.regs[j] = bld.CreateExtractValue(call, {j});
  return out;
}

}  // namespace

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
  for (size_t j = 0; j < 4; ++j) args.push_back(pack(a.regs, j));
  for (size_t j = 0; j < 2; ++j) args.push_back(pack(b.regs, j));
  for (size_t j = 0; j < 4; ++j) args.push_back(c.regs[j]);
  const char* ty = in == tile::Elem::kF16 ? "f16" : "bf16";
  std::string text = absl::StrFormat(
      "mma.sync.aligned.m16n8k16.row.col.f32.%s.%s.f32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, "
      "{$8, $9}, {$10, $11, $12, $13};",
      ty, ty);
  return emit_matrix_asm(bld, c, args, text, std::string("=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f"),
                         /*side_effects=*/false, "mma");
}

// wgmma: before/after for one warpgroup of a 4-warp block (E = 512, f16):
//   %d = wgmma %a, %b, %c : f32<512>          ; a: f16<1024>, b: f16<512>
// becomes (per thread; w = warp, g = lane/4, t = lane%4, b0..b3 its B registers)
//   st.shared.b16 [slot_w + off(k(r), g)], b_r     r = 0..3, k(r) = 2t + r%2 + 8(r/2)
//   asm "fence.proxy.async.shared::cta; bar.sync 0; wgmma.fence; wgmma.mma_async
//        .m64n8k16.f32.f16.f16 {d}, {A0..A3}, desc(slot_4*(w/4)), 1, 1, 1, 0;
//        wgmma.commit_group; wgmma.wait_group 0; bar.sync 0"   (d tied to c)
// off(k, n) = (k*s / 16) * 128 + n * 16 + (k*s) % 16 bytes, s = element size.
absl::StatusOr<Lowered> lower_wgmma(LoweringContext& ctx, const tile::Op& op, int n) {
  auto fail = [&](const std::string& what) {
    return absl::UnimplementedError(absl::StrFormat("wgmma #%d: %s", n, what));
  };
  if (ctx.target.target() != Target::kNvptxSm90a) {
    return fail("wgmma exists only on NVIDIA sm_90a");
  }
  const int warps = ctx.program.num_warps;
  if (warps % 4 != 0) {
    return fail(absl::StrFormat(
        "the program has %d warps; wgmma runs per warpgroup and needs a multiple of 4", warps));
  }
  const tile::Elem in = ctx.program.values[op.args[0]].elem;
  const tile::Elem in_b = ctx.program.values[op.args[1]].elem;
  const bool fp8 = tile::is_fp8(in);
  const size_t na = fp8 ? 16 : 8, nb = fp8 ? 8 : 4;
  const Lowered& a = ctx.values[op.args[0]];
  const Lowered& b = ctx.values[op.args[1]];
  const Lowered& c = ctx.values[op.args[2]];
  const size_t wide = c.scalar ? 0 : c.regs.size() / 4;  // N = 8 * wide
  if (a.scalar || b.scalar || c.scalar || wide < 1 || wide > 32 || c.regs.size() != 4 * wide ||
      a.regs.size() != na || b.regs.size() != nb * wide) {
    return fail(absl::StrFormat(
        "each thread must hold %d a, %d*W b and 4*W c values, W in [1, 32] (c's extent = 4W x "
        "%d threads); it holds %d, %d and %d",
        na, nb, 32 * warps, a.regs.size(), b.regs.size(), c.regs.size()));
  }
  const uint64_t slot_bytes = 256 * static_cast<uint64_t>(wide);  // K x N per warp
  if (slot_bytes * warps > 48 * 1024) {
    return fail(absl::StrFormat(
        "the B slots take %d bytes of shared memory (%d warps x %d bytes for N = %d); the "
        "static limit is 49152",
        slot_bytes * warps, warps, slot_bytes, 8 * wide));
  }
  llvm::IRBuilder<>& bld = ctx.b;
  llvm::Type* i32 = bld.getInt32Ty();
  const unsigned esz = fp8 ? 1 : 2;

  // One slot of 256 * W bytes per warp (K x 8W columns, K * esz = 32 bytes per column):
  // core matrix (k-half h, column group j) at j * 256 + h * 128.
  // Every wgmma op of the kernel with this slot size shares one array: each op ends
  // with wait_group 0 and bar.sync, so no warp rewrites a slot that is still read.
  auto* slot_ty = llvm::ArrayType::get(bld.getInt8Ty(), slot_bytes * static_cast<uint64_t>(warps));
  llvm::GlobalVariable* slots = nullptr;
  for (llvm::GlobalVariable& gv : ctx.module.globals()) {
    if (gv.getName().starts_with("wgmma_b_smem_") && gv.getValueType() == slot_ty) slots = &gv;
  }
  if (slots == nullptr) {
    slots = new llvm::GlobalVariable(
        ctx.module, slot_ty, false, llvm::GlobalValue::InternalLinkage,
        llvm::UndefValue::get(slot_ty), absl::StrFormat("wgmma_b_smem_%d", ctx.smem_arrays++),
        nullptr, llvm::GlobalValue::NotThreadLocal, ctx.target.shared_address_space());
    slots->setAlignment(llvm::Align(128));
  }
  llvm::Value* g = bld.CreateLShr(ctx.lane, 2, "g");
  llvm::Value* t = bld.CreateAnd(ctx.lane, 3, "t");
  llvm::Value* own = bld.CreateMul(ctx.warp, bld.getInt32(static_cast<uint32_t>(slot_bytes)));
  for (size_t j = 0; j < wide; ++j) {
    for (size_t r = 0; r < nb; ++r) {
      // B fragment element r of column tile j: k = 2t + r%2 + 8(r/2) (f16/bf16),
      // 4t + r%4 + 16(r/4) (fp8), column 8j + g.
      llvm::Value* k = fp8 ? bld.CreateAdd(bld.CreateShl(t, 2), bld.getInt32(r % 4 + 16 * (r / 4)))
                           : bld.CreateAdd(bld.CreateShl(t, 1), bld.getInt32(r % 2 + 8 * (r / 2)));
      llvm::Value* kb = bld.CreateMul(k, bld.getInt32(esz));  // byte along K
      llvm::Value* off = bld.CreateAdd(
          bld.CreateAdd(bld.CreateMul(bld.CreateLShr(kb, 4), bld.getInt32(128)),
                        bld.CreateShl(g, 4)),
          bld.CreateAdd(bld.CreateAnd(kb, 15), bld.getInt32(static_cast<uint32_t>(256 * j))));
      llvm::Value* p = bld.CreateInBoundsGEP(bld.getInt8Ty(), slots, bld.CreateAdd(own, off));
      bld.CreateStore(b.regs[j * nb + r], p);
    }
  }
  // The warpgroup's matrix descriptor: start address >> 4, leading byte offset (the
  // next core matrix along K) 128 >> 4, stride byte offset (the next 8 columns)
  // 256 >> 4, no swizzle.
  llvm::Value* first = bld.CreateMul(bld.CreateAnd(ctx.warp, bld.getInt32(~3u)),
                                     bld.getInt32(static_cast<uint32_t>(slot_bytes)));
  llvm::Value* addr = bld.CreatePtrToInt(
      bld.CreateInBoundsGEP(bld.getInt8Ty(), slots, first), bld.getInt64Ty());
  llvm::Value* desc = bld.CreateOr(
      bld.CreateLShr(bld.CreateAnd(addr, bld.getInt64(0x3FFFF)), 4),
      bld.getInt64((uint64_t{128 >> 4} << 16) | (uint64_t{256 >> 4} << 32)), "wgmma_desc");

  // A: four .b32 registers, element r in byte/half (r % per) of register r / per.
  const size_t per = fp8 ? 4 : 2;
  std::vector<llvm::Value*> args;
  for (size_t j = 0; j < 4; ++j) {
    llvm::Value* w = bld.getInt32(0);
    for (size_t i = 0; i < per; ++i) {
      llvm::Value* v = a.regs[j * per + i];
      llvm::Value* bits = fp8 ? bld.CreateZExt(v, i32)
                              : bld.CreateZExt(bld.CreateBitCast(v, bld.getInt16Ty()), i32);
      w = bld.CreateOr(w, bld.CreateShl(bits, static_cast<uint64_t>(i * (32 / per))));
    }
    args.push_back(w);
  }
  args.push_back(desc);
  for (llvm::Value* v : c.regs) args.push_back(v);
  auto name = [](tile::Elem e) {
    switch (e) {
      case tile::Elem::kF16: return "f16";
      case tile::Elem::kBF16: return "bf16";
      case tile::Elem::kE4M3: return "e4m3";
      default: return "e5m2";
    }
  };
  // Operands: $0..$(4W-1) the d registers (tied to c), then the four A registers and
  // the descriptor.
  const size_t nd = 4 * wide;
  std::string d_list, a_list, constraints;
  for (size_t j = 0; j < nd; ++j) {
    d_list += absl::StrFormat("%s$%d", j ? ", " : "", j);
    constraints += "=f,";
  }
  for (size_t j = 0; j < 4; ++j) a_list += absl::StrFormat("%s$%d", j ? ", " : "", nd + j);
  constraints += "r,r,r,r,l";
  for (size_t j = 0; j < nd; ++j) constraints += absl::StrFormat(",%d", j);
  constraints += ",~{memory}";
  // f16/bf16 take imm-trans-a/b (0: K-major); fp8 has none (K-major only).
  const std::string text = absl::StrFormat(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
      "fence.proxy.async.shared::cta;\nbar.sync 0;\nwgmma.fence.sync.aligned;\n"
      "wgmma.mma_async.sync.aligned.m64n%dk%d.f32.%s.%s {%s}, {%s}, $%d, "
      "p, 1, 1%s;\nwgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\n"
      "bar.sync 0;\n}",
      8 * wide, fp8 ? 32 : 16, name(in), name(in_b), d_list, a_list, nd + 4, fp8 ? "" : ", 0");
  return emit_matrix_asm(bld, c, args, text, constraints, /*side_effects=*/true, "wgmma");
}

}  // namespace fixbits::codegen
