// Experiments: ±L / r placements on a 1 x 1 x K GEMM and the pair walk (contract
// in Experiments.h).
// Example (f16, plain mma_sync ik=16, fast accum, K = 48): the pair walk returns
// kR for m in 1..14 (all three in r's instruction: the sum is exact), kZero at
// m = 15 and 31 (the pair straddles an instruction boundary after r joined the
// accumulator), kR elsewhere (the pair cancels inside its own instruction).
#include "dsl/probe/Experiments.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"

namespace fixbits::dsl::probe {

ProbeValues probe_values(DType a, DType b) {
  ProbeValues v;
  const bool fp8 = dtype_is_fp8(a) || dtype_is_fp8(b);
  if (fp8) {
    v.L_a = to_bits(a, 256.0f);
    v.L_b = to_bits(b, 1.0f);
    v.r_a = to_bits(a, std::ldexp(1.0f, -9));
    v.r_b = to_bits(b, std::ldexp(1.0f, -9));
    v.fill_b = to_bits(b, 1.0f);
  } else {
    v.fill_b = to_bits(b, 0.0625f);
    v.L_a = to_bits(a, 16384.0f);
    v.L_b = v.fill_b;
    v.r_a = to_bits(a, std::ldexp(1.0f, -11));
    v.r_b = v.fill_b;
  }
  v.L = to_float(a, v.L_a) * to_float(b, v.L_b);
  v.r = to_float(a, v.r_a) * to_float(b, v.r_b);
  return v;
}

Outcome classify(DType out, float r, uint32_t out_bits) {
  const float x = to_float(out, out_bits);
  if (x == 0.0f) return Outcome::kZero;
  if (out_bits == to_bits(out, r)) return Outcome::kR;
  return Outcome::kOther;
}

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::kZero: return "0";
    case Outcome::kR: return "r";
    case Outcome::kOther: return "other";
  }
  return "?";
}

reference::GemmProblem make_problem(const Placement& p, DType a, DType b) {
  const ProbeValues v = probe_values(a, b);
  reference::GemmProblem prob;
  prob.m = 1;
  prob.n = 1;
  prob.k = p.k;
  prob.a.assign(static_cast<size_t>(p.k), to_bits(a, 0.0f));
  prob.b.assign(static_cast<size_t>(p.k), v.fill_b);
  for (const reference::SparseEntry& e : sparse_entries(p, v, a)) {
    prob.a[static_cast<size_t>(e.k)] = e.a;
    prob.b[static_cast<size_t>(e.k)] = e.b;
  }
  return prob;
}

namespace {
// The bits of one mark, as make_problem writes it.
std::pair<uint32_t, uint32_t> mark_bits(char mark, const ProbeValues& v, DType a) {
  switch (mark) {
    case 'r': return {v.r_a, v.r_b};
    case '+': return {v.L_a, v.L_b};
    case '-': return {to_bits(a, -to_float(a, v.L_a)), v.L_b};
    default: return {to_bits(a, 0.0f), v.fill_b};
  }
}
}  // namespace

std::vector<reference::SparseEntry> sparse_entries(const Placement& p, const ProbeValues& v,
                                                   DType a) {
  std::map<int64_t, std::pair<uint32_t, uint32_t>> at;  // a later mark at one index wins
  for (auto [idx, mark] : p.marks) {
    if (idx < 0 || idx >= p.k) continue;  // callers place inside [0, k)
    at[idx] = mark_bits(mark, v, a);
  }
  std::vector<reference::SparseEntry> out;
  for (const auto& [idx, bits] : at) out.push_back({idx, bits.first, bits.second});
  return out;
}

SparseBatchBox one_by_one(SparseBlackBox one) {
  return [one = std::move(one)](const std::vector<SparseProblem>& ps)
             -> absl::StatusOr<std::vector<std::vector<uint32_t>>> {
    std::vector<std::vector<uint32_t>> out;
    for (const SparseProblem& p : ps) {
      absl::StatusOr<std::vector<uint32_t>> r = one(p);
      if (!r.ok()) return r.status();
      out.push_back(*std::move(r));
    }
    return out;
  };
}

