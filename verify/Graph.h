// Graph.h — the dependence-tree nodes the walk builds (§3.1, §6.1) and their canonical hash.
// Contract: nodes are immutable and appended to one arena; a node's children are older
// nodes, so every per-node fact is computed once, at creation, bottom-up:
//  - `hash`: the canonical hash. Commutative children are sorted; a balanced tree of one
//    combine collapses to (combine+rounding, blanked leaf, height, leaf-nearest stride)
//    (+ the constant offset where the reduced range starts)
//    when every level pairs equal heights and each level whose logical stride can be read
//    from the leaf addresses doubles the one below (§6.1 "balance is the guard").
//  - `blank`: the hash with every address reduced to its buffer (params, shared bases).
//  - `coord_blank`: the hash with only thread/block coordinates removed from addresses; a
//    fold hashes its body this way, so which thread walks which row does not split it.
//  - `data`: whether the value depends on a load (data predicates are kept, others dropped).
//  - `dep`: which thread-index bits the value may vary with (kDep* below), a superset: a
//    butterfly exchange over lane bit j removes bit j (op(x(t), x(t^2^j)) is symmetric in
//    it), a shared-memory read depends on what its address depends on (the address names
//    the writer), a loop hole is kDepHole and a closed fold drops it when the loop's seeds
//    and updates vary with no thread bit. Used by the elementwise root rule (Elementwise.h).
// Anything not modeled is an Opaque node hashed on its own text: unsure means split.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "verify/Affine.h"

namespace fixbits::verify {

using NodeId = int32_t;

// Bits of Node::dep: tid.x.b<i> -> i (i < 16), tid.y.b<i> -> 16 + i, tid.z.b<i> -> 32 + i,
// laneid.b<i> -> 48 + i (i < 5); any other thread-varying input (a whole %tid, %warpid,
// an uninitialized register, a loop-exit value) -> kDepUnknown; a loop hole -> kDepHole.
inline constexpr uint64_t kDepUnknown = uint64_t{1} << 62;
inline constexpr uint64_t kDepHole = uint64_t{1} << 63;
// Node visits the elementwise root rule (Elementwise.h) may spend over all roots of a graph.
inline constexpr size_t kMaxElementwiseTotal = size_t{1} << 24;
// The dep bit of one integer symbol (0 when it is not thread-varying).
uint64_t dep_of_symbol(const std::string& sym);

enum class Kind : uint8_t {
  kConst,     // a literal; op = its text
  kInt,       // an affine integer value; aff
  kOpaque,    // unmodeled: op = instruction/expression text, kids = its register inputs
  kLoad,      // a data node: op = "<space>.<type>", kids[0] = address (kInt or kOpaque)
  kArith,     // a floating-point operation: op = opcode with rounding and type
  kShfl,      // lane exchange: op = mode ("bfly", "row_shr", ...), imm = offset, kids[0]
  kXchg,      // within-warp exchange: combine op(x, shfl(x, imm)); kids[0] = x
  kRelocate,  // a value read back from shared memory after a barrier; kids[0] = value;
              // op "from", imm = the writer's leaf origin shift in bytes, when known
  kFold,      // loop accumulation: kids[0] = one iteration's body over its hole, op = key,
              // kids[1] = the seed unless it is a literal (the initial constant,
              // whose bits go into op as " seed:<hex>"); a preceding loop's fold or an
              // outer loop's hole stays
  kGuard,     // value guarded by a data predicate: kids = {pred, value, else}
  kMma,       // one accumulator element of a matrix instruction: op, imm = element index,
              // kids = {A..., B..., C_imm}
  kRoot,      // a global store or reduction: op = store opcode, kids = {value, address};
              // the address enters the hash without its thread/block coordinates
};

struct Balance {
  bool valid = false;        // this node is a balanced tree of `op` (or a leaf, height 0)
  bool is_leaf = true;
  std::string op;            // the combine
  uint64_t leaf = 0;         // blanked leaf hash
  int height = 0;
  std::optional<int64_t> nearest;   // logical stride of the level nearest the leaves
  std::optional<Affine> rep;        // representative leaf address (bytes), if known
  std::optional<int64_t> origin;    // constant part of the lowest leaf address: where the
                                    // reduced range starts, kept through relocations
  int64_t elem_bytes = 0;
};

struct Node {
  Kind kind = Kind::kOpaque;
  std::string op;
  int64_t imm = 0;
  std::vector<NodeId> kids;
  int commuting = 0;          // the first `commuting` kids commute (hashed order-free)
  Affine aff;                 // kInt only
  uint64_t hash = 0;
  uint64_t blank = 0;
  uint64_t coord_blank = 0;   // hash with only thread/block coordinate terms removed
  bool data = false;
  bool has_hole = false;      // depends on a loop hole (kInt symbol "~hole...")
  bool mentions_hole = false; // some descendant names a hole, closed folds included
  uint64_t dep = 0;           // thread-index bits the value may vary with (kDep*)
  // Thread bits of the pad predicates (Graph::pad) an add read through at or below this
  // node, each assumed to hold at this node's own lane (kDep* bits; 0: none).
  uint64_t pad_dep = 0;
  Balance bal;
  int line = 0;               // source line that made it, for explanations
};

// The graph's nodes in fixed chunks: appending never moves a node (a reference from at()
// stays valid while the graph lives) and never reallocates one large array, whose repeated
// growth and release cost more page faults than the walk itself (docs/verify.md,
// "Interned symbols, flat terms, chunked nodes").
class NodeArena {
 public:
  static constexpr size_t kChunk = 128;
  const Node& operator[](size_t i) const { return chunks_[i / kChunk][i % kChunk]; }
  Node& operator[](size_t i) { return chunks_[i / kChunk][i % kChunk]; }
  size_t size() const { return size_; }
  void push_back(Node&& n) {
    if (size_ % kChunk == 0) chunks_.push_back(std::make_unique<Node[]>(kChunk));
    chunks_.back()[size_ % kChunk] = std::move(n);
    ++size_;
  }

