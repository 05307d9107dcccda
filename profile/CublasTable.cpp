// CublasTable: see CublasTable.h. Example of the text form (tabs shown as spaces):
//   fixbits-cublas-table 2
//   arch sm_90
//   class 0 f16:f16:nn id=66 split=0 reduction=none custom=0 inner=0
//         0@1x4x577/1,1@8x4x1023/1 - gemm{...} -                      (one line in the file)
//   class 1 f16:f16:nn id=66 split=1 reduction=compute_type custom=0 inner=0
//         2@1x1x701/3,5@16x1x704/3 split/64 gemm{...} -
//   variant 0 f16:f16:nn id=66 tile=10 split=0 ... 0 140
//   map f16:f16:nn m 1,2,3
//   map f16:f16:nn n 1,64
//   map f16:f16:nn kmax 524288
//   runs f16:f16:nn 0 0 1:0,701:2/3,1400:2/4
// The parser reads every line into the table, then checks the cross references.
#include "profile/CublasTable.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace fixbits::profile {
namespace {

absl::string_view av(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// Tabs and newlines would break the line format; notes and commands never need them.
std::string one_line(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  }
  return out.empty() ? "-" : out;
}

std::string join_ints(const std::vector<int64_t>& v) {
  return v.empty() ? "-" : absl::StrJoin(v, ",");
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

class LineError {
 public:
  explicit LineError(int line) : line_(line) {}
  absl::Status operator()(const std::string& why) const {
    return absl::InvalidArgumentError(
        absl::StrFormat("The cuBLAS table's line %d is malformed: %s.", line_, why));
  }

 private:
  int line_;
};

absl::StatusOr<int64_t> parse_int(std::string_view s, std::string_view field, const LineError& e) {
  int64_t v = 0;
  if (s.empty() || !absl::SimpleAtoi(av(s), &v)) {
    return e(absl::StrFormat("%s \"%s\" is not an integer", field, s));
  }
  return v;
}

absl::StatusOr<std::vector<int64_t>> parse_ints(std::string_view s, std::string_view field,
                                                const LineError& e) {
  std::vector<int64_t> out;
  if (s == "-") return out;
  for (absl::string_view piece : absl::StrSplit(av(s), ',')) {
    absl::StatusOr<int64_t> v = parse_int(std::string_view(piece.data(), piece.size()), field, e);
    if (!v.ok()) return v.status();
    out.push_back(*v);
  }
  return out;
}

// "<variant>@<M>x<N>x<K>/<P>"
std::string to_string(const ProbePoint& p) {
  return absl::StrFormat("%d@%dx%dx%d/%d", p.variant, p.m, p.n, p.k, p.splitk);
}

absl::StatusOr<ProbePoint> parse_probe_point(absl::string_view s, const LineError& e) {
  ProbePoint p;
  std::vector<absl::string_view> at = absl::StrSplit(s, '@');
  std::vector<absl::string_view> slash =
      at.size() == 2 ? absl::StrSplit(at[1], '/') : std::vector<absl::string_view>{};
  std::vector<absl::string_view> dims =
      slash.size() == 2 ? absl::StrSplit(slash[0], 'x') : std::vector<absl::string_view>{};
  if (dims.size() != 3 || !absl::SimpleAtoi(at[0], &p.variant) ||
      !absl::SimpleAtoi(dims[0], &p.m) || !absl::SimpleAtoi(dims[1], &p.n) ||
      !absl::SimpleAtoi(dims[2], &p.k) || !absl::SimpleAtoi(slash[1], &p.splitk) || p.m < 1 ||
      p.n < 1 || p.k < 1 || p.splitk < 1) {
    return e(absl::StrFormat("the probe \"%s\" is not <variant>@<M>x<N>x<K>/<split count>",
                             std::string(s)));
  }
  return p;
}

FamilyMap* map_of(CublasTable& t, std::string_view family) {
  for (FamilyMap& m : t.maps) {
    if (m.family == family) return &m;
  }
  FamilyMap m;
  m.family = std::string(family);
  t.maps.push_back(std::move(m));
  return &t.maps.back();
}

bool ascending(const std::vector<int64_t>& v) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] < 1 || (i > 0 && v[i] <= v[i - 1])) return false;
  }
  return true;
}

