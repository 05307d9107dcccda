// CublasMatch: see CublasMatch.h. One match, in order: lookup -> draw inputs ->
// cuBLASLt (device buffers of the shape) -> the generated kernel or the reference ->
// compare -> on a difference, the tail check.
#include "profile/match/CublasMatch.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <vector>

#include "absl/strings/str_format.h"
#include "dsl/reference/Reference.h"
#include "profile/MatchDraws.h"

namespace fixbits::profile {
namespace {


// Bit patterns packed at the element size cuBLASLt stores.
std::vector<uint8_t> pack(const std::vector<uint32_t>& bits, DType t) {
  const size_t e = runtime::cublaslt_element_bytes(t);
  std::vector<uint8_t> out(bits.size() * e);
  for (size_t i = 0; i < bits.size(); ++i) std::memcpy(out.data() + i * e, &bits[i], e);
  return out;
}

uint32_t unpack(const std::vector<uint8_t>& bytes, size_t i, DType t) {
  const size_t e = runtime::cublaslt_element_bytes(t);
  uint32_t x = 0;
  std::memcpy(&x, bytes.data() + i * e, e);
  return x;
}

// cuBLASLt's D for inputs `a`, `b` (bit patterns in the shape's layouts).
absl::StatusOr<std::vector<uint8_t>> run_cublas(runtime::CublasLt& lt, const runtime::GemmShape& s,
                                                const std::vector<uint32_t>& a,
                                                const std::vector<uint32_t>& b) {
  const runtime::Device& dev = *lt.device();
  const std::vector<uint8_t> ha = pack(a, s.a_dtype), hb = pack(b, s.b_dtype);
  std::vector<uint8_t> hd(static_cast<size_t>(s.m * s.n) * runtime::cublaslt_element_bytes(s.out_dtype));
  absl::StatusOr<runtime::Buffer> da = dev.alloc(ha.size()), db = dev.alloc(hb.size()),
                                  dd = dev.alloc(hd.size());
  if (!da.ok()) return da.status();
  if (!db.ok()) return db.status();
  if (!dd.ok()) return dd.status();
  if (absl::Status st = da->copy_from_host(ha.data(), ha.size()); !st.ok()) return st;
  if (absl::Status st = db->copy_from_host(hb.data(), hb.size()); !st.ok()) return st;
  if (absl::Status st = lt.matmul(s, *da, *db, *dd).status(); !st.ok()) return st;
  if (absl::Status st = dd->copy_to_host(hd.data(), hd.size()); !st.ok()) return st;
  return hd;
}

}  // namespace

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kIdentical: return "identical";
    case Verdict::kDiffer: return "differ";
    case Verdict::kTailDropped: return "tail_dropped";
    case Verdict::kNoDesc: return "no_desc";
    case Verdict::kRefused: return "refused";
  }
  return "?";
}

CublasMatcher::CublasMatcher(std::shared_ptr<runtime::Device> device,
                             std::shared_ptr<runtime::CublasLt> lt, const CublasTable* table,
                             MatchOptions options)
    : device_(std::move(device)), lt_(std::move(lt)), table_(table), options_(options) {}

absl::StatusOr<jit::GemmRunner*> CublasMatcher::runner_for(const dsl::GemmDesc& desc) {
  absl::StatusOr<jit::GemmRunner*> r = compiled_runner(desc);
  if (r.ok() || desc.instruction != dsl::Instruction::kWgmma || dtype_is_fp8(desc.a_dtype) ||
      !absl::IsUnimplemented(r.status())) {
    return r;
  }
  // No wgmma kernel generated: mma_sync gives the same bits for f16/bf16 on sm_90.
  dsl::GemmDesc sync = desc;
  sync.instruction = dsl::Instruction::kMmaSync;
  return compiled_runner(sync);
}

