// MatchTally: see MatchTally.h.
#include "profile/match/MatchTally.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace fixbits::profile {
namespace {

// The counters of a Tally in one order, for the text form.
std::vector<int64_t*> fields(Tally& t) {
  return {&t.shapes,   &t.identical, &t.differ,    &t.tail_dropped,  &t.no_desc,
          &t.refused,  &t.map_hits,  &t.kernel,    &t.reference,     &t.differ_at_hit,
          &t.ans_identical, &t.ans_differ, &t.ans_no_desc};
}

std::string flat(std::string s) {
  std::replace(s.begin(), s.end(), '\t', ' ');
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

void print_row(const std::string& name, const Tally& t) {
  const int64_t compared = t.identical + t.differ;
  const int64_t ans_compared = t.ans_identical + t.ans_differ;
  std::printf("%-28s %7lld %9lld %9lld %7lld %10lld %6lld %8lld %8lld %8.2f%% %7lld %7lld "
              "| %8lld %7lld %7lld %8.2f%%\n",
              name.c_str(), static_cast<long long>(t.shapes), static_cast<long long>(compared),
              static_cast<long long>(t.identical), static_cast<long long>(t.differ),
              static_cast<long long>(t.differ_at_hit), static_cast<long long>(t.tail_dropped),
              static_cast<long long>(t.no_desc), static_cast<long long>(t.refused),
              compared ? 100.0 * static_cast<double>(t.identical) / static_cast<double>(compared)
                       : 0.0,
              static_cast<long long>(t.map_hits), static_cast<long long>(t.kernel),
              static_cast<long long>(ans_compared), static_cast<long long>(t.ans_differ),
              static_cast<long long>(t.ans_no_desc),
              ans_compared ? 100.0 * static_cast<double>(t.ans_identical) /
                                 static_cast<double>(ans_compared)
                           : 0.0);
}

// The answers with undescribed shapes, most first (ties in answer order).
std::vector<std::pair<std::string, AlgoTally>> undescribed(
    const std::map<std::string, AlgoTally>& by_algo) {
  std::vector<std::pair<std::string, AlgoTally>> out;
  for (const auto& [algo, t] : by_algo)
    if (t.no_desc > 0) out.push_back({algo, t});
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& x, const auto& y) { return x.second.no_desc > y.second.no_desc; });
  return out;
}

// An example's shape ("MxNxK a*b->out XY: ...") in --probe-at form ("MxNxK:a:out",
// ":tn" when B is column-major); nullopt when the text is not runtime::to_string's or A
// is column-major (--probe-at cannot say that).
std::optional<std::string> probe_at_form(const std::string& example) {
  const std::vector<std::string> w =
      absl::StrSplit(example.substr(0, example.find(':')), ' ', absl::SkipEmpty());
  if (w.size() != 3 || w[2].size() != 2 || w[2][0] != 'N') return std::nullopt;
  const size_t star = w[1].find('*'), arrow = w[1].find("->");
  if (star == std::string::npos || arrow == std::string::npos || arrow < star) return std::nullopt;
  std::string s = absl::StrCat(w[0], ":", w[1].substr(0, star), ":", w[1].substr(arrow + 2));
  if (w[2][1] == 'T') s += ":tn";
  return s;
}

}  // namespace

void MatchTallies::add(const std::string& dtype_family, const std::string& shape,
                       const MatchResult& r) {

  for (Tally* tl : {&by_family[r.family], &by_dtype[dtype_family]}) {
    ++tl->shapes;
    tl->identical += r.verdict == Verdict::kIdentical;
    tl->differ += r.verdict == Verdict::kDiffer;
    tl->tail_dropped += r.verdict == Verdict::kTailDropped;
    tl->no_desc += r.verdict == Verdict::kNoDesc;
    tl->refused += r.verdict == Verdict::kRefused;
    tl->map_hits += r.map_hit;
    tl->differ_at_hit += r.verdict == Verdict::kDiffer && r.map_hit;
    tl->kernel += r.path == "kernel";
    tl->reference += r.path == "reference";
    tl->ans_identical += r.answer_verdict == Verdict::kIdentical;
    tl->ans_differ += r.answer_verdict == Verdict::kDiffer;
    tl->ans_no_desc += r.answer_verdict == Verdict::kNoDesc;
  }
  if (r.answer_verdict == Verdict::kIdentical || r.answer_verdict == Verdict::kDiffer) {
    AlgoTally& at = by_algo[dtype_family + " " + r.answer_algo];
    ++at.compared;
    at.cls = r.answer_class;
    if (r.answer_verdict == Verdict::kDiffer && at.differ++ == 0) {
      at.example = shape + ": " + r.answer_detail;
    }
  } else if (r.answer_verdict == Verdict::kNoDesc) {
    AlgoTally& at = by_algo[dtype_family + " " + r.answer_algo];
    if (r.answer_class >= 0) at.cls = r.answer_class;
    if (at.no_desc++ == 0) at.no_desc_example = shape + ": " + r.answer_detail;
  }
}