// Cross references of a fully read table.
absl::Status check_table(const CublasTable& t) {
  if (t.arch.empty()) return absl::InvalidArgumentError("The cuBLAS table has no arch line.");
  const int nv = static_cast<int>(t.variants.size());
  for (size_t i = 0; i < t.classes.size(); ++i) {
    const TableClass& c = t.classes[i];
    if (c.desc && c.rules.size() != c.desc->k_cuts.size()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "The cuBLAS table's class %d has %d span rules for a descriptor with %d cut levels.", i,
          c.rules.size(), c.desc->k_cuts.size()));
    }
    if ((!c.lanes_by_n.empty() || c.lane_tile_cap > 0) && c.desc &&
        c.desc->family != dsl::GemmFamily::kGemv) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "The cuBLAS table's class %d has a lane rule or tile cap but its descriptor is family "
          "%s; only gemv deals K to lanes.", i, dsl::family_name(c.desc->family)));
    }
    if (c.other) {
      if (c.layout == KLayout::kAny) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "The cuBLAS table's class %d has an other line but holds at any layout; only a "
            "class bound to one layout (layout@...) has a tree at the other.", i));
      }
      if (!c.other->desc.k_cuts.empty() || c.cls.values.split) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "The cuBLAS table's class %d has an other-layout descriptor with %d cut levels in a "
            "class with split=%d; it takes none, and no split (there are no span rules for it).",
            i, c.other->desc.k_cuts.size(), c.cls.values.split ? 1 : 0));
      }
      for (const ProbePoint& p : c.other->probes) {
        if (holds_at_layout(c, p.m, p.n)) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "The cuBLAS table's class %d has an other-layout probe at %dx%dx%d, where the K "
              "vectors are %s, its own layout.", i, p.m, p.n, p.k, layout_name(c.layout)));
        }
      }
    }
    if (c.layout != KLayout::kAny) {
      std::vector<ProbePoint> at = c.probes;
      for (const OpenProbe& o : c.open_probes) at.push_back(o.at);
      for (const ProbePoint& p : at) {
        if (!holds_at_layout(c, p.m, p.n)) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "The cuBLAS table's class %d holds only where the K vectors are %s, but its "
              "probe at %dx%dx%d is not there.", i, layout_name(c.layout), p.m, p.n, p.k));
        }
      }
    }
    for (size_t r = 0; r < c.rules.size(); ++r) {
      if (c.rules[r].kind == SpanRule::Kind::kSplit && (r > 0 || !c.cls.values.split)) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "The cuBLAS table's class %d has a split rule at cut level %d; only level 0 of a "
            "class with split=1 follows the split count.", i, r));
      }
    }
    if (find_map(t, c.family) == nullptr) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "The cuBLAS table's class %d names family %s, which has no map.", i, c.family));
    }
    std::vector<ProbePoint> points = c.probes;
    for (const OpenProbe& o : c.open_probes) points.push_back(o.at);
    if (c.other) points.insert(points.end(), c.other->probes.begin(), c.other->probes.end());
    for (const ProbePoint& p : points) {
      if (p.variant < 0 || p.variant >= nv || t.variants[p.variant].cls != static_cast<int>(i)) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "The cuBLAS table's class %d lists a probe of variant %d, which is not a variant of "
            "that class.", i, p.variant));
      }
      if ((p.splitk > 1) != c.cls.values.split) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "The cuBLAS table's class %d lists a probe with split count %d in a class with "
            "split=%d.", i, p.splitk, c.cls.values.split ? 1 : 0));
      }
    }
  }
  for (int i = 0; i < nv; ++i) {
    const TableVariant& v = t.variants[i];
    if (v.cls < 0 || v.cls >= static_cast<int>(t.classes.size()) ||
        t.classes[v.cls].family != v.family || !contains(t.classes[v.cls].cls, v.key)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "The cuBLAS table's variant %d (%s) names class %d, which is not a class of family %s "
          "that contains it.", i, to_string(v.key), v.cls, v.family));
    }
    for (const ProbePoint& p : v.seen) {
      if ((p.splitk > 1) != v.key.split) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "The cuBLAS table's variant %d (split=%d) has a seen point with split count %d.", i,
            v.key.split ? 1 : 0, p.splitk));
      }
    }
  }
  for (const FamilyMap& m : t.maps) {
    if (m.ms.empty() || m.ns.empty() || !ascending(m.ms) || !ascending(m.ns)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "The cuBLAS table's map of %s needs non-empty ascending positive m and n grids.",
          m.family));
    }
    if (m.runs.size() != m.ms.size() * m.ns.size()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "The cuBLAS table's map of %s has %d cells with runs; its grids make %d.", m.family,
          m.runs.size(), m.ms.size() * m.ns.size()));
    }
    for (size_t c = 0; c < m.runs.size(); ++c) {
      const auto& runs = m.runs[c];
      const size_t mi = c / m.ns.size(), ni = c % m.ns.size();
      if (runs.empty()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "The cuBLAS table's map of %s has no runs for cell (%d, %d).", m.family, mi, ni));
      }
      for (size_t r = 0; r < runs.size(); ++r) {
        const MapRun& run = runs[r];
        if (run.k0 < 1 || run.k0 > m.k_max || (r > 0 && run.k0 <= runs[r - 1].k0)) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "The cuBLAS table's map of %s, cell (%d, %d): run k0 %d is not ascending inside "
              "[1, kmax = %d].", m.family, mi, ni, run.k0, m.k_max));
        }
        if (run.variant == -1) continue;  // refused by the heuristic
        if (run.variant < 0 || run.variant >= nv || t.variants[run.variant].family != m.family) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "The cuBLAS table's map of %s, cell (%d, %d): variant index %d is not a variant of "
              "that family.", m.family, mi, ni, run.variant));
        }
        if (run.splitk < 1 || (run.splitk > 1) != t.variants[run.variant].key.split) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "The cuBLAS table's map of %s, cell (%d, %d): the run at k0 %d has split count %d "
              "for variant %d with split=%d (split variants need a count > 1, others 1).",
              m.family, mi, ni, run.k0, run.splitk, run.variant,
              t.variants[run.variant].key.split ? 1 : 0));
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string to_string(const SpanRule& r) {
  switch (r.kind) {
    case SpanRule::Kind::kFixed: return "fixed";
    case SpanRule::Kind::kWhole: return "whole";
    case SpanRule::Kind::kSplit:
      return r.aligned > 0 ? absl::StrFormat("split/%d/%d", r.granule, r.aligned)
                           : absl::StrFormat("split/%d", r.granule);
    case SpanRule::Kind::kParts: return absl::StrFormat("parts/%d", r.granule);
  }
  return "?";
}