 private:
  std::vector<std::unique_ptr<Node[]>> chunks_;
  size_t size_ = 0;
};

class Graph {
 public:
  NodeId constant(const std::string& text);
  NodeId integer(const Affine& a);
  NodeId opaque(const std::string& op, std::vector<NodeId> kids, int line = 0);
  NodeId load(const std::string& space_type, NodeId addr, int line = 0);
  // A floating-point op; sorts children of commutative ops (add/mul/max/min, fma's
  // product pair) and recognises combine(x, shfl(x, k)) as an exchange node.
  NodeId arith(const std::string& op, std::vector<NodeId> kids, int line = 0);
  NodeId shfl(const std::string& mode, int64_t offset, NodeId x, int line = 0);
  // `origin_shift`, when known: how many bytes after the symbolic thread's lowest leaf
  // the writing thread's lowest leaf lies (moves the balanced summary's origin).
  // `address` (-1: unknown) is the shared-memory address read: the writer, and so the
  // value, varies with what the address varies with.
  NodeId relocate(NodeId value, int line = 0, std::optional<int64_t> origin_shift = std::nullopt,
                  NodeId address = -1);
  // `seed` (optional, -1 for none) is kept unless it is a literal: an outer loop's hole
  // or a main loop's fold seeding its remainder loop stays,
  // so a nest of folds stays a nest instead of losing the outer accumulation.
  // `loop_dep`: the thread bits the loop's seeds and carried updates vary with.
  NodeId fold(NodeId body, const std::string& key, NodeId seed = -1, int line = 0,
              uint64_t loop_dep = kDepUnknown);
  NodeId guard(NodeId pred, NodeId value, NodeId other, int line = 0);
  // pred ? value : -0.0 on a predicate that reads no load (a `selp`/`v_cndmask` to the
  // identity of a sum): a guard node (op "pad") that an add (not .rm, where +0 + -0 is -0)
  // reads as `value`, directly or under one butterfly exchange whose lane bits the predicate
  // does not vary with (so the lane it brings has the reading lane's predicate); stored, fed
  // to any other op or exchanged across a bit it varies with, it stays a guard and so never
  // merges with `value`. The add records the predicate's bits in `pad_dep`; a later
  // exchange across one of them sets pad_lanes_unsure (docs/verify.md, "Padding").
  NodeId pad(NodeId pred, NodeId value, int line = 0);
  NodeId mma(const std::string& op, int64_t index, std::vector<NodeId> kids, int line = 0);
  // A root's hash: the elementwise rule (Elementwise.h), else the indexed rule
  // (IndexedRoot.h), else (op, value, address without coordinates).
  NodeId root(const std::string& op, NodeId value, NodeId address, int line = 0);

