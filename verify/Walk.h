// Walk.h — the symbolic-thread walk shared by the PTX and AMDGCN readers (§6.1, §6.2).
// Contract: `Walker::run` visits one function's statements once, in program order, and
// calls the ISA's `step` for each instruction, which reads operand registers through
// `get` and writes destinations through `set`. The walker itself owns what both ISAs
// share: loops (a back edge to an earlier label; carried registers become holes at the
// header and a fold over one iteration's body at the back edge, keyed by the loop's
// increments, the key dropped for an exact MMA chain; a literal seed's bits, a non-literal
// seed and the updates of the other carried float values the body reads stay in the fold;
// linear registers are written as seed + increment * n, an unrolled chain of one step is
// that step; the key carries how many steps the loop runs, read from its exit test, or the
// exit tests themselves; a remainder loop or a peeled step that continues a fold where
// it provably ended is that fold over the sum of their steps, and a launch-uniform choice
// between one fold's counts that evaluates to one count is that fold, and so is a launch-
// uniform guard around a fold where its steps agree at every size), forward branches on data
// predicates (destinations written under them become guard nodes), shared-memory
// store/barrier/load matching (a cross-warp exchange becomes a relocate node), and the
// roots at global stores. Before walking, a run of blocks that control can neither fall
// into nor out of and whose outside predecessors all lie below it (a loop latch the backend
// laid out above the loop header) is moved below its last predecessor, and so is a single
// such block that falls through into the next (a rotated loop's latch), ending in an
// explicit jump: the control-flow graph is unchanged, only the order the walk meets the blocks in. Walking is linear in the statements; loops
// are not iterated. Each block carries its condition (the "or" of its forward in-edges'
// literals): a register written under a thread-fixed literal (no load, no loop hole:
// coordinates, parameters, literals) is guard(condition, new, old) in one canonical form
// (guarded), which reads under the same condition peel; a loop under such a condition
// guards what it writes when it closes; a literal that reads a loop hole (no load) is a
// guard key inside its innermost loop (its exit tests and back edges add nothing, and it
// leaves every condition when the loop closes), and `a < N ? T : c` over the row element
// `a` is T over bounded loads (padding; Walk.cpp, "bounded loads"); a store
// whose block is guarded by a launch equality and that writes another root's value at an
// address equal under it is dropped as that root's twin (LLVM's vectorized epilogue).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "verify/Asm.h"
#include "verify/Graph.h"

namespace fixbits::verify {

struct Root {
  NodeId node;   // kRoot node
  int line = 0;
};

class Walker {
 public:
  Walker(Graph& g, const Function& f) : g_(g), f_(f) {}
  virtual ~Walker() = default;

  void run();
  const std::vector<Root>& roots() const { return roots_; }
  // True when a work bound cut the walk short (hostile or enormous input); the caller
  // must not trust the roots and falls back to hashing the text.
  bool incomplete() const { return incomplete_; }
  Graph& graph() { return g_; }

 protected:
  // ISA hooks.
  virtual void step(const Instr& ins) = 0;
  // Registers an instruction writes and reads (for loop-carried detection).
  virtual void defs_uses(const Instr& ins, std::vector<std::string>* defs,
                         std::vector<std::string>* uses) const = 0;
  // Branch target label of a branch instruction, or nullopt; `uncond` when always taken.
  virtual std::optional<std::string> branch_target(const Instr& ins, bool* uncond) const = 0;
  // Predicate node guarding a conditional branch (nullopt when it is not a register test).
  virtual std::optional<NodeId> branch_predicate(const Instr& ins) = 0;
  // Whether the branch is taken when its predicate is false (PTX `@!%p`, GCN `scc0`).
  virtual bool branch_negated(const Instr& ins) const { return ins.guard_negated; }
  // Whether every thread of a wave takes the branch alike (PTX: a predicate per thread,
  // always tracked; GCN: the scalar `scc` branches and `s_branch`, not execz/vccz, which
  // skip a block only when no lane would run it).
  virtual bool uniform_branch(const Instr& /*ins*/) const { return true; }