absl::StatusOr<SpanRule> parse_span_rule(std::string_view text) {
  if (text == "fixed") return SpanRule{};
  if (text == "whole") return SpanRule{.kind = SpanRule::Kind::kWhole};
  SpanRule r{.kind = SpanRule::Kind::kSplit};
  if (text.substr(0, 6) == "parts/") {
    r.kind = SpanRule::Kind::kParts;
    if (!absl::SimpleAtoi(av(text.substr(6)), &r.granule) || r.granule < 2) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "The span rule \"%s\" is not parts/<c> with c >= 2.", text));
    }
    return r;
  }
  const std::string_view rest = text.substr(0, 6) == "split/" ? text.substr(6) : "";
  const size_t slash = rest.find('/');
  const bool ok =
      !rest.empty() && absl::SimpleAtoi(av(rest.substr(0, slash)), &r.granule) && r.granule >= 1 &&
      (slash == std::string_view::npos ||
       (absl::SimpleAtoi(av(rest.substr(slash + 1)), &r.aligned) && r.aligned > r.granule));
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "The span rule \"%s\" is not fixed, whole, split/<G> with G >= 1, split/<G>/<A> with "
        "A > G, or parts/<c> with c >= 2.", text));
  }
  return r;
}

int64_t apply_span_rule(const SpanRule& r, int64_t fixed_span, int64_t k, int64_t splitk) {
  switch (r.kind) {
    case SpanRule::Kind::kFixed: return fixed_span;
    case SpanRule::Kind::kWhole: return std::max<int64_t>(k, 1);
    case SpanRule::Kind::kSplit: {
      const int64_t g = r.aligned > 0 && k % r.aligned == 0 ? r.aligned : r.granule;
      return std::max<int64_t>(
          1, std::min(k, ceil_div(ceil_div(k, std::max<int64_t>(splitk, 1)), g) * g));
    }
    case SpanRule::Kind::kParts:
      return std::max<int64_t>(1, ceil_div(k, std::max<int64_t>(r.granule, 1)));
  }
  return fixed_span;
}

const std::vector<SpanRule>& split_rules() {
  static const std::vector<SpanRule>* rules = [] {
    auto* v = new std::vector<SpanRule>;
    for (int64_t g = 1024; g >= 1; g /= 2) {
      v->push_back(SpanRule{.kind = SpanRule::Kind::kSplit, .granule = g});
    }
    for (int64_t a = 2; a <= 1024; a *= 2) {
      for (int64_t g = a / 2; g >= 1; g /= 2) {
        v->push_back(SpanRule{.kind = SpanRule::Kind::kSplit, .granule = g, .aligned = a});
      }
    }
    return v;
  }();
  return *rules;
}

std::string to_string(const std::vector<LaneStep>& steps) {
  std::vector<std::string> parts;
  for (const LaneStep& st : steps) parts.push_back(absl::StrCat(st.n0, ":", st.lanes));
  return absl::StrCat("lanes@", absl::StrJoin(parts, ","));
}

absl::StatusOr<std::vector<LaneStep>> parse_lane_rule(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError(
        absl::StrFormat("The lane rule '%s' is malformed: %s.", text.substr(0, 80), why));
  };
  if (!text.starts_with("lanes@")) return bad("it must start with 'lanes@'");
  std::vector<LaneStep> steps;
  for (absl::string_view item : absl::StrSplit(av(text.substr(6)), ',')) {
    const std::vector<absl::string_view> nl = absl::StrSplit(item, ':');
    LaneStep st;
    if (nl.size() != 2 || !absl::SimpleAtoi(nl[0], &st.n0) || !absl::SimpleAtoi(nl[1], &st.lanes)) {
      return bad(absl::StrCat("step '", item, "' is not <n0>:<lanes>"));
    }
    if (st.lanes < 1 || st.lanes > 64) {
      return bad(absl::StrCat("step '", item, "' has a lane count outside [1, 64]"));
    }
    if (steps.empty() ? st.n0 != 1 : st.n0 <= steps.back().n0) {
      return bad(steps.empty() ? "the first step must start at n0 = 1"
                               : absl::StrCat("step '", item, "' does not ascend"));
    }
    steps.push_back(st);
  }
  return steps;
}

int lanes_at(const std::vector<LaneStep>& steps, int64_t n) {
  int lanes = 0;
  for (const LaneStep& st : steps) {
    if (st.n0 > n) break;
    lanes = st.lanes;
  }
  return lanes;
}

dsl::GemmDesc with_lanes(dsl::GemmDesc d, int lanes) {
  if (d.family != dsl::GemmFamily::kGemv || lanes < 1) return d;
  d.lanes = lanes;
  const int slots = dsl::lane_slots(lanes);
  std::vector<int> fold;
  for (int off : d.lane_fold)
    if (off < slots) fold.push_back(off);
  d.lane_fold = std::move(fold);
  return d;
}

int64_t gemv_range(const dsl::GemmDesc& d, int64_t k) {
  if (d.family != dsl::GemmFamily::kGemv || d.k_cuts.empty()) return k;
  return std::min(k, d.k_cuts[0].span);
}

int64_t gemv_run(const dsl::GemmDesc& d, int64_t k) {
  return (gemv_range(d, k) + d.lanes - 1) / d.lanes;
}

dsl::GemmDesc with_tile_cap(dsl::GemmDesc d, int64_t cap, int64_t k) {
  if (d.family != dsl::GemmFamily::kGemv || cap < 1) return d;
  const int64_t run = gemv_run(d, k);
  d.lane_layout = dsl::LaneLayout::kStrided;
  d.lane_tile = static_cast<int>(std::max<int64_t>(1, std::min(cap, run)));
  return d;
}