  // The same tree with hole symbols renamed by `names` (symbols not in it are kept); the
  // map must be injective so distinct holes stay distinct. Nodes that mention no hole are
  // shared, not copied. Returns nullopt when more than `budget` nodes would be rebuilt.
  std::optional<NodeId> rename_holes(NodeId id, const std::map<std::string, std::string>& names,
                                     size_t budget);

  // The same tree with each hole symbol in `to` replaced by its affine form (a term c * h
  // becomes c * to[h]); rename_holes is the case of single symbols. Exact: an integer node
  // is rebuilt from the substituted form, everything above it from its rebuilt kids; a node
  // under which nothing names a substituted hole is returned as it is.
  // `memo` (optional) carries rebuilt nodes across calls with the same `to` (one loop's
  // registers share their body), so each node is rebuilt once per loop, not per register.
  std::optional<NodeId> substitute_holes(NodeId id, const std::map<std::string, Affine>& to, size_t budget,
                                         absl::flat_hash_map<NodeId, NodeId>* memo = nullptr);
  // The same tree with every global load's address `a` (a kInt) replaced by f(a, load op)
  // where f returns a form, and every integer operand `x` of a `setp` by f(x, "index.b8");
  // nullopt past `*budget` nodes visited (decremented).
  std::optional<NodeId> rewrite_load_addresses(
      NodeId id, const std::function<std::optional<Affine>(const Affine&, const std::string&)>& f, size_t* budget);
  // Node x with its kid old_kid replaced by new_kid (every occurrence), rebuilt.
  NodeId with_kid(NodeId x, NodeId old_kid, NodeId new_kid);

  // Whether lane bit j of a warp is tid.x bit j (the block's x extent is a known multiple of
  // 32); only then does a butterfly exchange over lane bit j drop tid.x.b<j> from `dep`.
  void set_lanes_are_tid_x(bool v) { lanes_are_tid_x_ = v; }
  // Whether a lane exchange, relocation, MMA or unmodeled op moved a value whose padding was
  // read through to a lane whose pad predicate may differ (Graph::pad): the walk is then not
  // trusted (text fallback).
  bool pad_lanes_unsure() const { return pad_lanes_unsure_; }

  const Node& at(NodeId id) const { return nodes_[static_cast<size_t>(id)]; }
  size_t size() const { return nodes_.size(); }
  // Readable one-line description of a node and its children's hashes.
  std::string describe(NodeId id, int depth = 2) const;

 private:
  NodeId finish(Node n);
  NodeArena nodes_;
  size_t elementwise_budget_ = kMaxElementwiseTotal;  // left for the elementwise rule
  bool lanes_are_tid_x_ = false;
  bool pad_lanes_unsure_ = false;
  // Whether a predicate varying with the thread bits `d` may differ between a lane and the
  // lane an exchange of `mode`/`imm` brings to it.
  bool lane_varies(uint64_t d, const std::string& mode, int64_t imm) const;
  // The thread bits (kDep* positions) whose flip alone changes predicate p for some
  // assignment of the others: decided by enumeration when p is integer comparisons
  // (lt/eq/ne) of thread-index bits and literals only, through not/and/or (at most 14
  // bits); nullopt (not decided) when it reads anything else (a parameter, a loop hole,
  // a product with a parameter, an unknown thread input) or has another form.
  std::optional<uint64_t> pred_sensitivity(NodeId p);
  absl::flat_hash_map<uint64_t, std::optional<uint64_t>> sensitivity_;  // predicate hash -> its bits
};

// True for the opcodes whose two operands commute and that reductions combine with.
bool is_combine(const std::string& op);
std::string hex64(uint64_t h);
// The bits of a literal (a kConst "0f..."/"0d..." or a constant kInt) as hex, so "0f00000000"
// and 0 agree and "0f80000000" (-0.0) differs; any other literal by its text.
std::string literal_bits(const Node& n);

}  // namespace fixbits::verify
