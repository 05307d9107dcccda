// ZeroSign.cpp: the all -0.0 products experiment (ZeroSign.h), one full-shape cuBLAS
// call and one small reference GEMM per shape.
#include "samples/cublas_probe/ZeroSign.h"

#include <cmath>
#include <map>
#include <tuple>
#include <string>
#include <utility>

#include "absl/strings/str_format.h"
#include "dsl/FloatFormat.h"
#include "dsl/reference/Reference.h"
#include "profile/CublasBlackBox.h"
#include "profile/CublasKey.h"
#include "profile/CublasProfile.h"

namespace fixbits::samples {
namespace {

std::string sign_name(DType t, uint32_t bits) {
  const uint32_t sign = uint32_t{1} << (dtype_bits(t) - 1);
  if (bits == 0) return "+0";
  if (bits == sign) return "-0";
  return "nonzero";
}

}  // namespace

std::vector<ZeroSignInputs> zero_sign_inputs(DType in) {
  // tiny: f16's smallest subnormal (products 2^-48, normal in f32, far below f16's
  // range); bf16 2^-70 (products 2^-140, subnormal in f32 and below bf16's
  // 2^-133); fp8 e4m3 its smallest subnormal.
  const float t = in == DType::kF16 ? std::ldexp(1.0f, -24)
                  : in == DType::kBF16 ? std::ldexp(1.0f, -70)
                                       : std::ldexp(1.0f, -9);
  return {{"zero", to_bits(in, -1.0f), 0u}, {"tiny", to_bits(in, -t), to_bits(in, t)}};
}

std::vector<runtime::GemmShape> zero_sign_table_shapes(int per_class) {
  std::vector<runtime::GemmShape> shapes;
  absl::StatusOr<const profile::CublasTable*> t = profile::cublas_table(profile::sm90);
  if (!t.ok()) return shapes;
  for (const profile::TableClass& c : (*t)->classes) {
    if (!c.desc || c.probes.empty()) continue;
    absl::StatusOr<runtime::GemmShape> fam = profile::parse_family(c.family);
    if (!fam.ok()) continue;
    std::vector<profile::ProbePoint> points = {c.probes.front()};
    if (per_class > 1 && c.probes.size() > 1) points.push_back(c.probes.back());
    for (const profile::ProbePoint& p : points) {
      runtime::GemmShape s = *fam;
      s.m = p.m;
      s.n = p.n;
      s.k = p.k;
      shapes.push_back(s);
    }
  }
  return shapes;
}

ZeroSignSummary print_zero_signs(const std::shared_ptr<runtime::CublasLt>& lt,
                                 const std::vector<runtime::GemmShape>& shapes, std::FILE* out) {
  ZeroSignSummary sum;
  // (input set, cuBLAS sign, descriptor sign) -> shapes
  std::map<std::tuple<std::string, std::string, std::string>, int> pairs;
  for (const runtime::GemmShape& s : shapes) {
    const std::string name = runtime::to_string(s);
    auto skip = [&](const std::string& why) {
      std::fprintf(out, "zero-sign %s: not compared: %s\n", name.c_str(), why.c_str());
      ++sum.skipped;
    };
    absl::StatusOr<runtime::MatmulReport> h = lt->heuristic(s);
    if (!h.ok()) {
      skip(std::string(h.status().message()));
      continue;
    }
    absl::StatusOr<dsl::GemmDesc> d = profile::cublas_answer(profile::sm90, s, *lt);
    if (!d.ok()) {
      skip(absl::StrFormat("%s: %s", runtime::to_string(h->algo), d.status().message()));
      continue;
    }
    absl::StatusOr<std::shared_ptr<profile::CublasBlackBox>> box = profile::CublasBlackBox::create(lt, s);
    if (!box.ok()) {
      skip(std::string(box.status().message()));
      continue;
    }
    std::string line, why;
    bool all_same = true;
    std::vector<std::tuple<std::string, std::string, std::string>> signs;
    for (const ZeroSignInputs& in : zero_sign_inputs(s.a_dtype)) {
      dsl::reference::GemmProblem p;
      p.m = std::min<int64_t>(s.m, 2);
      p.n = std::min<int64_t>(s.n, 2);
      p.k = s.k;
      p.b_row_major = s.b_row_major;
      p.a.assign(static_cast<size_t>(p.m * p.k), in.a);
      p.b.assign(static_cast<size_t>(p.k * p.n), in.b);
      absl::StatusOr<std::vector<uint32_t>> lib = (*box)->run(p);
      absl::StatusOr<std::vector<uint32_t>> ref = dsl::reference::gemm(*d, p);
      if (!lib.ok() || !ref.ok() || lib->empty() || ref->empty()) {
        why = !lib.ok() ? std::string(lib.status().message())
                        : !ref.ok() ? std::string(ref.status().message()) : "empty output";
        break;
      }
      const uint32_t a = (*lib)[0], b = (*ref)[0];
      all_same = all_same && a == b;
      signs.emplace_back(in.name, sign_name(s.out_dtype, a), sign_name(s.out_dtype, b));
      line += absl::StrFormat(" %s: cuBLAS 0x%04x descriptor 0x%04x %s;", in.name, a, b,
                              a == b ? "same" : "DIFFER");
    }
    if (!why.empty()) {
      skip(why);  // neither input set's signs count for a shape not compared
      continue;
    }
    for (const auto& k : signs) ++pairs[k];
    ++sum.compared;
    sum.differ += !all_same;
    std::fprintf(out, "zero-sign %s P=%u %s%s  (%s)\n", name.c_str(), h->algo.splitk_num,
                 runtime::to_string(h->algo).c_str(), line.c_str(), dsl::to_string(*d).c_str());
  }
  std::fprintf(out, "zero-sign summary: %d compared, %d differ, %d not compared;", sum.compared, sum.differ,
               sum.skipped);
  for (const auto& [k, n] : pairs) {
    std::fprintf(out, " %s cuBLAS %s / descriptor %s: %d;", std::get<0>(k).c_str(), std::get<1>(k).c_str(),
                 std::get<2>(k).c_str(), n);
  }
  std::fprintf(out, "\n");
  return sum;
}

}  // namespace fixbits::samples
