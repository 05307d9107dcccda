// Emit: the LLVM back half of the pipeline — target machine creation, module
// verification, the -O3 optimisation pipeline, and assembly (PTX / AMDGCN) output.
//
// Contract: the TargetMachine has AllowFPOpFusion = Strict and no unsafe-math
// options, so no pass may contract or reassociate float ops; verify_module returns
// an Internal Status with LLVM's message instead of asserting.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "codegen/Compile.h"

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace fixbits::codegen {

class TargetInfo;

absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> make_target_machine(const TargetInfo& t);
// Sets the module's triple and data layout from the target machine.
void configure_module(llvm::Module& m, llvm::TargetMachine& tm);
absl::Status verify_module(const llvm::Module& m);
void optimize_module(llvm::Module& m, llvm::TargetMachine& tm);
// Whether `m` has more than `limit` instructions (counting stops past it): emit_assembly
// then skips the straight-line strength reduction (kStrengthReductionLimit, Compile.h).
bool skips_strength_reduction(const llvm::Module& m, int64_t limit = kStrengthReductionLimit);
absl::StatusOr<std::string> emit_assembly(llvm::Module& m, llvm::TargetMachine& tm,
                                          int64_t strength_reduction_limit = kStrengthReductionLimit);
std::string module_text(const llvm::Module& m);

}  // namespace fixbits::codegen
