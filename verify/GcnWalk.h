// GcnWalk.h — the §6.1 transfer functions for AMDGCN (gfx942) instructions.
// Contract: walks one parsed kernel over a symbolic work-item into `g` and returns its roots
// (global stores and atomics). v0 holds the packed work-item id (x in bits 0..9 under the
// launch bound), the workgroup-id-x SGPR is `ctaid.x`, kernarg loads give `param@<offset>`.
// A 64-bit register pair reads as its low half's affine form when the high half is the
// carry/sign of the same value. DPP row_shr:N on a mov or an operand is a lane exchange;
// ds_write/s_barrier/ds_read is a cross-wave exchange; v_mfma is an MMA per accumulator
// element. Scalar branches (`s_cbranch_scc0/1`, `s_branch`) are control flow for the
// walker's block conditions, `s_cmp` in PtxWalk's `setp` form; execz/vccz branches only
// shape loops (the exec mask models the lanes they skip). Unknown opcodes become opaque
// nodes; never fails.
#pragma once

#include <vector>

#include "verify/Asm.h"
#include "verify/Graph.h"
#include "verify/Walk.h"

namespace fixbits::verify {

// `complete` (optional) is set false when a work bound cut the walk short.
std::vector<Root> walk_gcn(const Module& m, const Function& f, Graph& g, bool* complete = nullptr);

}  // namespace fixbits::verify