  // Register file.
  NodeId get(const std::string& reg);
  void set(const std::string& reg, NodeId v);
  bool has(const std::string& reg) const { return regs_.contains(reg); }

  // Shared-memory traffic and barriers.
  void smem_store(NodeId addr, NodeId value);
  NodeId smem_load(NodeId addr, const std::string& type, int line);
  void barrier() { ++epoch_; }
  // True when some shared store so far used exactly this base (shared/param terms).
  bool smem_has_base(const Affine& base) const;
  // Bytes from the symbolic thread's lowest leaf to the lowest leaf of the thread whose
  // store (at store_addr, of value) a load at load_addr reads; nullopt unless unique.
  std::optional<int64_t> writer_shift(NodeId store_addr, NodeId load_addr, NodeId value) const;
  // Thread-private memory (.local / scratch): an exact address match returns the value.
  void local_store(NodeId addr, NodeId value);
  NodeId local_load(NodeId addr, const std::string& type, int line);

  void add_root(const std::string& op, NodeId value, NodeId address, int line);
  // `x mod 2^k` of a launch-uniform x as one symbol, the same for every mask that reads
  // those bits: `K & 3` is it, `K & -4` is K minus it (trip counts, Walk.cpp).
  NodeId low_bits(const Affine& x, int k);
  // The data predicate guarding the instruction now being stepped, if any.
  std::optional<NodeId> current_guard() const;
  void set_instr_guard(std::optional<NodeId> p) { instr_guard_ = p; }

  // Thread-fixed control (Walk.cpp, "thread conditions"). A predicate that depends on no
  // load and no loop hole, only on thread/block coordinates, parameters and literals, has
  // one value per thread for the whole launch. Writes under such a predicate (a guarded
  // instruction, or a block reached only along such branch edges) are guard nodes keyed by
  // the condition, so after a join a thread that skipped the write keeps the old value.
  bool thread_fixed(NodeId p) const;
  // The key of the one-literal condition `p` (p itself), registered so reads peel it.
  NodeId thread_condition_key(NodeId p);
  // key ? v : old as one canonical guard (Walk.cpp, "guarded"): exact simplifications only.
  NodeId guarded(NodeId key, NodeId v, NodeId old);
  NodeId make_guard(NodeId key, NodeId v, NodeId old);
  // The square rule (Walk.cpp, "bounded loads"): a float product of a -0.0-padded bounded
  // load (or its widening) with itself, as the product of its +0.0 twin; -1 otherwise.
  NodeId square(const std::string& op, const std::vector<NodeId>& kids);
  // `p ? v : -0.0` on a loop's row bound p as bounded loads (Walk.cpp); nullopt when the
  // bounded-load rule does not read it (the pad rule then).
  std::optional<NodeId> padded_element(NodeId p, NodeId v, NodeId neg_zero);
  // Whether this ISA's branches take part (PTX: yes; AMDGCN keeps its exec-mask tracking).
  virtual bool tracks_thread_branches() const { return true; }

  Graph& g_;
  const Function& f_;
  int line_ = 0;

