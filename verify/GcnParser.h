// GcnParser.h — reads AMDGCN assembly (as LLVM 22 emits for gfx942) into an Asm Module.
// Contract: a function starts at a label declared `.type name,@function` and ends at the
// next .Lfunc_end label; `.amdhsa_kernel` blocks give the kernarg SGPR pair and the SGPR
// holding workgroup id x; the metadata's `.max_flat_workgroup_size` gives the launch bound.
// Instructions are "opcode op0, op1, ... modifier modifier" (DPP row_shr:N, offset:N, ...).
// Unknown opcodes are kept as text. Malformed text (over the caps, a kernel descriptor for
// no function, an unterminated .amdhsa_kernel) returns a Status naming the line.
#pragma once

#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "verify/Asm.h"

namespace fixbits::verify {

absl::StatusOr<Module> parse_gcn(absl::string_view text);

}  // namespace fixbits::verify