SparseBlackBox reference_sparse_box(const GemmDesc& d) {
  // One evaluator per (K, fills), kept across calls: its memos of fill-only steps are
  // what makes a walk of K placements cost O(K). Guarded: a box may be shared.
  struct State {
    std::unique_ptr<reference::MmaModel> model = reference::make_sm90_mma_model();
    absl::Mutex mu;
    std::map<std::tuple<int64_t, uint32_t, uint32_t>, reference::SparseElement> elems;
  };
  auto state = std::make_shared<State>();
  return [d, state](const SparseProblem& p) -> absl::StatusOr<std::vector<uint32_t>> {
    absl::MutexLock lock(&state->mu);
    auto key = std::make_tuple(p.k, p.a_fill, p.b_fill);
    auto it = state->elems.find(key);
    if (it == state->elems.end()) {
      absl::StatusOr<reference::SparseElement> e =
          reference::SparseElement::create(d, p.k, p.a_fill, p.b_fill, state->model.get());
      if (!e.ok()) return e.status();
      it = state->elems.emplace(key, *std::move(e)).first;
    }
    reference::SparseElement& elem = it->second;
    // Each output (i, j) sees row i's entries of a and column j's of b.
    std::map<int64_t, std::map<int64_t, uint32_t>> rows, cols;
    for (const SparseProblem::Entry& e : p.a) rows[e.row][e.col] = e.bits;
    for (const SparseProblem::Entry& e : p.b) cols[e.col][e.row] = e.bits;
    const std::map<int64_t, uint32_t> none;
    std::vector<uint32_t> out(static_cast<size_t>(p.m * p.n));
    std::vector<std::pair<int64_t, int64_t>> reads = p.reads;
    if (reads.empty()) {
      for (int64_t i = 0; i < p.m; ++i)
        for (int64_t j = 0; j < p.n; ++j) reads.emplace_back(i, j);
    }
    for (auto [i, j] : reads) {
      if (i < 0 || i >= p.m || j < 0 || j >= p.n) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "SparseProblem.reads holds (%d, %d), outside the %d x %d output.", i, j, p.m, p.n));
      }
      const auto ri = rows.find(i);
      const std::map<int64_t, uint32_t>& ra = ri == rows.end() ? none : ri->second;
      const auto cj = cols.find(j);
      const std::map<int64_t, uint32_t>& cb = cj == cols.end() ? none : cj->second;
      std::map<int64_t, std::pair<uint32_t, uint32_t>> at;
      for (const auto& [kk, bits] : ra) at[kk] = {bits, p.b_fill};
      for (const auto& [kk, bits] : cb) {
        auto [it, added] = at.emplace(kk, std::make_pair(p.a_fill, bits));
        if (!added) it->second.second = bits;
      }
      std::vector<reference::SparseEntry> entries;
      for (const auto& [kk, ab] : at) entries.push_back({kk, ab.first, ab.second});
      absl::StatusOr<uint32_t> bits = elem.eval(entries);
      if (!bits.ok()) return bits.status();
      out[static_cast<size_t>(i * p.n + j)] = *bits;
    }
    return out;
  };
}

reference::GemmProblem densify(const SparseProblem& p) {
  reference::GemmProblem d;
  d.m = p.m;
  d.n = p.n;
  d.k = p.k;
  d.a.assign(static_cast<size_t>(p.m * p.k), p.a_fill);
  d.b.assign(static_cast<size_t>(p.k * p.n), p.b_fill);
  for (const SparseProblem::Entry& e : p.a) d.a[static_cast<size_t>(e.row * p.k + e.col)] = e.bits;
  for (const SparseProblem::Entry& e : p.b) d.b[static_cast<size_t>(e.row * p.n + e.col)] = e.bits;
  return d;
}

namespace {
// A box's answer to an m x n problem: its error named with the experiment, or a
// count of values that is not m x n as FailedPrecondition.
// A black box's failure on experiment `what`, its code kept.
absl::Status box_failure(const absl::Status& s, const std::string& what, int64_t k) {
  return absl::Status(s.code(), absl::StrFormat("the black box failed on experiment %s (k=%d): %s", what,
                                                k, s.message()));
}

absl::StatusOr<std::vector<uint32_t>> checked_answer(absl::StatusOr<std::vector<uint32_t>> out,
                                                     const std::string& what, int64_t k,
                                                     int64_t m, int64_t n) {
  if (!out.ok()) return box_failure(out.status(), what, k);
  const size_t want = static_cast<size_t>(m * n);
  if (out->size() != want) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "the black box returned %d values on experiment %s; a %d x %d problem has %d.",
        out->size(), what, m, n, want));
  }
  return out;
}
}  // namespace

absl::StatusOr<std::vector<uint32_t>> Instrument::call(const reference::GemmProblem& problem,
                                                       const std::string& what) {
  ++calls_;
  return checked_answer(box_(problem), what, problem.k, problem.m, problem.n);
}

absl::StatusOr<Outcome> Instrument::run(const Placement& p, const std::string& what) {
  absl::StatusOr<std::vector<Outcome>> out = run_all({p}, [&](size_t) { return what; });
  if (!out.ok()) return out.status();
  return (*out)[0];
}

Instrument::Vectors Instrument::vectors_of(const Placement& p) const {
  Vectors v;
  const uint32_t zero_a = to_bits(a_, 0.0f);
  for (const reference::SparseEntry& e : sparse_entries(p, v_, a_)) {
    if (e.a != zero_a) v.a.emplace_back(e.k, e.a);
    if (e.b != v_.fill_b) v.b.emplace_back(e.k, e.b);
  }
  return v;
}