 private:
  struct Store {
    NodeId addr;
    NodeId value;  // what a read of the same address gets (local: guarded under a condition)
    int epoch;
    NodeId raw;    // the stored value, which another thread's read relocates
  };
  struct Loop {
    size_t header = 0, back = 0;
    int depth = 0;
    std::vector<std::string> carried;
  };
  // Program order with latch blocks laid out early moved after their last predecessor
  // (see lay_out in Walk.cpp); the walk reads *body_, never f_.body directly.
  std::vector<Instr> lay_out() const;
  std::vector<Instr> lay_out_once(const std::vector<Instr>& body, bool* changed) const;
  std::vector<Instr> laid_out_;
  const std::vector<Instr>* body_ = nullptr;
  absl::flat_hash_map<std::string, NodeId> seeds_;  // "<header>:<reg>" -> value at loop entry
  absl::flat_hash_map<std::string, std::string> hole_reg_;  // register -> its latest hole symbol
  void open_loop(const Loop& l);
  void close_loop(const Loop& l);
  // What a fold keeps of the loop's other carried values (Walk.cpp, "recurrence").
  struct Recurrences {
    absl::flat_hash_map<std::string, size_t> index_of_hole;  // hole symbol -> carried index
    std::vector<std::set<size_t>> reads;                     // carried values each update reads
    std::vector<uint64_t> hash;                              // each update (and seed), canonical
  };
  Recurrences recurrences(const Loop& l, const std::vector<NodeId>& update,
                          const std::map<std::string, std::string>& role);
  std::set<size_t> reads_of(NodeId x, const Recurrences& rec) const;
  // Linear carried registers of a loop (Walk.cpp, "linear_registers"), by role name.
  struct LoopLinear {
    std::map<std::string, Affine> inc;                           // every linear register
    std::map<std::string, int64_t> induction;                    // constant increments
    std::map<std::string, std::pair<Affine, Affine>> pointer;    // (seed, increment)
  };
  LoopLinear linear_registers(const Loop& l, const std::map<std::string, std::string>& role);
  // Where a register's writes lie against each exit of its loop (TripCount.cpp): 'e' the
  // back edge (every write before it), 'b' all before, 'a' all after, 'm' both.
  static std::string exit_sides(const Loop& l, size_t last_write, const std::vector<size_t>& exit_at,
                                const std::vector<size_t>& writes);
  static std::string at_part(const std::string& sides);  // "" when every side is 'e'
  NodeId linear_fold(const Loop& l, NodeId body, const std::string& rec, NodeId seed, uint64_t loop_dep,
                     const LoopLinear& lin, int strips, const std::vector<NodeId>& exits, const std::string& sides);
  // The steps a fold runs at every launch size: count + max(0, lo − floor) (TripCount.cpp).
  // `plain` when that is `count` at every size (decided by evaluation), so a continuation
  // may read the count alone.
  struct Trip {
    Affine count, floor;
    int lo = 0;
    bool plain = false;
  };
  Trip make_trip(const Affine& count, const Affine& floor, int lo) const;
  std::string trip_part(const char* label, const Trip& t);
  // A fold whose trip is read: what rebuilding it with another trip needs.
  struct FoldTrip {
    Trip trip;
    NodeId canon = -1;
    std::string key;  // without the trip
    const char* label = " steps:";
    uint64_t loop_dep = 0;
  };
  absl::flat_hash_map<NodeId, FoldTrip> trips_;
  // `key ? v : old` where one side is a fold (chain) run from the other: the fold where
  // the key's failing sizes are those it runs no step at (zero-trip guards).
  std::optional<NodeId> zero_trip(NodeId key, NodeId v, NodeId old);
  std::optional<NodeId> run_or_skip(NodeId key, bool runs_when, const std::vector<NodeId>& chain, NodeId seed);
  // A fold a remainder loop may continue: its one step over the raw pointer holes, the
  // pointers' (seed, increment per step), its key (without its exits) and depth, and what
  // a continuation rebuilds the fold from: the canonical step, the seed, the loop's thread
  // bits and the steps it covers.
  struct Continuable {
    NodeId step;
    std::vector<std::pair<std::string, std::pair<Affine, Affine>>> pointers;
    std::string key;
    int depth = 0;
    uint64_t canon = 0;
    NodeId canon_node = -1, seed = -1;
    uint64_t loop_dep = 0;
    std::optional<Trip> trip;  // the steps it runs (TripCount.cpp), when read
    bool exact = false;        // and whether its passes end exactly there
    std::shared_ptr<const std::map<uint64_t, NodeId>> cond;  // the condition it ran under
  };
  std::shared_ptr<const std::map<uint64_t, NodeId>> closing_cond_;  // per loop, made once
  // The N for which a loop of canonical body `canon` runs main's step from N steps on.
  std::optional<Affine> continues(const Continuable& main, NodeId canon,
                                  const std::vector<std::pair<std::string, std::pair<Affine, Affine>>>& pointers,
                                  int depth);
  struct LinearExit {
    Affine alpha;
    int64_t beta = 0;
    bool strict = false;  // goes on while α + β·~n < 0; else while it is != 0
  };
  std::optional<LinearExit> linear_exit(NodeId cont, int depth) const;
  std::optional<Affine> count_of(NodeId cont, int depth) const;
  // The trip of an exact MMA chain in its counter's span (nullopt: keyed by its exits).
  std::optional<Trip> mma_span(const Loop& l, const LoopLinear& lin, const std::vector<NodeId>& exits,
                               const std::string& sides);
  std::vector<NodeId> exits_at_last_step(const Loop& l, const LoopLinear& lin, const std::vector<NodeId>& exits, int m);
  bool multiple(const Affine& a, int64_t m) const;
  // The fold of `main`'s step run `count` steps; it stays continuable.
  NodeId covering_fold(const Continuable& main, const Trip& trip, int line);
  // Whether a fold of trip t runs exactly n steps at every size.
  static bool runs_exactly(const Trip& t, const Affine& n) { return t.plain && t.count == n; }
  std::string exit_part(const std::vector<NodeId>& exits, bool exact, int m) const;
  std::string int_part(const char* label, const Affine& a);  // label + the integer's hash
  // Launch-uniform choice symbols (Walker::guarded): symbol -> the guard it names.
  absl::flat_hash_map<std::string, NodeId> choices_;
  Affine resolve_choices(const Affine& a, const std::map<uint64_t, NodeId>& c);
  std::optional<NodeId> fold_by_cases(NodeId key, NodeId x, NodeId y);
  // Per loop (by its back edge's index): the condition under which it goes on, one per
  // exit (its back edge, a branch out of it, a return inside it), in program order.
  absl::flat_hash_map<size_t, std::vector<std::pair<NodeId, size_t>>> exits_;  // (test, index)
  // Low-bits symbols (`x mod 2^k` of a launch-uniform x): symbol -> (x, k).
  absl::flat_hash_map<std::string, std::pair<Affine, int>> low_bits_;
  absl::flat_hash_map<NodeId, Continuable> continuable_;
  NodeId peeled(NodeId v);
  std::map<int, absl::flat_hash_map<NodeId, NodeId>> subst_memo_;  // per m, reset per loop
  std::map<int, absl::flat_hash_map<NodeId, NodeId>> exit_memo_;   // the same for exit tests
  std::string recurrence(const Loop& l, const std::string& r, NodeId body, const Recurrences& rec) const;