dsl::GemmDesc with_gemv_rules(dsl::GemmDesc d, const TableClass& c, int64_t n, int64_t k) {
  return with_tile_cap(with_lanes(std::move(d), lanes_at(c.lanes_by_n, n)), c.lane_tile_cap, k);
}

std::string write_table(const CublasTable& t) {
  std::string out = absl::StrFormat("fixbits-cublas-table\t%d\n", kTableVersion);
  absl::StrAppend(&out, "arch\t", one_line(t.arch), "\n");
  absl::StrAppend(&out, "library\t", one_line(t.library), "\n");
  absl::StrAppend(&out, "command\t", one_line(t.command), "\n");
  for (size_t i = 0; i < t.classes.size(); ++i) {
    const TableClass& c = t.classes[i];
    std::vector<std::string> rules, probes;
    for (const SpanRule& r : c.rules) rules.push_back(to_string(r));
    std::vector<std::string> gemv_rules;
    if (!c.lanes_by_n.empty()) gemv_rules.push_back(to_string(c.lanes_by_n));
    if (c.lane_tile_cap == kUncappedTile) {
      gemv_rules.push_back("tile@run");
    } else if (c.lane_tile_cap > 0) {
      gemv_rules.push_back(absl::StrCat("tile@", c.lane_tile_cap));
    }
    if (c.layout != KLayout::kAny) gemv_rules.push_back(absl::StrCat("layout@", layout_name(c.layout)));
    if (!gemv_rules.empty()) rules.push_back(absl::StrJoin(gemv_rules, ";"));
    for (const ProbePoint& p : c.probes) probes.push_back(to_string(p));
    absl::StrAppend(&out, absl::StrFormat(
        "class\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", i, c.family, to_string(c.cls),
        probes.empty() ? "-" : absl::StrJoin(probes, ","),
        rules.empty() ? "-" : absl::StrJoin(rules, ","), c.desc ? dsl::to_string(*c.desc) : "-",
        one_line(c.note)));
    for (const OpenProbe& o : c.open_probes) {
      absl::StrAppend(&out, absl::StrFormat("probed\t%d\t%s\t%s\n", i, to_string(o.at),
                                            dsl::to_string(o.desc)));
    }
    if (c.other) {
      std::vector<std::string> at;
      for (const ProbePoint& p : c.other->probes) at.push_back(to_string(p));
      absl::StrAppend(&out, absl::StrFormat("other\t%d\t%s\t%s\n", i, absl::StrJoin(at, ","),
                                            dsl::to_string(c.other->desc)));
    }
  }
  for (size_t i = 0; i < t.variants.size(); ++i) {
    const TableVariant& v = t.variants[i];
    absl::StrAppend(&out, absl::StrFormat("variant\t%d\t%s\t%s\t%d\t%d\n", i, v.family,
                                          to_string(v.key), v.cls, v.shapes));
    if (!v.seen.empty()) {
      std::vector<std::string> seen;
      for (const ProbePoint& p : v.seen) seen.push_back(to_string(p));
      absl::StrAppend(&out, absl::StrFormat("seen\t%d\t%s\n", i, absl::StrJoin(seen, ",")));
    }
  }
  for (const FamilyMap& m : t.maps) {
    absl::StrAppend(&out, "map\t", m.family, "\tm\t", join_ints(m.ms), "\n");
    absl::StrAppend(&out, "map\t", m.family, "\tn\t", join_ints(m.ns), "\n");
    absl::StrAppend(&out, "map\t", m.family, "\tkmax\t", m.k_max, "\n");
    if (!m.refusal.empty()) {
      absl::StrAppend(&out, "map\t", m.family, "\trefusal\t", one_line(m.refusal), "\n");
    }
    for (size_t c = 0; c < m.runs.size(); ++c) {
      std::vector<std::string> runs;
      for (const MapRun& r : m.runs[c]) {
        runs.push_back(r.splitk > 1 ? absl::StrCat(r.k0, ":", r.variant, "/", r.splitk)
                                    : absl::StrCat(r.k0, ":", r.variant));
      }
      absl::StrAppend(&out, "runs\t", m.family, "\t", c / m.ns.size(), "\t", c % m.ns.size(), "\t",
                      absl::StrJoin(runs, ","), "\n");
    }
  }
  return out;
}