SparseProblem Instrument::batch_problem(const std::vector<Vectors>& vecs, int64_t k,
                                        const std::vector<size_t>& idx, bool swapped) const {
  // Each placement's own vector (a) and its shared one (b), deduplicated in order.
  std::vector<const Sparse*> own, shared;
  std::vector<size_t> shared_of;
  std::map<Sparse, size_t> shared_index;
  for (size_t i : idx) {
    own.push_back(&vecs[i].a);
    auto [it, added] = shared_index.emplace(vecs[i].b, shared.size());
    if (added) shared.push_back(&it->first);
    shared_of.push_back(it->second);
  }
  // Normal: rows = own vectors (A), columns = shared vectors (B). Swapped: columns =
  // own vectors placed in B, rows = shared vectors placed in A (a and b share a dtype).
  const std::vector<const Sparse*>& rows = swapped ? shared : own;
  const std::vector<const Sparse*>& cols = swapped ? own : shared;
  SparseProblem prob;
  prob.k = k;
  prob.m = static_cast<int64_t>(rows.size());
  prob.n = static_cast<int64_t>(cols.size());
  const uint32_t zero_a = to_bits(a_, 0.0f);
  prob.a_fill = swapped ? v_.fill_b : zero_a;
  prob.b_fill = swapped ? zero_a : v_.fill_b;
  for (int64_t i = 0; i < prob.m; ++i) {
    for (auto [kk, bits] : *rows[static_cast<size_t>(i)]) prob.a.push_back({i, kk, bits});
  }
  for (int64_t j = 0; j < prob.n; ++j) {
    for (auto [kk, bits] : *cols[static_cast<size_t>(j)]) prob.b.push_back({kk, j, bits});
  }
  for (size_t t = 0; t < idx.size(); ++t) {
    prob.reads.emplace_back(swapped ? static_cast<int64_t>(shared_of[t]) : static_cast<int64_t>(t),
                            swapped ? static_cast<int64_t>(t) : static_cast<int64_t>(shared_of[t]));
  }
  return prob;
}

void Instrument::take_outcomes(const SparseProblem& prob, const std::vector<uint32_t>& bits,
                               const std::vector<size_t>& idx, std::vector<Outcome>* out) {
  runs_ += static_cast<int64_t>(idx.size());
  for (size_t t = 0; t < idx.size(); ++t) {
    const auto [r, c] = prob.reads[t];  // placement t's output
    (*out)[idx[t]] = classify(out_, v_.r, bits[static_cast<size_t>(r * prob.n + c)]);
  }
}

namespace {
// The name of a call's experiments in errors: its first, and how many others.
std::string batch_name(const std::function<std::string(size_t)>& what, size_t first, size_t others) {
  return others == 0 ? what(first) : absl::StrFormat("%s (batched with %d others)", what(first), others);
}
}  // namespace

absl::Status Instrument::run_batch(const std::vector<Vectors>& vecs, int64_t k,
                                   const std::vector<size_t>& idx, bool swapped,
                                   const std::function<std::string(size_t)>& what,
                                   std::vector<Outcome>* out) {
  const SparseProblem prob = batch_problem(vecs, k, idx, swapped);
  const std::string name = batch_name(what, idx[0], idx.size() - 1);
  absl::StatusOr<std::vector<uint32_t>> bits;
  if (sparse_) {
    ++calls_;
    bits = checked_answer(sparse_(prob), name, k, prob.m, prob.n);
  } else {
    bits = call(densify(prob), name);
  }
  if (!bits.ok()) return bits.status();
  take_outcomes(prob, *bits, idx, out);
  return absl::OkStatus();
}

