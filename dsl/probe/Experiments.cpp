// Experiments: ±L / r placements on a 1 x 1 x K GEMM and the pair walk (contract
// in Experiments.h).
// Example (f16, plain mma_sync ik=16, fast accum, K = 48): the pair walk returns
// kR for m in 1..14 (all three in r's instruction: the sum is exact), kZero at
// m = 15 and 31 (the pair straddles an instruction boundary after r joined the
// accumulator), kR elsewhere (the pair cancels inside its own instruction).
#include "dsl/probe/Experiments.h"

#include <cmath>

#include "absl/strings/str_format.h"

namespace fixbits::dsl::probe {

ProbeValues probe_values(DType a, DType b) {
  ProbeValues v;
  const bool fp8 = dtype_is_fp8(a) || dtype_is_fp8(b);
  if (fp8) {
    v.L_a = to_bits(a, 256.0f);
    v.L_b = to_bits(b, 1.0f);
    v.r_a = to_bits(a, std::ldexp(1.0f, -9));
    v.r_b = to_bits(b, std::ldexp(1.0f, -9));
  } else {
    v.L_a = to_bits(a, 1024.0f);
    v.L_b = to_bits(b, 1.0f);
    v.r_a = to_bits(a, std::ldexp(1.0f, -8));
    v.r_b = to_bits(b, std::ldexp(1.0f, -7));
  }
  v.one_b = to_bits(b, 1.0f);
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
  prob.b.assign(static_cast<size_t>(p.k), v.one_b);
  for (auto [idx, mark] : p.marks) {
    if (idx < 0 || idx >= p.k) continue;  // callers place inside [0, k)
    switch (mark) {
      case 'r':
        prob.a[idx] = v.r_a;
        prob.b[idx] = v.r_b;
        break;
      case '+':
        prob.a[idx] = v.L_a;
        prob.b[idx] = v.L_b;
        break;
      case '-':
        prob.a[idx] = to_bits(a, -to_float(a, v.L_a));
        prob.b[idx] = v.L_b;
        break;
      default:
        break;
    }
  }
  return prob;
}

absl::StatusOr<std::vector<uint32_t>> Instrument::call(const reference::GemmProblem& problem,
                                                       const std::string& what) {
  ++calls_;
  absl::StatusOr<std::vector<uint32_t>> out = box_(problem);
  if (!out.ok()) {
    return absl::Status(out.status().code(),
                        absl::StrFormat("the black box failed on experiment %s (k=%d): %s",
                                        what, problem.k, out.status().message()));
  }
  const size_t want = static_cast<size_t>(problem.m * problem.n);
  if (out->size() != want) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "the black box returned %d values on experiment %s; a %d x %d problem has %d.",
        out->size(), what, problem.m, problem.n, want));
  }
  return out;
}

absl::StatusOr<Outcome> Instrument::run(const Placement& p, const std::string& what) {
  absl::StatusOr<std::vector<uint32_t>> out = call(make_problem(p, a_, b_), what);
  if (!out.ok()) return out.status();
  return classify(out_, v_.r, (*out)[0]);
}

absl::StatusOr<std::vector<Outcome>> Instrument::pair_walk(int64_t k) {
  std::vector<Outcome> walk(static_cast<size_t>(k > 0 ? k : 0), Outcome::kR);
  for (int64_t m = 1; m + 1 < k; ++m) {
    Placement p{k, {{0, 'r'}, {m, '+'}, {m + 1, '-'}}};
    absl::StatusOr<Outcome> o = run(p, absl::StrFormat("pair walk m=%d", m));
    if (!o.ok()) return o.status();
    walk[m] = *o;
  }
  return walk;
}

}  // namespace fixbits::dsl::probe