absl::StatusOr<jit::GemmRunner*> CublasMatcher::compiled_runner(const dsl::GemmDesc& kernel) {
  const std::string text = dsl::to_string(kernel);
  if (auto it = runners_.find(text); it != runners_.end()) return it->second.get();
  if (auto it = refused_.find(text); it != refused_.end()) return it->second;
  if (compile_s_ > options_.compile_budget_s) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "the compile budget of %.0f s is spent", options_.compile_budget_s));
  }
  const auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<jit::GemmRunner> r = jit::GemmRunner::create(device_, kernel, options_.config);
  compile_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!r.ok()) {
    refused_.emplace(text, r.status());
    return r.status();
  }
  auto owned = std::make_unique<jit::GemmRunner>(*std::move(r));
  jit::GemmRunner* raw = owned.get();
  runners_.emplace(text, std::move(owned));
  return raw;
}

absl::StatusOr<std::string> CublasMatcher::first_difference(const dsl::GemmDesc& desc,
                                                             const runtime::GemmShape& s,
                                                             const dsl::reference::GemmProblem& p,
                                                             const std::vector<uint8_t>& theirs,
                                                             std::string* path) {
  std::string first_diff;
  absl::StatusOr<jit::GemmRunner*> runner = runner_for(desc);
  if (runner.ok()) {
    *path = "kernel";
    if (absl::Status st = (*runner)->upload(p); !st.ok()) return st;
    if (absl::Status st = (*runner)->launch(); !st.ok()) return st;
    absl::StatusOr<std::vector<uint32_t>> ours = (*runner)->download();
    if (!ours.ok()) return ours.status();
    for (size_t i = 0; i < ours->size() && first_diff.empty(); ++i) {
      const uint32_t t = unpack(theirs, i, s.out_dtype);
      if ((*ours)[i] != t) {
        first_diff = absl::StrFormat("D[%d][%d]: cuBLAS 0x%x, fixbits 0x%x", i / s.n, i % s.n, t,
                                     (*ours)[i]);
      }
    }
    return first_diff;
  }
  *path = "reference";
  const std::vector<int64_t> rows = spread(s.m, options_.ref_rows);
  const std::vector<int64_t> cols = spread(s.n, options_.ref_cols);
  dsl::reference::GemmProblem q;
  q.m = static_cast<int64_t>(rows.size());
  q.n = static_cast<int64_t>(cols.size());
  q.k = s.k;
  for (int64_t i : rows)
    for (int64_t kk = 0; kk < s.k; ++kk) q.a.push_back(p.a[s.a_row_major ? i * s.k + kk : kk * s.m + i]);
  for (int64_t kk = 0; kk < s.k; ++kk)
    for (int64_t j : cols) q.b.push_back(p.b[s.b_row_major ? kk * s.n + j : j * s.k + kk]);
  absl::StatusOr<std::vector<uint32_t>> want = dsl::reference::gemm(desc, q);
  if (!want.ok()) return want.status();
  for (size_t ri = 0; ri < rows.size() && first_diff.empty(); ++ri) {
    for (size_t ci = 0; ci < cols.size() && first_diff.empty(); ++ci) {
      const uint32_t t = unpack(theirs, rows[ri] * s.n + cols[ci], s.out_dtype);
      const uint32_t r = (*want)[ri * cols.size() + ci];
      if (t != r) {
        first_diff =
            absl::StrFormat("D[%d][%d]: cuBLAS 0x%x, reference 0x%x", rows[ri], cols[ci], t, r);
      }
    }
  }
  return first_diff;
}

