// ProgramSignature: the static checker's signature of a tile program compiled for
// NVIDIA sm_90a, as the runtime's verify-before-load hook computes it, for the tests
// of which generated kernels the runtime loads and how they sign.
// Invariant: an error from codegen or from the checker (a kernel it cannot read, which
// the runtime would refuse to load) comes back as that stage's Status, unchanged.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "codegen/Compile.h"
#include "dsl/tile/Program.h"
#include "runtime/TreeSignatureHook.h"

namespace fixbits::testing {

inline absl::StatusOr<std::string> sm90a_signature(const tile::Program& p) {
  auto k = codegen::compile(p, codegen::Target::kNvptxSm90a);
  if (!k.ok()) return k.status();
  return runtime::TreeSignatureHook().signature(k->text, "sm_90a");
}

}  // namespace fixbits::testing