absl::Status Instrument::run_batches(const std::vector<SparseProblem>& probs,
                                     const std::vector<std::vector<size_t>>& idxs,
                                     const std::function<std::string(size_t)>& what,
                                     std::vector<Outcome>* out) {
  size_t placements = 0;
  for (const std::vector<size_t>& idx : idxs) placements += idx.size();
  const std::string name = batch_name(what, idxs[0][0], placements - 1);
  ++calls_;
  absl::StatusOr<std::vector<std::vector<uint32_t>>> bits = sparse_batch_(probs);
  if (!bits.ok()) return box_failure(bits.status(), name, probs[0].k);
  if (bits->size() != probs.size()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "the black box answered %d of the %d problems of experiment %s.", bits->size(), probs.size(),
        name));
  }
  for (size_t j = 0; j < probs.size(); ++j) {
    absl::StatusOr<std::vector<uint32_t>> one =
        checked_answer((*bits)[j], batch_name(what, idxs[j][0], idxs[j].size() - 1), probs[j].k,
                       probs[j].m, probs[j].n);
    if (!one.ok()) return one.status();
    take_outcomes(probs[j], *one, idxs[j], out);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Outcome>> Instrument::run_all(
    const std::vector<Placement>& ps, const std::function<std::string(size_t)>& what) {
  std::vector<Outcome> out(ps.size(), Outcome::kZero);
  if (ps.empty()) return out;
  const int64_t k = ps[0].k;
  for (size_t i = 0; i < ps.size(); ++i) {
    if (ps[i].k != k) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "Instrument::run_all was given placements of K = %d and %d (experiment %s); one "
          "call runs one K.", k, ps[i].k, what(i)));
    }
  }
  if (limits_.rows < 1 || limits_.cols < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "BatchLimits is %d x %d; both must be >= 1.", limits_.rows, limits_.cols));
  }
  if (limits_.problems < 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("BatchLimits.problems is %d; it must be >= 1.", limits_.problems));
  }
  if (memo_k_ != k) {
    memo_.clear();
    memo_k_ = k;
  }
  // Placements not memoized, one per distinct mark set; repeats wait for their first.
  std::vector<size_t> todo;
  std::vector<std::pair<size_t, size_t>> repeats;  // (placement, its first)
  std::map<Marks, size_t> first;
  std::vector<Marks> keys(ps.size());
  for (size_t i = 0; i < ps.size(); ++i) {
    keys[i] = ps[i].marks;
    std::sort(keys[i].begin(), keys[i].end());
    if (auto it = memo_.find(keys[i]); it != memo_.end()) {
      out[i] = it->second;
    } else if (auto [f, added] = first.emplace(keys[i], i); !added) {
      repeats.emplace_back(i, f->second);
    } else {
      todo.push_back(i);
    }
  }
  const bool swapped = limits_.swap && a_ == b_ && limits_.cols > limits_.rows;
  const int64_t own_cap = swapped ? limits_.cols : limits_.rows;
  const int64_t shared_cap = swapped ? limits_.rows : limits_.cols;
  // Greedy: fill a call while it has an own slot and (for a new shared vector) a
  // shared slot. The shared vector is b, which differs only where r sits.
  std::vector<Vectors> vecs(ps.size());  // built once, for todo only
  std::vector<size_t> batch;
  std::set<Sparse> shared_in_batch;
  // With a batch box, batches wait in `queued` until BatchLimits::problems of them
  // (or the last) go in one call.
  std::vector<SparseProblem> queued;
  std::vector<std::vector<size_t>> queued_idx;
  auto send = [&]() -> absl::Status {
    if (queued.empty()) return absl::OkStatus();
    absl::Status st = run_batches(queued, queued_idx, what, &out);
    queued.clear();
    queued_idx.clear();
    return st;
  };
  auto flush = [&]() -> absl::Status {
    if (batch.empty()) return absl::OkStatus();
    absl::Status st;
    if (sparse_batch_) {
      queued.push_back(batch_problem(vecs, k, batch, swapped));
      queued_idx.push_back(batch);
      if (static_cast<int64_t>(queued.size()) >= limits_.problems) st = send();
    } else {
      st = run_batch(vecs, k, batch, swapped, what, &out);
    }
    batch.clear();
    shared_in_batch.clear();
    return st;
  };
  for (size_t i : todo) {
    vecs[i] = vectors_of(ps[i]);
    const bool new_shared = !shared_in_batch.contains(vecs[i].b);
    if (static_cast<int64_t>(batch.size()) >= own_cap ||
        (new_shared && static_cast<int64_t>(shared_in_batch.size()) >= shared_cap)) {
      if (absl::Status st = flush(); !st.ok()) return st;
    }
    batch.push_back(i);
    shared_in_batch.insert(vecs[i].b);
  }
  if (absl::Status st = flush(); !st.ok()) return st;
  if (absl::Status st = send(); !st.ok()) return st;
  for (size_t i : todo) memo_.emplace(keys[i], out[i]);
  for (auto [i, f] : repeats) out[i] = out[f];
  return out;
}

absl::StatusOr<std::vector<Outcome>> Instrument::pair_walk(int64_t k) {
  std::vector<Outcome> walk(static_cast<size_t>(k > 0 ? k : 0), Outcome::kR);
  std::vector<Placement> ps;
  for (int64_t m = 1; m + 1 < k; ++m) ps.push_back(Placement{k, {{0, 'r'}, {m, '+'}, {m + 1, '-'}}});
  absl::StatusOr<std::vector<Outcome>> o =
      run_all(ps, [](size_t i) { return absl::StrFormat("pair walk m=%d", i + 1); });
  if (!o.ok()) return o.status();
  for (size_t i = 0; i < o->size(); ++i) walk[i + 1] = (*o)[i];
  return walk;
}

}  // namespace fixbits::dsl::probe
