// HostJit: see HostJit.h.
#include "codegen/HostJit.h"

#include <mutex>

#include "absl/strings/str_cat.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

namespace fixbits::codegen {

HostJit::HostJit(std::unique_ptr<llvm::orc::LLJIT> jit, void* address) : jit_(std::move(jit)), address_(address) {}
HostJit::~HostJit() = default;

absl::StatusOr<std::unique_ptr<HostJit>> host_jit(const std::string& what,
                                                  const std::function<llvm::Function*(llvm::Module&)>& build) {
  static std::once_flag native;  // LLVM's target registry: initialized once per process
  std::call_once(native, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  auto internal = [&](const std::string& step, llvm::Error e) {
    return absl::InternalError(absl::StrCat(what, ": ", step, ": ", llvm::toString(std::move(e))));
  };
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto module = std::make_unique<llvm::Module>(what, *ctx);
  llvm::Function* fn = build(*module);
  const std::string name = fn->getName().str();
  std::string broken;
  llvm::raw_string_ostream os(broken);
  if (llvm::verifyFunction(*fn, &os)) return absl::InternalError(absl::StrCat(what, ": invalid IR: ", broken));
  llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>> jit = llvm::orc::LLJITBuilder().create();
  if (!jit) return internal("no JIT for this host", jit.takeError());
  if (llvm::Error e = (*jit)->addIRModule(llvm::orc::ThreadSafeModule(std::move(module), std::move(ctx)))) {
    return internal("the module was refused", std::move(e));
  }
  llvm::Expected<llvm::orc::ExecutorAddr> sym = (*jit)->lookup(name);
  if (!sym) return internal("no compiled function", sym.takeError());
  void* address = sym->toPtr<void*>();
  return std::make_unique<HostJit>(std::move(*jit), address);
}

}  // namespace fixbits::codegen
