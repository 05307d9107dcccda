// Emit: LLVM TargetMachine plumbing. The NVPTX and AMDGPU targets are
// initialised once (thread-safe); everything else is per call.
// Example: make_target_machine(nvptx) -> "nvptx64-nvidia-cuda", sm_90a, +ptx86;
//          emit_assembly(m, tm) -> ".version 8.6\n.target sm_90a ...".
#include "codegen/Emit.h"

#include <limits>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "codegen/TargetInfo.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/OptBisect.h"
#include "llvm/IR/PassInstrumentation.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Triple.h"

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
void LLVMInitializeAMDGPUTargetInfo();
void LLVMInitializeAMDGPUTarget();
void LLVMInitializeAMDGPUTargetMC();
void LLVMInitializeAMDGPUAsmPrinter();
}

namespace fixbits::codegen {

namespace {
void init_targets() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
  });
}
}  // namespace

absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> make_target_machine(const TargetInfo& t) {
  init_targets();
  llvm::Triple triple(t.triple());
  std::string err;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, err);
  if (!target) {
    return absl::InternalError(absl::StrCat("LLVM has no target for ", t.triple(), ": ", err));
  }
  llvm::TargetOptions opts;
  opts.AllowFPOpFusion = llvm::FPOpFusion::Strict;  // never contract a*b+c into fma
  opts.NoInfsFPMath = false;
  opts.NoNaNsFPMath = false;
  opts.NoSignedZerosFPMath = false;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, t.cpu(), t.features(), opts, std::nullopt, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  if (!tm) return absl::InternalError(absl::StrCat("LLVM could not create a machine for ", t.cpu()));
  return tm;
}

void configure_module(llvm::Module& m, llvm::TargetMachine& tm) {
  m.setTargetTriple(tm.getTargetTriple());
  m.setDataLayout(tm.createDataLayout());
}

absl::Status verify_module(const llvm::Module& m) {
  std::string msg;
  llvm::raw_string_ostream os(msg);
  if (llvm::verifyModule(m, &os)) {
    return absl::InternalError(absl::StrCat("codegen produced invalid LLVM IR (a fixbits bug): ", msg));
  }
  return absl::OkStatus();
}

void optimize_module(llvm::Module& m, llvm::TargetMachine& tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  // VectorCombine is left out: it turns a vector load whose lanes are only extracted into
  // scalar loads, and when the element-by-element fallback beside it loads the same
  // elements, SimplifyCFG then sinks both arms' loads into one set of scalar loads from
  // phi'd addresses that no later pass can vectorize again (an unmasked bf16 pass lost
  // its ld.global.v4 that way). Left alone, the vector paths stay vector loads.
  llvm::PassInstrumentationCallbacks callbacks;
  callbacks.registerShouldRunOptionalPassCallback(
      [](llvm::StringRef pass, llvm::Any) { return pass != "VectorCombinePass"; });
  llvm::PassBuilder pb(&tm, llvm::PipelineTuningOptions(), std::nullopt, &callbacks);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(m, mam);
}

namespace {

// The instructions of a module, up to `limit` (counting stops there).
int64_t instruction_count(const llvm::Module& m, int64_t limit) {
  int64_t n = 0;
  for (const llvm::Function& f : m) {
    for (const llvm::BasicBlock& bb : f) {
      n += static_cast<int64_t>(bb.size());
      if (n >= limit) return n;
    }
  }
  return n;
}

// Skips the straight-line strength reduction ("slsr", as the legacy pass manager names
// it to the gate) and lets every other pass run.
class SkipStrengthReduction : public llvm::OptPassGate {
 public:
  bool shouldRunPass(llvm::StringRef pass, llvm::StringRef) const override {
    return pass != "slsr";
  }
  bool isEnabled() const override { return true; }
};

}  // namespace

bool skips_strength_reduction(const llvm::Module& m, int64_t limit) {
  if (limit == std::numeric_limits<int64_t>::max()) return false;  // never: the full pipeline
  return instruction_count(m, limit + 1) > limit;
}

absl::StatusOr<std::string> emit_assembly(llvm::Module& m, llvm::TargetMachine& tm,
                                          int64_t strength_reduction_limit) {
  llvm::SmallString<0> buf;
  llvm::raw_svector_ostream os(buf);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile)) {
    return absl::InternalError("LLVM cannot emit assembly for this target.");
  }
  // The gate lives on the module's context (one per compile) for this run only.
  SkipStrengthReduction skip;
  llvm::LLVMContext& ctx = m.getContext();
  llvm::OptPassGate& before = ctx.getOptPassGate();
  const bool gate = skips_strength_reduction(m, strength_reduction_limit);
  if (gate) ctx.setOptPassGate(skip);
  pm.run(m);
  if (gate) ctx.setOptPassGate(before);
  return std::string(buf.str());
}

std::string module_text(const llvm::Module& m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  m.print(os, nullptr);
  return s;
}

}  // namespace fixbits::codegen