absl::StatusOr<CublasTable> parse_table(std::string_view text) {
  CublasTable t;
  int line_no = 0;
  bool header = false;
  // Runs may only be placed once both grids of their family are known.
  struct PendingRuns {
    std::string family;
    int64_t mi, ni;
    std::vector<MapRun> runs;
    int line;
  };
  std::vector<PendingRuns> pending;
  for (absl::string_view raw : absl::StrSplit(av(text), '\n')) {
    ++line_no;
    const LineError err(line_no);
    std::string_view line(raw.data(), raw.size());
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    std::vector<std::string_view> f;
    for (absl::string_view p : absl::StrSplit(av(line), '\t')) f.emplace_back(p.data(), p.size());
    if (!header) {
      if (f.size() == 2 && f[0] == "fixbits-cublas-table" && f[1] != "2") {
        return absl::FailedPreconditionError(absl::StrFormat(
            "The cuBLAS table is format version %s; this build reads version %d (classes of "
            "answers, split counts per shape). Version 1 tables (one key per full answer) "
            "cannot be converted: rescan with fixbits-cublas-scan (docs/cublas.md).", f[1],
            kTableVersion));
      }
      if (f.size() != 2 || f[0] != "fixbits-cublas-table") {
        return err("the first line must be \"fixbits-cublas-table<TAB>2\"");
      }
      header = true;
      continue;
    }
    const std::string_view kind = f[0];
    // A line that follows its class's ("probed", "other"): 4 fields, the class it names.
    auto class_named = [&](std::string_view what) -> absl::StatusOr<TableClass*> {
      if (f.size() != 4) return err(absl::StrFormat("%s line has 4 fields, not %d", what, f.size()));
      absl::StatusOr<int64_t> index = parse_int(f[1], "the class index", err);
      if (!index.ok()) return index.status();
      if (*index < 0 || *index >= static_cast<int64_t>(t.classes.size())) {
        return err(absl::StrFormat("%s line names class %d before its class line", what, *index));
      }
      return &t.classes[static_cast<size_t>(*index)];
    };
    if (kind == "arch" || kind == "library" || kind == "command") {
      if (f.size() != 2) return err(absl::StrFormat("a %s line has one value", kind));
      std::string& dst = kind == "arch" ? t.arch : kind == "library" ? t.library : t.command;
      dst = f[1] == "-" ? "" : std::string(f[1]);
    } else if (kind == "class") {
      if (f.size() != 8) return err(absl::StrFormat("a class line has 8 fields, not %d", f.size()));
      absl::StatusOr<int64_t> index = parse_int(f[1], "the class index", err);
      if (!index.ok()) return index.status();
      if (*index != static_cast<int64_t>(t.classes.size())) {
        return err(absl::StrFormat("class index %d is out of order (expected %d)", *index,
                                   t.classes.size()));
      }
      TableClass c;
      c.family = std::string(f[2]);
      if (absl::Status s = parse_family(c.family).status(); !s.ok()) {
        return err(std::string(s.message()));
      }
      absl::StatusOr<CublasClass> cls = parse_cublas_class(f[3]);
      if (!cls.ok()) return err(std::string(cls.status().message()));
      c.cls = *cls;
      if (f[4] != "-") {
        for (absl::string_view p : absl::StrSplit(av(f[4]), ',')) {
          absl::StatusOr<ProbePoint> point = parse_probe_point(p, err);
          if (!point.ok()) return point.status();
          c.probes.push_back(*point);
        }
      }
      // The rules column: span rules joined by ',', then one group of gemv rules and the
      // layout joined by ';' -- a lane rule holds commas of its own, so the group is
      // everything from the first "lanes@" / "tile@" / "layout@" item on. A split gemv
      // class has both.
      std::string_view span_part = f[5] == "-" ? std::string_view() : std::string_view(f[5]);
      std::string_view gemv_part;
      for (size_t at = 0; at < span_part.size();) {
        const std::string_view rest = span_part.substr(at);
        if (rest.starts_with("lanes@") || rest.starts_with("tile@") ||
            rest.starts_with("layout@")) {
          gemv_part = rest;
          span_part = span_part.substr(0, at == 0 ? 0 : at - 1);
          break;
        }
        const size_t comma = span_part.find(',', at);
        if (comma == std::string_view::npos) break;
        at = comma + 1;
      }
      if (!gemv_part.empty()) {
        for (absl::string_view item : absl::StrSplit(av(gemv_part), ';')) {
          const std::string_view it(item.data(), item.size());
          if (it.starts_with("lanes@") && c.lanes_by_n.empty()) {
            absl::StatusOr<std::vector<LaneStep>> steps = parse_lane_rule(it);
            if (!steps.ok()) return err(std::string(steps.status().message()));
            c.lanes_by_n = *std::move(steps);
          } else if (it == "tile@run" && c.lane_tile_cap == 0) {
            c.lane_tile_cap = kUncappedTile;
          } else if (it.starts_with("tile@") && c.lane_tile_cap == 0) {
            if (!absl::SimpleAtoi(av(it.substr(5)), &c.lane_tile_cap) || c.lane_tile_cap < 1 ||
                c.lane_tile_cap >= kUncappedTile) {
              return err(absl::StrFormat(
                  "the tile cap '%s' is not tile@<C> with 1 <= C < 2^30, or tile@run", it));
            }
          } else if ((it == "layout@contiguous" || it == "layout@strided") &&
                     c.layout == KLayout::kAny) {
            c.layout = it == "layout@contiguous" ? KLayout::kContiguous : KLayout::kStrided;
          } else {
            return err(absl::StrFormat(
                "the rule '%s' is not lanes@..., tile@<C>, tile@run, layout@contiguous or "
                "layout@strided (each at most once, joined by ';', after the span rules)",
                it));
          }
        }
      }
      if (!span_part.empty()) {
        for (absl::string_view r : absl::StrSplit(av(span_part), ',')) {
          absl::StatusOr<SpanRule> rule = parse_span_rule(std::string_view(r.data(), r.size()));
          if (!rule.ok()) return err(std::string(rule.status().message()));
          c.rules.push_back(*rule);
        }
      }
      if (f[6] != "-") {
        absl::StatusOr<dsl::GemmDesc> d = dsl::parse_gemm_desc(f[6]);
        if (!d.ok()) return err(std::string(d.status().message()));
        c.desc = *d;
        if (c.probes.empty()) return err("a class with a descriptor lists no probe");
      }
      c.note = f[7] == "-" ? "" : std::string(f[7]);
      t.classes.push_back(std::move(c));
    } else if (kind == "probed") {
      absl::StatusOr<TableClass*> named = class_named("a probed");
      if (!named.ok()) return named.status();
      TableClass& c = **named;
      if (c.desc) {
        return err(absl::StrFormat("a probed line for class %s, which has a descriptor", f[1]));
      }
      absl::StatusOr<ProbePoint> point = parse_probe_point(av(f[2]), err);
      if (!point.ok()) return point.status();
      absl::StatusOr<dsl::GemmDesc> d = dsl::parse_gemm_desc(f[3]);
      if (!d.ok()) return err(std::string(d.status().message()));
      c.open_probes.push_back(OpenProbe{*point, *d});
    } else if (kind == "other") {
      absl::StatusOr<TableClass*> named = class_named("an other");
      if (!named.ok()) return named.status();
      TableClass& c = **named;
      if (c.other) return err(absl::StrFormat("class %s has a second other line", f[1]));
      OtherLayout o;
      for (absl::string_view p : absl::StrSplit(av(f[2]), ',')) {
        absl::StatusOr<ProbePoint> point = parse_probe_point(p, err);
        if (!point.ok()) return point.status();
        o.probes.push_back(*point);
      }
      absl::StatusOr<dsl::GemmDesc> d = dsl::parse_gemm_desc(f[3]);
      if (!d.ok()) return err(std::string(d.status().message()));
      o.desc = *d;
      c.other = std::move(o);
    } else if (kind == "variant") {
      if (f.size() != 6) {
        return err(absl::StrFormat("a variant line has 6 fields, not %d", f.size()));
      }
      absl::StatusOr<int64_t> index = parse_int(f[1], "the variant index", err);
      if (!index.ok()) return index.status();
      if (*index != static_cast<int64_t>(t.variants.size())) {
        return err(absl::StrFormat("variant index %d is out of order (expected %d)", *index,
                                   t.variants.size()));
      }
      TableVariant v;
      v.family = std::string(f[2]);
      absl::StatusOr<CublasKey> key = parse_cublas_key(f[3]);
      if (!key.ok()) return err(std::string(key.status().message()));
      v.key = *key;
      absl::StatusOr<int64_t> cls = parse_int(f[4], "the class index", err);
      if (!cls.ok()) return cls.status();
      absl::StatusOr<int64_t> shapes = parse_int(f[5], "the shape count", err);
      if (!shapes.ok()) return shapes.status();
      v.cls = static_cast<int>(*cls);
      v.shapes = *shapes;
      t.variants.push_back(std::move(v));
    } else if (kind == "seen") {
      if (f.size() != 3) return err(absl::StrFormat("a seen line has 3 fields, not %d", f.size()));
      absl::StatusOr<int64_t> index = parse_int(f[1], "the variant index", err);
      if (!index.ok()) return index.status();
      if (*index < 0 || *index >= static_cast<int64_t>(t.variants.size())) {
        return err(absl::StrFormat("a seen line names variant %d before its variant line", *index));
      }
      TableVariant& v = t.variants[static_cast<size_t>(*index)];
      if (!v.seen.empty()) return err(absl::StrFormat("variant %d has a second seen line", *index));
      for (absl::string_view p : absl::StrSplit(av(f[2]), ',')) {
        absl::StatusOr<ProbePoint> point = parse_probe_point(p, err);
        if (!point.ok()) return point.status();
        if (point->variant != *index) {
          return err(absl::StrFormat("the seen point %s of variant %d names variant %d",
                                     std::string(p), *index, point->variant));
        }
        v.seen.push_back(*point);
      }
    } else if (kind == "map") {
      if (f.size() != 4) return err("a map line has 4 fields");
      FamilyMap* m = map_of(t, f[1]);
      if (f[2] == "kmax") {
        absl::StatusOr<int64_t> v = parse_int(f[3], "kmax", err);
        if (!v.ok()) return v.status();
        m->k_max = *v;
      } else if (f[2] == "refusal") {
        m->refusal = std::string(f[3]);
      } else if (f[2] == "m" || f[2] == "n") {
        absl::StatusOr<std::vector<int64_t>> v = parse_ints(f[3], "a grid value", err);
        if (!v.ok()) return v.status();
        (f[2] == "m" ? m->ms : m->ns) = *v;
      } else {
        return err(absl::StrFormat("a map line's field is m, n, kmax or refusal, not \"%s\"",
                                   f[2]));
      }
    } else if (kind == "runs") {
      if (f.size() != 5) return err("a runs line has 5 fields");
      PendingRuns p;
      p.family = std::string(f[1]);
      p.line = line_no;
      absl::StatusOr<int64_t> mi = parse_int(f[2], "the m index", err);
      if (!mi.ok()) return mi.status();
      absl::StatusOr<int64_t> ni = parse_int(f[3], "the n index", err);
      if (!ni.ok()) return ni.status();
      p.mi = *mi;
      p.ni = *ni;
      for (absl::string_view run : absl::StrSplit(av(f[4]), ',')) {
        std::vector<absl::string_view> kv = absl::StrSplit(run, ':');
        std::vector<absl::string_view> vs =
            kv.size() == 2 ? absl::StrSplit(kv[1], '/') : std::vector<absl::string_view>{};
        MapRun r;
        if (vs.empty() || vs.size() > 2 || !absl::SimpleAtoi(kv[0], &r.k0) ||
            !absl::SimpleAtoi(vs[0], &r.variant) ||
            (vs.size() == 2 && !absl::SimpleAtoi(vs[1], &r.splitk))) {
          return err(absl::StrFormat("the run \"%s\" is not <k0>:<variant>[/<split count>]",
                                     std::string(run)));
        }
        p.runs.push_back(r);
      }
      pending.push_back(std::move(p));
    } else {
      return err(absl::StrFormat(
          "\"%s\" is no line kind (arch, library, command, class, variant, map, runs)", kind));
    }
  }
  if (!header) return absl::InvalidArgumentError("The cuBLAS table is empty.");
  for (FamilyMap& m : t.maps) m.runs.assign(m.ms.size() * m.ns.size(), {});
  for (PendingRuns& p : pending) {
    FamilyMap* m = map_of(t, p.family);
    const LineError err(p.line);
    if (p.mi < 0 || p.ni < 0 || p.mi >= static_cast<int64_t>(m->ms.size()) ||
        p.ni >= static_cast<int64_t>(m->ns.size())) {
      return err(absl::StrFormat("cell (%d, %d) is outside the %d x %d grid of %s", p.mi, p.ni,
                                 m->ms.size(), m->ns.size(), p.family));
    }
    auto& cell = m->runs[p.mi * m->ns.size() + p.ni];
    if (!cell.empty()) {
      return err(absl::StrFormat("cell (%d, %d) of %s is given twice", p.mi, p.ni, p.family));
    }
    cell = std::move(p.runs);
  }
  if (absl::Status s = check_table(t); !s.ok()) return s;
  return t;
}