  // A condition: the conjunction of its literals (a predicate node or its negation, or an
  // "or" of two conjunctions), by hash.
  using Cond = std::map<uint64_t, NodeId>;
  NodeId negate(NodeId p);
  Cond thread_part(const Cond& c);  // the literals that are thread-fixed (guard keys)
  void equalities(NodeId lit, bool positive, std::vector<Affine>* out, int depth) const;
  void drop_guarded_twins();
  // Per literal hash: 0 not a guard key (data, or neither kind below), 1 thread-fixed
  // (one value per thread for the launch), 2 fixed within one loop iteration (reads a loop
  // hole; Walk.cpp, "hole literals").
  absl::flat_hash_map<uint64_t, int> thread_lit_;
  int literal_kind(uint64_t h, NodeId id);
  bool iteration_fixed(NodeId p) const;  // no load; coordinates, parameters and loop holes
  Cond launch_part(const Cond& c);       // thread_part without the hole literals
  // Drops from every pending condition the hole literals that read holes of depth >= depth
  // (a loop just closed: its iteration's values no longer exist).
  void drop_hole_literals(int depth);
  std::vector<std::pair<size_t, size_t>> open_loops_;  // (header, back) of the loops open now
  // Bounded loads (Walk.cpp, "bounded loads"): node hash -> (bound literal, plain load, pad,
  // and for a load padded with -0.0 the same load padded with +0.0, the square rule's twin).
  struct Bounded {
    NodeId pred, load, pad, twin;
  };
  absl::flat_hash_map<uint64_t, Bounded> bounded_;
  std::optional<NodeId> bounded_load(NodeId pred, NodeId v, NodeId other);
  NodeId assume_tree(NodeId v, const std::vector<std::pair<NodeId, bool>>& facts,
                     absl::flat_hash_map<NodeId, NodeId>* memo, size_t* budget);
  std::vector<std::vector<Affine>> root_facts_;  // per root: equalities guarding its block
  Cond join(const Cond& a, const Cond& b);  // a or b, exactly
  std::optional<Cond> join_exact(const Cond& a, const Cond& b);  // a or b when no "or" is needed
  NodeId key_of(const Cond& c);             // the guard key of a non-empty condition
  NodeId peel(NodeId v);              // v with guards the current condition decides
  bool launch_uniform(NodeId p) const;              // parameters and literals only
  void facts_of(NodeId p, bool positive, std::vector<std::pair<NodeId, bool>>* out, int depth) const;
  int decide(NodeId q, const std::vector<std::pair<NodeId, bool>>& facts) const;
  NodeId assume(NodeId v, const std::vector<std::pair<NodeId, bool>>& facts, int depth);
  bool same_under(NodeId x, NodeId y, const std::vector<Affine>& eqs, int depth, size_t* budget) const;
  // The folds of f, a fold (chain) started from seed, outermost first.
  std::optional<std::vector<NodeId>> seed_chain(NodeId f, NodeId seed) const;
  // A loop whose header only the threads in `base` reach: its registers' values before it.
  struct CondLoop {
    size_t back = 0;
    Cond base;
    std::vector<std::pair<std::string, std::optional<NodeId>>> before;
  };
  std::vector<CondLoop> cond_loops_;
  Cond cond_;                               // condition of the instruction being stepped
  Cond block_cond_;                         // condition of the current block
  bool falls_through_ = true;
  absl::flat_hash_map<std::string, std::vector<Cond>> incoming_;  // forward edges into a label
  absl::flat_hash_map<std::string, Cond> label_cond_;
  // guard key hash -> (literal hash, its negation's hash) of each literal
  absl::flat_hash_map<uint64_t, std::vector<std::pair<uint64_t, uint64_t>>> cond_keys_;

