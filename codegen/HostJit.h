// HostJit: one LLVM IR function compiled for this CPU by LLVM's JIT, so a lowering whose
// bits must match the reference's (LowerExp, LowerDivide) is checked here, without a GPU.
//
// Invariant: host_jit builds its own context and module, lets `build` add one function
// to that module, verifies the IR and compiles it; the returned object owns the JIT, and
// address() stays valid while it lives. Every failure is an Internal status that starts
// with `what` and names the step LLVM refused.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace llvm {
class Function;
class Module;
namespace orc {
class LLJIT;
}  // namespace orc
}  // namespace llvm

namespace fixbits::codegen {

class HostJit {
 public:
  HostJit(std::unique_ptr<llvm::orc::LLJIT> jit, void* address);
  ~HostJit();
  HostJit(const HostJit&) = delete;
  HostJit& operator=(const HostJit&) = delete;
  void* address() const { return address_; }

 private:
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  void* address_;
};

// `build` adds the function to compile to the module and returns it.
absl::StatusOr<std::unique_ptr<HostJit>> host_jit(const std::string& what,
                                                  const std::function<llvm::Function*(llvm::Module&)>& build);

}  // namespace fixbits::codegen