void MatchTallies::merge(const MatchTallies& other) {
  auto add_all = [](std::map<std::string, Tally>& to, const std::map<std::string, Tally>& from) {
    for (const auto& [name, t] : from) {
      Tally src = t;
      std::vector<int64_t*> dst = fields(to[name]), add = fields(src);
      for (size_t i = 0; i < dst.size(); ++i) *dst[i] += *add[i];
    }
  };
  add_all(by_family, other.by_family);
  add_all(by_dtype, other.by_dtype);
  for (const auto& [algo, t] : other.by_algo) {
    AlgoTally& at = by_algo[algo];
    if (at.differ == 0 && t.differ > 0) at.example = t.example;
    if (at.no_desc == 0 && t.no_desc > 0) at.no_desc_example = t.no_desc_example;
    if (t.cls >= 0) at.cls = t.cls;
    at.compared += t.compared;
    at.differ += t.differ;
    at.no_desc += t.no_desc;
  }
  failures += other.failures;
  compiled += other.compiled;
  compile_s += other.compile_s;
}

std::string MatchTallies::to_text() const {
  std::string out = absl::StrFormat("run\t%d\t%d\t%.3f\n", failures, compiled, compile_s);
  auto tallies = [&](const char* kind, const std::map<std::string, Tally>& m) {
    for (const auto& [name, t] : m) {
      Tally c = t;
      std::vector<std::string> nums;
      for (int64_t* f : fields(c)) nums.push_back(absl::StrCat(*f));
      absl::StrAppend(&out, kind, "\t", flat(name), "\t", absl::StrJoin(nums, "\t"), "\n");
    }
  };
  tallies("family", by_family);
  tallies("dtype", by_dtype);
  for (const auto& [algo, t] : by_algo) {
    absl::StrAppend(&out, "algo\t", flat(algo), "\t", t.compared, "\t", t.differ, "\t", t.cls,
                    "\t", flat(t.example), "\t", t.no_desc, "\t", flat(t.no_desc_example), "\n");
  }
  return out;
}

absl::StatusOr<MatchTallies> parse_tallies(const std::string& text) {
  MatchTallies out;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    ++line_no;
    const std::vector<std::string> f = absl::StrSplit(line, '\t');
    auto bad = [&](const char* why) {
      return absl::InvalidArgumentError(
          absl::StrFormat("match tallies, line %d ('%s'): %s", line_no, line.substr(0, 80), why));
    };
    if (f[0] == "run") {
      if (f.size() != 4 || !absl::SimpleAtoi(f[1], &out.failures) ||
          !absl::SimpleAtoi(f[2], &out.compiled) || !absl::SimpleAtod(f[3], &out.compile_s)) {
        return bad("a run line is 'run<TAB>failures<TAB>compiled<TAB>compile seconds'");
      }
    } else if (f[0] == "family" || f[0] == "dtype") {
      Tally t;
      std::vector<int64_t*> dst = fields(t);
      if (f.size() != 2 + dst.size()) return bad("a tally line has a name and 13 counts");
      for (size_t i = 0; i < dst.size(); ++i) {
        if (!absl::SimpleAtoi(f[2 + i], dst[i]) || *dst[i] < 0) return bad("a count is not a number >= 0");
      }
      (f[0] == "family" ? out.by_family : out.by_dtype)[f[1]] = t;
    } else if (f[0] == "algo") {
      AlgoTally t;
      if (f.size() != 8 || !absl::SimpleAtoi(f[2], &t.compared) || !absl::SimpleAtoi(f[3], &t.differ) ||
          !absl::SimpleAtoi(f[4], &t.cls) || !absl::SimpleAtoi(f[6], &t.no_desc) ||
          t.compared < 0 || t.differ < 0 || t.no_desc < 0) {
        return bad("an algo line is 'algo<TAB>answer<TAB>compared<TAB>differ<TAB>class<TAB>example"
                   "<TAB>no_desc<TAB>no_desc example'");
      }
      t.example = f[5];
      t.no_desc_example = f[7];
      out.by_algo[f[1]] = t;
    } else {
      return bad("the kind is not run, family, dtype or algo");
    }
  }
  return out;
}