const FamilyMap* find_map(const CublasTable& t, std::string_view family) {
  for (const FamilyMap& m : t.maps) {
    if (m.family == family) return &m;
  }
  return nullptr;
}

int find_variant(const CublasTable& t, std::string_view family, const CublasKey& key) {
  for (size_t i = 0; i < t.variants.size(); ++i) {
    if (t.variants[i].family == family && t.variants[i].key == key) return static_cast<int>(i);
  }
  return -1;
}

int64_t class_shapes(const CublasTable& t, int cls) {
  int64_t n = 0;
  for (const TableVariant& v : t.variants) {
    if (v.cls == cls) n += v.shapes;
  }
  return n;
}

absl::StatusOr<MapRun> lookup_run(const CublasTable& t, const runtime::GemmShape& s) {
  const std::string family = family_of(s);
  const FamilyMap* m = find_map(t, family);
  if (m == nullptr) {
    std::vector<std::string> have;
    for (const FamilyMap& x : t.maps) have.push_back(x.family);
    return absl::NotFoundError(absl::StrFormat(
        "The cuBLAS table for %s has no problem family %s (the GemmShape's dtypes and layout); "
        "it holds %s.", t.arch, family, have.empty() ? "none" : absl::StrJoin(have, ", ")));
  }
  auto out_of_range = [&](const char* field, int64_t v, int64_t lo, int64_t hi) {
    return absl::OutOfRangeError(absl::StrFormat(
        "GemmShape.%s = %d is outside the scanned range [%d, %d] of the cuBLAS table for %s, "
        "family %s.", field, v, lo, hi, t.arch, family));
  };
  if (s.m < m->ms.front() || s.m > m->ms.back()) {
    return out_of_range("m", s.m, m->ms.front(), m->ms.back());
  }
  if (s.n < m->ns.front() || s.n > m->ns.back()) {
    return out_of_range("n", s.n, m->ns.front(), m->ns.back());
  }
  const size_t mi = std::upper_bound(m->ms.begin(), m->ms.end(), s.m) - m->ms.begin() - 1;
  const size_t ni = std::upper_bound(m->ns.begin(), m->ns.end(), s.n) - m->ns.begin() - 1;
  const size_t cell = mi * m->ns.size() + ni;
  if (cell >= m->runs.size() || m->runs[cell].empty()) {
    return absl::InternalError(absl::StrFormat(
        "The cuBLAS table's map of %s breaks its invariant: cell (%d, %d) has no K runs.",
        family, mi, ni));
  }
  const auto& runs = m->runs[cell];
  if (s.k < runs.front().k0 || s.k > m->k_max) {
    return out_of_range("k", s.k, runs.front().k0, m->k_max);
  }
  MapRun run = runs.front();
  for (const MapRun& r : runs) {
    if (r.k0 > s.k) break;
    run = r;
  }
  if (run.variant >= static_cast<int>(t.variants.size())) {
    return absl::InternalError(absl::StrFormat(
        "The cuBLAS table's map of %s breaks its invariant: variant index %d of %d variants.",
        family, run.variant, t.variants.size()));
  }
  if (run.variant < 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "cuBLASLt's heuristic refused the scanned shapes of family %s around %dx%dx%d when the "
        "table for %s was made (%s), so the table has no variant for them.", family, s.m, s.n,
        s.k, t.arch, m->refusal.empty() ? "no message kept" : m->refusal));
  }
  return run;
}

