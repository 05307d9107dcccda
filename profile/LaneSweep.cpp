// LaneSweep: see LaneSweep.h.
#include "profile/LaneSweep.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <string>

#include "absl/strings/str_format.h"
#include "profile/CublasKey.h"
#include "runtime/Cupti.h"

namespace fixbits::profile {

absl::StatusOr<std::vector<LaneStep>> lane_steps(const std::vector<std::pair<int64_t, int>>& seen) {
  if (seen.empty()) return absl::InvalidArgumentError("lane_steps: no (N, lanes) observation.");
  std::vector<LaneStep> steps;
  for (size_t i = 0; i < seen.size(); ++i) {
    const auto [n, lanes] = seen[i];
    if (n < 1 || (i > 0 && n <= seen[i - 1].first)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "lane_steps: N = %d comes after N = %d; the observations must ascend in N.", n,
          i > 0 ? seen[i - 1].first : 0));
    }
    if (lanes < 1 || lanes > 64) {
      return absl::InvalidArgumentError(
          absl::StrFormat("lane_steps: N = %d has %d lanes; a count is in [1, 64].", n, lanes));
    }
    if (steps.empty()) {
      steps.push_back({1, lanes});
    } else if (steps.back().lanes != lanes) {
      steps.push_back({n, lanes});
    }
  }
  return steps;
}

namespace {

// One K's sweep: N -> blockDim.y of the gemv kernel, for the Ns answered by class cls.
absl::Status sweep_one_k(runtime::CublasLt& lt, const CublasTable& table, int cls,
                         const runtime::GemmShape& base, int64_t k, const LaneSweepOptions& o,
                         std::chrono::steady_clock::time_point deadline, LaneSweep& out,
                         std::map<int64_t, int>& lanes_by_n) {
  const std::shared_ptr<runtime::Device>& dev = lt.device();
  auto bytes = [](DType t, int64_t elems) {
    return static_cast<size_t>(elems) * static_cast<size_t>(dtype_bits(t) / 8);
  };
  absl::StatusOr<runtime::Buffer> a = dev->alloc(bytes(base.a_dtype, k));
  if (!a.ok()) return a.status();
  absl::StatusOr<runtime::Buffer> b = dev->alloc(bytes(base.b_dtype, k * o.n_last));
  if (!b.ok()) return b.status();
  absl::StatusOr<runtime::Buffer> d = dev->alloc(bytes(base.out_dtype, o.n_last));
  if (!d.ok()) return d.status();
  for (runtime::Buffer* buf : {&*a, &*b, &*d}) {
    if (absl::Status st = buf->fill_bytes(0); !st.ok()) return st;
  }
  // Launches go in chunks, each under its own recording, so a record maps to its N by
  // order on the one stream.
  constexpr int64_t kChunk = 256;
  int64_t n = o.n_first;
  while (n <= o.n_last) {
    if (std::chrono::steady_clock::now() > deadline) {
      return absl::DeadlineExceededError(absl::StrFormat(
          "the lane sweep of class %d passed its %.0f s budget at K = %d, N = %d (of %d..%d).",
          cls, o.budget_s, k, n, o.n_first, o.n_last));
    }
    std::vector<int64_t> launched;
    absl::StatusOr<std::unique_ptr<runtime::KernelRecorder>> rec = runtime::KernelRecorder::start();
    if (!rec.ok()) return rec.status();
    absl::Status ran;
    for (; n <= o.n_last && static_cast<int64_t>(launched.size()) < kChunk; ++n) {
      runtime::GemmShape s = base;
      s.m = 1, s.n = n, s.k = k;
      ++out.shapes_asked;
      absl::StatusOr<runtime::MatmulReport> h = lt.heuristic_uncached(s);
      if (!h.ok()) continue;  // refused: no answer, no class
      absl::StatusOr<int> c = class_of_answer(table, s, answer_of(h->algo).key);
      if (!c.ok() || *c != cls) continue;
      if (absl::StatusOr<runtime::MatmulReport> r = lt.matmul_at(s, a->address(), b->address(),
                                                                 d->address());
          !r.ok()) {
        ran = r.status();
        break;
      }
      launched.push_back(n);
    }
    absl::Status synced = dev->synchronize();
    absl::StatusOr<runtime::LaunchProfile> prof = (*rec)->stop();
    if (!ran.ok()) return ran;
    if (!synced.ok()) return synced;
    if (!prof.ok()) return prof.status();
    std::vector<const runtime::KernelRecord*> gemv;
    for (const runtime::KernelRecord& r : prof->kernels)
      if (r.name.find("gemv") != std::string::npos) gemv.push_back(&r);
    if (gemv.size() != launched.size()) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "class %d at K = %d: %d launches (N = %d..%d) gave %d kernel records naming gemv; each "
          "must give one (is the class a gemv kernel?).",
          cls, k, launched.size(), launched.empty() ? 0 : launched.front(),
          launched.empty() ? 0 : launched.back(), gemv.size()));
    }
    for (size_t i = 0; i < launched.size(); ++i) {
      const int lanes = gemv[i]->block[1];
      auto [it, fresh] = lanes_by_n.emplace(launched[i], lanes);
      if (!fresh && it->second != lanes) {
        return absl::FailedPreconditionError(absl::StrFormat(
            "class %d at N = %d: blockDim.y is %d at K = %d but %d at an earlier K; the lane "
            "count is not a function of N alone.",
            cls, launched[i], lanes, k, it->second));
      }
    }
    out.shapes_in_class += static_cast<int64_t>(launched.size());
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<LaneSweep> sweep_lanes(runtime::CublasLt& lt, const CublasTable& table, int cls,
                                      const LaneSweepOptions& o) {
  if (cls < 0 || cls >= static_cast<int>(table.classes.size())) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "sweep_lanes: class %d is not in the table (%d classes).", cls, table.classes.size()));
  }
  if (o.n_first < 1 || o.n_last < o.n_first || o.ks.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "sweep_lanes: LaneSweepOptions needs 1 <= n_first <= n_last and a K (got N %d..%d, %d "
        "Ks).", o.n_first, o.n_last, o.ks.size()));
  }
  const TableClass& c = table.classes[cls];
  if (c.desc && c.desc->family != dsl::GemmFamily::kGemv) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "sweep_lanes: class %d is family %s; only a gemv class deals K to lanes by N.", cls,
        dsl::family_name(c.desc->family)));
  }
  absl::StatusOr<runtime::GemmShape> base = parse_family(c.family);
  if (!base.ok()) return base.status();
  const auto start = std::chrono::steady_clock::now();
  const auto deadline =
      start + std::chrono::milliseconds(static_cast<int64_t>(o.budget_s * 1000));
  LaneSweep out;
  std::map<int64_t, int> lanes_by_n;
  for (int64_t k : o.ks) {
    if (k < 1) return absl::InvalidArgumentError("sweep_lanes: a K of LaneSweepOptions.ks is < 1.");
    if (absl::Status st = sweep_one_k(lt, table, cls, *base, k, o, deadline, out, lanes_by_n);
        !st.ok()) {
      return st;
    }
  }
  if (lanes_by_n.empty()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "sweep_lanes: no M = 1 shape with N in %d..%d at the Ks given lands in class %d.",
        o.n_first, o.n_last, cls));
  }
  absl::StatusOr<std::vector<LaneStep>> steps =
      lane_steps(std::vector<std::pair<int64_t, int>>(lanes_by_n.begin(), lanes_by_n.end()));
  if (!steps.ok()) return steps.status();
  out.steps = *std::move(steps);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace fixbits::profile
