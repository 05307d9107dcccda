// PtxWalk.h — the §6.1 transfer functions for PTX instructions.
// Contract: walks one parsed PTX function over a symbolic thread into `g` and returns its
// roots (one per global store or global reduction). Integer registers become affine forms
// over tid bits (under .reqntid/.maxntid, else the 1024-thread block limit), ctaid, ntid,
// parameters and shared bases, or opaque tokens; float operations become arithmetic nodes
// keyed by their full opcode (rounding, ftz, sat, type); unknown opcodes become opaque
// nodes over their inputs. Never fails: every instruction has a transfer function.
#pragma once

#include <vector>

#include "verify/Asm.h"
#include "verify/Graph.h"
#include "verify/Walk.h"

namespace fixbits::verify {

// `complete` (optional) is set false when a work bound cut the walk short.
std::vector<Root> walk_ptx(const Module& m, const Function& f, Graph& g, bool* complete = nullptr);

}  // namespace fixbits::verify
