// IndexedRoot.h — the indexed root rule: a store of C[i, j] whose value reads A[i, ...] and
// B[..., j] is named by those relations, not by which thread computes which (i, j).
// Contract: `indexed_root_hash(g, op, value, address, budget)` splits the store address
// into index groups — the terms of one stride: a parameter stride s ("param6": the terms
// c*x*s, x a thread/block coordinate, and c*s), or the unit stride (coordinates and the
// constant) — and divides each group by the stored element's bytes, giving the store's
// indices (row = 256*ctaid.y + 4*tid.x.b0 + ... + 2, col = 3*ctaid.x + 1). Only groups
// with a coordinate are indices; they must be pairwise different. Every global load in
// the value whose address has a group (any stride) whose index, divided by the load's
// element bytes, equals a store index g exactly has that group written as the symbol
// "sym:@<g>" times its stride; the store address too. When at least one load matched,
// returns the hash of (store op, rewritten value, rewritten address). Only for thread-local
// values: a lane exchange, relocation, collapsed tree or a node varying with the thread in
// an unknown way (Node::dep has kDepUnknown: %warpid, an MMA fragment) declines the rule.
// Guarantee: two roots with one hash store, at every element they write, the same
// function of the same elements of each buffer read at the store's own indices (an exact
// renaming of equal values); so a thread storing 12 outputs and one storing 1 are one
// family. As for the elementwise rule (Elementwise.h), which elements a kernel covers is
// a launch fact and not compared. Work is bounded by `*budget` (nodes rebuilt).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "verify/Graph.h"

namespace fixbits::verify {

std::optional<uint64_t> indexed_root_hash(Graph& g, const std::string& op, NodeId value, NodeId address,
                                          size_t* budget);

}  // namespace fixbits::verify