bool dot_contiguous(const runtime::GemmShape& s) {
  return (s.a_row_major || s.m == 1) && (!s.b_row_major || s.n == 1);
}

bool dot_contiguous(const std::string& family, int64_t m, int64_t n) {
  absl::StatusOr<runtime::GemmShape> at = parse_family(family);
  if (!at.ok()) return false;
  at->m = m;
  at->n = n;
  return dot_contiguous(*at);
}

KLayout layout_at(const runtime::GemmShape& s) {
  return dot_contiguous(s) ? KLayout::kContiguous : KLayout::kStrided;
}

KLayout layout_at(const std::string& family, int64_t m, int64_t n) {
  return dot_contiguous(family, m, n) ? KLayout::kContiguous : KLayout::kStrided;
}

const char* layout_name(KLayout l) {
  return l == KLayout::kContiguous ? "contiguous" : l == KLayout::kStrided ? "strided" : "any";
}

bool holds_at_layout(const TableClass& c, int64_t m, int64_t n) {
  return c.layout == KLayout::kAny || layout_at(c.family, m, n) == c.layout;
}

dsl::GemmDesc dot_at_shape(dsl::GemmDesc d, const runtime::GemmShape& s, uint32_t splitk) {
  if (d.family != dsl::GemmFamily::kDot) return d;
  d.blocks = splitk;
  if (!dot_contiguous(s)) d.lane_tile = 1;
  return d;
}