  absl::flat_hash_map<std::string, NodeId> regs_;
  // Registers whose only writes were under a thread condition with no earlier write: that
  // condition (Walker::get splits a read outside it).
  absl::flat_hash_map<std::string, Cond> undef_under_;
  std::vector<Store> smem_, local_;
  bool stored_shared_ = false, unmatched_shared_load_ = false;
  bool shared_leaf_reaches_root() const;  // see the end of run()
  int epoch_ = 0;
  std::vector<Root> roots_;
  std::vector<std::pair<std::string, NodeId>> data_regions_;  // (end label, predicate)
  std::optional<NodeId> instr_guard_;
  bool incomplete_ = false;
};

// Work bounds of one walk.
inline constexpr size_t kMaxLoops = 4096;
inline constexpr size_t kMaxLoopScan = 16u << 20;   // statements scanned for carried registers
inline constexpr size_t kMaxMemoryHistory = 4096;   // shared/local stores searched per load
inline constexpr size_t kMaxNodes = 2u << 20;  // a few hundred MiB at most
inline constexpr int kMaxLayoutRounds = 8;     // passes of the block layout fix-up
inline constexpr size_t kMaxRename = 1u << 16;  // nodes rebuilt to rename one fold's holes
// Carried values past which a fold keeps every carried value's update, not those it reads.
inline constexpr size_t kMaxRecurrenceClosure = 512;
// Sizes past which Walker::fold_by_cases no longer decides a choice between trip counts
// by evaluation (the comparisons it reads settle below it).
inline constexpr int64_t kMaxCaseThreshold = 4096;

}  // namespace fixbits::verify