absl::StatusOr<MatchResult> CublasMatcher::match(const runtime::GemmShape& s, uint64_t seed) {
  MatchResult res;
  res.family = family_of(s);
  absl::StatusOr<MapRun> run = lookup_run(*table_, s);
  absl::StatusOr<dsl::GemmDesc> desc =
      run.ok() ? desc_for(table_->classes[table_->variants[run->variant].cls], s, run->splitk)
               : absl::StatusOr<dsl::GemmDesc>(run.status());
  absl::StatusOr<runtime::MatmulReport> heur = lt_->heuristic(s);
  if (!heur.ok()) {
    res.verdict = res.answer_verdict = Verdict::kRefused;
    res.detail = std::string(heur.status().message());
    return res;
  }
  const CublasAnswer truth = answer_of(heur->algo);
  res.answer_algo = runtime::to_string(heur->algo);
  res.map_hit = run.ok() && table_->variants[run->variant].key == truth.key &&
                run->splitk == truth.splitk;
  absl::StatusOr<dsl::GemmDesc> answer_desc = lookup_answer(*table_, s, truth);
  if (absl::StatusOr<int> c = class_of_answer(*table_, s, truth.key); c.ok()) res.answer_class = *c;
  if (!desc.ok()) {
    res.verdict = Verdict::kNoDesc;
    res.detail = std::string(desc.status().message());
  }
  if (!answer_desc.ok()) {
    res.answer_verdict = Verdict::kNoDesc;
    res.answer_detail = std::string(answer_desc.status().message());
  }
  if (!desc.ok() && !answer_desc.ok()) return res;
  res.family += std::string(" ") + dsl::family_name((desc.ok() ? *desc : *answer_desc).family);

  std::mt19937_64 rng(seed);
  dsl::reference::GemmProblem p;
  p.m = s.m, p.n = s.n, p.k = s.k;
  p.a_row_major = s.a_row_major;
  p.b_row_major = s.b_row_major;
  p.a.resize(static_cast<size_t>(s.m * s.k));
  p.b.resize(static_cast<size_t>(s.k * s.n));
  for (uint32_t& x : p.a) x = draw_input_bits(s.a_dtype, rng, /*with_subnormal=*/true);
  for (uint32_t& x : p.b) x = draw_input_bits(s.b_dtype, rng, /*with_subnormal=*/true);
  absl::StatusOr<std::vector<uint8_t>> theirs = run_cublas(*lt_, s, p.a, p.b);
  if (!theirs.ok()) return theirs.status();

  // The tail check, run once when some descriptor differs: a single product 1 * 1 at
  // k = K-1 in row 0 / column 0 must come back as 1.
  std::optional<bool> summed;
  auto tail_summed = [&]() -> absl::StatusOr<bool> {
    if (summed) return *summed;
    std::vector<uint32_t> a(p.a.size(), to_bits(s.a_dtype, 0.0f)),
        b(p.b.size(), to_bits(s.b_dtype, 0.0f));
    a[s.a_row_major ? s.k - 1 : (s.k - 1) * s.m] = to_bits(s.a_dtype, 1.0f);
    b[s.b_row_major ? (s.k - 1) * s.n : s.k - 1] = to_bits(s.b_dtype, 1.0f);
    absl::StatusOr<std::vector<uint8_t>> tail = run_cublas(*lt_, s, a, b);
    if (!tail.ok()) return tail.status();
    summed = unpack(*tail, 0, s.out_dtype) == to_bits(s.out_dtype, 1.0f);
    return *summed;
  };
  // One descriptor's verdict and detail against cuBLAS's bytes.
  auto judge = [&](const dsl::GemmDesc& d, Verdict* verdict, std::string* detail,
                   std::string* path) -> absl::Status {
    absl::StatusOr<std::string> diff = first_difference(d, s, p, *theirs, path);
    if (!diff.ok()) return diff.status();
    if (diff->empty()) {
      *verdict = Verdict::kIdentical;
      return absl::OkStatus();
    }
    *detail = *diff + " (" + dsl::to_string(d) + ")";
    absl::StatusOr<bool> full = tail_summed();
    if (!full.ok()) return full.status();
    *verdict = *full ? Verdict::kDiffer : Verdict::kTailDropped;
    if (!*full) *detail += "; cuBLAS drops the product at k = K-1";
    return absl::OkStatus();
  };
  if (desc.ok()) {
    if (absl::Status st = judge(*desc, &res.verdict, &res.detail, &res.path); !st.ok()) return st;
  }
  if (answer_desc.ok()) {
    if (desc.ok() && *answer_desc == *desc) {
      res.answer_verdict = res.verdict;
      res.answer_detail = res.detail;
    } else {
      std::string path;
      if (absl::Status st = judge(*answer_desc, &res.answer_verdict, &res.answer_detail, &path);
          !st.ok()) {
        return st;
      }
      if (res.path.empty()) res.path = path;
    }
  }
  return res;
}

}  // namespace fixbits::profile
