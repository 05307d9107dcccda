// PtxParser.h — reads PTX text into an Asm Module.
// Contract: accepts any PTX that ptxas accepts as far as statement structure goes
// (directives, .entry/.func with params, declarations, guarded instructions, labels,
// nested scope blocks). An instruction whose opcode it does not know is kept as text;
// it never fails on an opcode. Structurally malformed text (unbalanced braces or
// brackets, a function without a name, input over the size caps) returns a Status
// whose message names the line. Never aborts, every loop is bounded by the input length.
#pragma once

#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "verify/Asm.h"

namespace fixbits::verify {

absl::StatusOr<Module> parse_ptx(absl::string_view text);

}  // namespace fixbits::verify