int64_t MatchTallies::differ() const {
  int64_t d = 0;
  for (const auto& [name, t] : by_dtype) d += t.ans_differ;
  return d;
}

int64_t MatchTallies::map_differ() const {
  int64_t d = 0;
  for (const auto& [name, t] : by_dtype) d += t.differ;
  return d;
}

void MatchTallies::print(int64_t show) const {
  std::printf("\n%-28s %7s %9s %9s %7s %10s %6s %8s %8s %9s %7s %7s | %8s %7s %7s %9s\n",
              "family", "shapes", "compared", "identical", "differ", "differ@hit", "tail",
              "no_desc", "refused", "match", "map_hit", "kernel", "ans_cmp", "ans_dif",
              "ans_nod", "ans_match");
  for (const auto& [name, t] : by_family) print_row(name, t);
  std::printf("\n");
  for (const auto& [name, t] : by_dtype) print_row(name + " (all)", t);
  // The answers whose descriptor gave other bits, most differences first.
  std::vector<std::pair<std::string, AlgoTally>> wrong;
  for (const auto& [algo, t] : by_algo)
    if (t.differ > 0) wrong.push_back({algo, t});
  std::stable_sort(wrong.begin(), wrong.end(),
                   [](const auto& x, const auto& y) { return x.second.differ > y.second.differ; });
  if (!wrong.empty()) std::printf("\nanswers whose descriptor differs (differ/compared, first shape):\n");
  for (size_t i = 0; i < wrong.size() && i < static_cast<size_t>(show); ++i) {
    std::printf("  %lld/%lld %s class %d\n      %s\n", static_cast<long long>(wrong[i].second.differ),
                static_cast<long long>(wrong[i].second.compared), wrong[i].first.c_str(),
                wrong[i].second.cls, wrong[i].second.example.substr(0, 400).c_str());
  }
  // The answers without a descriptor, most shapes first: what the scan has left.
  std::vector<std::pair<std::string, AlgoTally>> open = undescribed(by_algo);
  if (!open.empty()) std::printf("\nanswers without a descriptor (shapes, first shape: why):\n");
  for (const auto& [algo, t] : open) {
    std::printf("  %lld %s class %d\n      %s\n", static_cast<long long>(t.no_desc), algo.c_str(),
                t.cls, t.no_desc_example.substr(0, 300).c_str());
  }
}

std::vector<int> MatchTallies::differing_classes() const {
  std::set<int> cls;
  for (const auto& [algo, t] : by_algo) {
    if (t.differ > 0 && t.cls >= 0) cls.insert(t.cls);
  }
  return {cls.begin(), cls.end()};
}

std::vector<std::string> MatchTallies::differing_shapes() const {
  std::vector<std::string> out;
  for (const auto& [algo, t] : by_algo) {
    if (t.differ == 0) continue;
    if (std::optional<std::string> s = probe_at_form(t.example)) out.push_back(std::move(*s));
  }
  return out;
}

std::vector<std::string> MatchTallies::no_desc_shapes() const {
  std::vector<std::string> out;
  for (const auto& [algo, t] : undescribed(by_algo)) {
    if (std::optional<std::string> s = probe_at_form(t.no_desc_example)) out.push_back(std::move(*s));
  }
  return out;
}

}  // namespace fixbits::profile
