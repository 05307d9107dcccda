// Elementwise.h — the elementwise root rule: a store named by how its value's loads sit
// relative to the store's own address, not by which thread runs it.
// Contract: `elementwise_root_hash(g, op, value, address)` returns a hash for the root
// when (1) the store address is affine with a non-empty *position* part P (its thread-
// index bits and loop holes: the terms a layout changes), (2) every global load reached
// from the value through thread-local nodes (arith that is not a collapsed reduction,
// guards, opaque ops, conversions) either has exactly the position part P — it reads
// "the store's element, shifted by a constant" — or varies with no thread bit and no hole,
// (3) every integer reached (a bounds test's operand) that varies is the store's element
// index (P divided by the stored element's bytes) plus base terms and a constant, written
// relative to it like a load, and every other node reached (exchanges, relocations, folds,
// collapsed trees) varies with no thread bit and no hole (Node::dep == 0), and (4) at least one load is of
// the first kind. The hash covers the store opcode, the store address without P and
// without its constant (buffer and block terms), and the value with each relative load
// written as (buffer, block terms, constant minus the store's constant).
// Guarantee: two roots with one hash store, at every address base + block(b) + q they
// write, the same function of the elements at base_i + block_i(b) + q + d_i and of
// thread-independent values; so the 32 stores of one thread and the 16 stores of another
// layout are one family. As everywhere in verify/, which addresses a kernel covers (its
// bounds predicates) is a launch fact and not compared. Returns nullopt otherwise, and
// the root keeps its usual hash. Work is bounded: kMaxElementwiseVisits nodes per root and
// `*budget` (decremented; kMaxElementwiseTotal in Graph.h) over all roots of one walk, so a hostile input with a million
// stores cannot make signing quadratic; past either bound the usual hash is kept.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "verify/Graph.h"

namespace fixbits::verify {

inline constexpr size_t kMaxElementwiseVisits = 1u << 14;

std::optional<uint64_t> elementwise_root_hash(const Graph& g, const std::string& op, NodeId value,
                                              NodeId address, size_t* budget);

}  // namespace fixbits::verify