absl::StatusOr<dsl::GemmDesc> desc_for(const TableClass& c, const runtime::GemmShape& s,
                                       uint32_t splitk) {
  if (!c.desc) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "The cuBLAS class %s of family %s has no validated descriptor: %s.", to_string(c.cls),
        c.family, c.note.empty() ? "it was not probed" : c.note));
  }
  if (s.k < 1) {
    return absl::InvalidArgumentError(absl::StrFormat("GemmShape.k is %d; it must be >= 1.", s.k));
  }
  if (splitk < 1 || (splitk > 1) != c.cls.values.split) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "The split count %d does not fit the cuBLAS class %s (split=%d needs %s).", splitk,
        to_string(c.cls), c.cls.values.split ? 1 : 0, c.cls.values.split ? "a count > 1" : "1"));
  }
  dsl::GemmDesc d = *c.desc;
  if (d.family == dsl::GemmFamily::kDot && !c.probes.empty() && dot_contiguous(s) &&
      !dot_contiguous(c.family, c.probes[0].m, c.probes[0].n)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "The cuBLAS class %s of family %s is the dot path, probed only where an operand "
        "is strided (%dx%d): its threads' tile where both are contiguous is unknown.",
        to_string(c.cls), c.family, c.probes[0].m, c.probes[0].n));
  }
  if (const KLayout here = layout_at(s); c.layout != KLayout::kAny && here != c.layout &&
                                         c.other) {
    // The other layout's tree holds at any K as it stands (no cuts: check_table).
    if (absl::Status v = dsl::validate(c.other->desc); !v.ok()) {
      return absl::InternalError(absl::StrFormat(
          "The cuBLAS class %s's descriptor where the K vectors are %s is invalid: %s",
          to_string(c.cls), layout_name(here), v.message()));
    }
    return c.other->desc;
  }
  if (const KLayout here = layout_at(s); c.layout != KLayout::kAny && here != c.layout) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "The cuBLAS class %s of family %s has a descriptor only where the K vectors are %s "
        "(its probes); at %dx%d they are %s, where cuBLAS's kernel computes another tree: %s.",
        to_string(c.cls), c.family, layout_name(c.layout), s.m, s.n, layout_name(here), c.note));
  }
  if (c.rules.size() != d.k_cuts.size()) {
    return absl::InternalError(absl::StrFormat(
        "The cuBLAS class %s breaks its invariant: %d span rules for %d cut levels.",
        to_string(c.cls), c.rules.size(), d.k_cuts.size()));
  }
  for (size_t i = 0; i < d.k_cuts.size(); ++i) {
    d.k_cuts[i].span = apply_span_rule(c.rules[i], d.k_cuts[i].span, s.k, splitk);
    // An inner level at least as long as the part it cuts has one part there: the
    // same tree as a level of exactly that span.
    if (i > 0) d.k_cuts[i].span = std::min(d.k_cuts[i].span, d.k_cuts[i - 1].span);
  }
  d = with_gemv_rules(std::move(d), c, s.n, s.k);
  d = dot_at_shape(std::move(d), s, splitk);
  if (absl::Status v = dsl::validate(d); !v.ok()) {
    return absl::InternalError(absl::StrFormat(
        "The cuBLAS class %s carried to K = %d, split count %d gives an invalid descriptor: %s",
        to_string(c.cls), s.k, splitk, v.message()));
  }
  return d;
}

absl::StatusOr<dsl::GemmDesc> lookup(const CublasTable& t, const runtime::GemmShape& s) {
  absl::StatusOr<MapRun> run = lookup_run(t, s);
  if (!run.ok()) return run.status();
  return desc_for(t.classes[t.variants[run->variant].cls], s, run->splitk);
}

absl::StatusOr<int> class_of_answer(const CublasTable& t, const runtime::GemmShape& s,
                                    const CublasKey& key) {
  const std::string family = family_of(s);
  if (int v = find_variant(t, family, key); v >= 0) return t.variants[v].cls;
  int found = -1;
  for (size_t c = 0; c < t.classes.size(); ++c) {
    const TableClass& tc = t.classes[c];
    if (tc.family != family || !contains(tc.cls, key)) continue;
    if (found >= 0) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "cuBLASLt's answer {%s} for %s is no variant of the table and fits two of its "
          "classes ({%s} and {%s}); it was never scanned, so which one it runs is not known.",
          to_string(key), runtime::to_string(s), to_string(t.classes[found].cls),
          to_string(tc.cls)));
    }
    found = static_cast<int>(c);
  }
  if (found < 0) {
    return absl::NotFoundError(absl::StrFormat(
        "cuBLASLt's answer {%s} for %s is no variant and in no class of the table's family %s.",
        to_string(key), runtime::to_string(s), family));
  }
  return found;
}

absl::StatusOr<dsl::GemmDesc> lookup_answer(const CublasTable& t, const runtime::GemmShape& s,
                                            const CublasAnswer& answer) {
  absl::StatusOr<int> c = class_of_answer(t, s, answer.key);
  if (!c.ok()) return c.status();
  return desc_for(t.classes[*c], s, answer.splitk);
}

}  // namespace fixbits::profile
