// CublasTable: see CublasTable.h. Example of the text form (tabs shown as spaces):
//   fixbits-cublas-table 1
//   arch sm_90
//   key 0 f16:f16:nn id=21 tile=18 splitk=3 ... 1x4096x576 140 576,1000 split3/64 gemm{...} -
//   map f16:f16:nn m 1,2,3
//   map f16:f16:nn n 1,64
//   map f16:f16:nn kmax 524288
//   runs f16:f16:nn 0 0 1:1,577:0
// The parser reads every line into the table, then checks the cross references.
#include "profile/CublasTable.h"

#include <algorithm>

#include "absl/strings/numbers.h"
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

FamilyMap* map_of(CublasTable& t, std::string_view family) {
  for (FamilyMap& m : t.maps) {
    if (m.family == family) return &m;
  }
  t.maps.push_back(FamilyMap{.family = std::string(family)});
  return &t.maps.back();
}

const FamilyMap* find_map(const CublasTable& t, std::string_view family) {
  for (const FamilyMap& m : t.maps) {
    if (m.family == family) return &m;
  }
  return nullptr;
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
  for (size_t i = 0; i < t.keys.size(); ++i) {
    const TableKey& k = t.keys[i];
    if (k.desc && k.rules.size() != k.desc->k_cuts.size()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "The cuBLAS table's key %d has %d span rules for a descriptor with %d cut levels.", i,
          k.rules.size(), k.desc->k_cuts.size()));
    }
    if (find_map(t, k.family) == nullptr) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "The cuBLAS table's key %d names family %s, which has no map.", i, k.family));
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
      if (runs.empty()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "The cuBLAS table's map of %s has no runs for cell (%d, %d).", m.family,
            c / m.ns.size(), c % m.ns.size()));
      }
      for (size_t r = 0; r < runs.size(); ++r) {
        const auto [k0, key] = runs[r];
        if (k0 < 1 || k0 > m.k_max || (r > 0 && k0 <= runs[r - 1].first)) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "The cuBLAS table's map of %s, cell (%d, %d): run k0 %d is not ascending inside "
              "[1, kmax = %d].", m.family, c / m.ns.size(), c % m.ns.size(), k0, m.k_max));
        }
        if (key == -1) continue;  // refused by the heuristic
        if (key < 0 || key >= static_cast<int>(t.keys.size()) ||
            t.keys[key].family != m.family) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "The cuBLAS table's map of %s, cell (%d, %d): key index %d is not a key of that "
              "family.", m.family, c / m.ns.size(), c % m.ns.size(), key));
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
    case SpanRule::Kind::kSplit: return absl::StrFormat("split%d/%d", r.parts, r.granule);
  }
  return "?";
}

absl::StatusOr<SpanRule> parse_span_rule(std::string_view text) {
  if (text == "fixed") return SpanRule{};
  if (text == "whole") return SpanRule{.kind = SpanRule::Kind::kWhole};
  SpanRule r{.kind = SpanRule::Kind::kSplit};
  std::vector<absl::string_view> pg;
  if (text.substr(0, 5) == "split") pg = absl::StrSplit(av(text.substr(5)), '/');
  if (pg.size() != 2 || !absl::SimpleAtoi(pg[0], &r.parts) ||
      !absl::SimpleAtoi(pg[1], &r.granule) || r.parts < 1 || r.granule < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "The span rule \"%s\" is not fixed, whole or split<P>/<G> with P, G >= 1.", text));
  }
  return r;
}

int64_t apply_span_rule(const SpanRule& r, int64_t fixed_span, int64_t k) {
  switch (r.kind) {
    case SpanRule::Kind::kFixed: return fixed_span;
    case SpanRule::Kind::kWhole: return std::max<int64_t>(k, 1);
    case SpanRule::Kind::kSplit:
      return std::max<int64_t>(
          1, std::min(k, ceil_div(ceil_div(k, r.parts), r.granule) * r.granule));
  }
  return fixed_span;
}

std::string write_table(const CublasTable& t) {
  std::string out = "fixbits-cublas-table\t1\n";
  absl::StrAppend(&out, "arch\t", one_line(t.arch), "\n");
  absl::StrAppend(&out, "library\t", one_line(t.library), "\n");
  absl::StrAppend(&out, "command\t", one_line(t.command), "\n");
  for (size_t i = 0; i < t.keys.size(); ++i) {
    const TableKey& k = t.keys[i];
    std::vector<std::string> rules;
    for (const SpanRule& r : k.rules) rules.push_back(to_string(r));
    absl::StrAppend(&out, absl::StrFormat(
        "key\t%d\t%s\t%s\t%dx%dx%d\t%d\t%s\t%s\t%s\t%s\n", i, k.family, to_string(k.key), k.m,
        k.n, k.k, k.shapes, join_ints(k.probed_k), rules.empty() ? "-" : absl::StrJoin(rules, ","),
        k.desc ? dsl::to_string(*k.desc) : "-", one_line(k.note)));
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
      for (const auto& [k0, key] : m.runs[c]) runs.push_back(absl::StrCat(k0, ":", key));
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
    std::vector<std::pair<int64_t, int>> runs;
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
      if (f.size() != 2 || f[0] != "fixbits-cublas-table" || f[1] != "1") {
        return err("the first line must be \"fixbits-cublas-table<TAB>1\"");
      }
      header = true;
      continue;
    }
    const std::string_view kind = f[0];
    if (kind == "arch" || kind == "library" || kind == "command") {
      if (f.size() != 2) return err(absl::StrFormat("a %s line has one value", kind));
      std::string& dst = kind == "arch" ? t.arch : kind == "library" ? t.library : t.command;
      dst = f[1] == "-" ? "" : std::string(f[1]);
    } else if (kind == "key") {
      if (f.size() != 10) return err(absl::StrFormat("a key line has 10 fields, not %d", f.size()));
      absl::StatusOr<int64_t> index = parse_int(f[1], "the key index", err);
      if (!index.ok()) return index.status();
      if (*index != static_cast<int64_t>(t.keys.size())) {
        return err(absl::StrFormat("key index %d is out of order (expected %d)", *index,
                                   t.keys.size()));
      }
      TableKey k;
      k.family = std::string(f[2]);
      if (absl::Status s = parse_family(k.family).status(); !s.ok()) return err(std::string(s.message()));
      absl::StatusOr<CublasKey> key = parse_cublas_key(f[3]);
      if (!key.ok()) return err(std::string(key.status().message()));
      k.key = *key;
      std::vector<absl::string_view> dims = absl::StrSplit(av(f[4]), 'x');
      if (dims.size() != 3 || !absl::SimpleAtoi(dims[0], &k.m) || !absl::SimpleAtoi(dims[1], &k.n) ||
          !absl::SimpleAtoi(dims[2], &k.k) || k.m < 1 || k.n < 1 || k.k < 1) {
        return err(absl::StrFormat("the representative shape \"%s\" is not MxNxK", f[4]));
      }
      absl::StatusOr<int64_t> shapes = parse_int(f[5], "the shape count", err);
      if (!shapes.ok()) return shapes.status();
      k.shapes = *shapes;
      absl::StatusOr<std::vector<int64_t>> probed = parse_ints(f[6], "a probed K", err);
      if (!probed.ok()) return probed.status();
      k.probed_k = *probed;
      if (f[7] != "-") {
        for (absl::string_view r : absl::StrSplit(av(f[7]), ',')) {
          absl::StatusOr<SpanRule> rule = parse_span_rule(std::string_view(r.data(), r.size()));
          if (!rule.ok()) return err(std::string(rule.status().message()));
          k.rules.push_back(*rule);
        }
      }
      if (f[8] != "-") {
        absl::StatusOr<dsl::GemmDesc> d = dsl::parse_gemm_desc(f[8]);
        if (!d.ok()) return err(std::string(d.status().message()));
        k.desc = *d;
      }
      k.note = f[9] == "-" ? "" : std::string(f[9]);
      t.keys.push_back(std::move(k));
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
        return err(absl::StrFormat("a map line's field is m, n, kmax or refusal, not \"%s\"", f[2]));
      }
    } else if (kind == "runs") {
      if (f.size() != 5) return err("a runs line has 5 fields");
      PendingRuns p{.family = std::string(f[1]), .line = line_no};
      absl::StatusOr<int64_t> mi = parse_int(f[2], "the m index", err);
      if (!mi.ok()) return mi.status();
      absl::StatusOr<int64_t> ni = parse_int(f[3], "the n index", err);
      if (!ni.ok()) return ni.status();
      p.mi = *mi;
      p.ni = *ni;
      for (absl::string_view run : absl::StrSplit(av(f[4]), ',')) {
        std::vector<absl::string_view> kv = absl::StrSplit(run, ':');
        int64_t k0 = 0;
        int key = 0;
        if (kv.size() != 2 || !absl::SimpleAtoi(kv[0], &k0) || !absl::SimpleAtoi(kv[1], &key)) {
          return err(absl::StrFormat("the run \"%s\" is not <k0>:<key index>", std::string(run)));
        }
        p.runs.emplace_back(k0, key);
      }
      pending.push_back(std::move(p));
    } else {
      return err(absl::StrFormat("\"%s\" is no line kind (arch, library, command, key, map, runs)",
                                 kind));
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
    if (!cell.empty()) return err(absl::StrFormat("cell (%d, %d) of %s is given twice", p.mi, p.ni, p.family));
    cell = std::move(p.runs);
  }
  if (absl::Status s = check_table(t); !s.ok()) return s;
  return t;
}

int find_key(const CublasTable& t, std::string_view family, const CublasKey& key) {
  for (size_t i = 0; i < t.keys.size(); ++i) {
    if (t.keys[i].family == family && t.keys[i].key == key) return static_cast<int>(i);
  }
  return -1;
}

absl::StatusOr<int> lookup_key(const CublasTable& t, const runtime::GemmShape& s) {
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
  if (s.m < m->ms.front() || s.m > m->ms.back()) return out_of_range("m", s.m, m->ms.front(), m->ms.back());
  if (s.n < m->ns.front() || s.n > m->ns.back()) return out_of_range("n", s.n, m->ns.front(), m->ns.back());
  const size_t mi = std::upper_bound(m->ms.begin(), m->ms.end(), s.m) - m->ms.begin() - 1;
  const size_t ni = std::upper_bound(m->ns.begin(), m->ns.end(), s.n) - m->ns.begin() - 1;
  const size_t cell = mi * m->ns.size() + ni;
  if (cell >= m->runs.size() || m->runs[cell].empty()) {
    return absl::InternalError(absl::StrFormat(
        "The cuBLAS table's map of %s breaks its invariant: cell (%d, %d) has no K runs.",
        family, mi, ni));
  }
  const auto& runs = m->runs[cell];
  if (s.k < runs.front().first || s.k > m->k_max) {
    return out_of_range("k", s.k, runs.front().first, m->k_max);
  }
  int key = runs.front().second;
  for (const auto& [k0, idx] : runs) {
    if (k0 > s.k) break;
    key = idx;
  }
  if (key >= static_cast<int>(t.keys.size())) {
    return absl::InternalError(absl::StrFormat(
        "The cuBLAS table's map of %s breaks its invariant: key index %d of %d keys.", family,
        key, t.keys.size()));
  }
  if (key < 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "cuBLASLt's heuristic refused the scanned shapes of family %s around %dx%dx%d when the "
        "table for %s was made (%s), so the table has no key for them.", family, s.m, s.n, s.k,
        t.arch, m->refusal.empty() ? "no message kept" : m->refusal));
  }
  return key;
}

absl::StatusOr<dsl::GemmDesc> desc_for(const TableKey& key, const runtime::GemmShape& s) {
  if (!key.desc) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "The cuBLAS key %s of family %s (representative %dx%dx%d) has no recovered descriptor: "
        "%s.", to_string(key.key), key.family, key.m, key.n, key.k,
        key.note.empty() ? "it was not probed" : key.note));
  }
  if (s.k < 1) {
    return absl::InvalidArgumentError(absl::StrFormat("GemmShape.k is %d; it must be >= 1.", s.k));
  }
  dsl::GemmDesc d = *key.desc;
  if (key.rules.size() != d.k_cuts.size()) {
    return absl::InternalError(absl::StrFormat(
        "The cuBLAS key %s breaks its invariant: %d span rules for %d cut levels.",
        to_string(key.key), key.rules.size(), d.k_cuts.size()));
  }
  for (size_t i = 0; i < d.k_cuts.size(); ++i) {
    d.k_cuts[i].span = apply_span_rule(key.rules[i], d.k_cuts[i].span, s.k);
    // An inner level at least as long as the part it cuts has one part there: the
    // same tree as a level of exactly that span.
    if (i > 0) d.k_cuts[i].span = std::min(d.k_cuts[i].span, d.k_cuts[i - 1].span);
  }
  if (absl::Status v = dsl::validate(d); !v.ok()) {
    return absl::InternalError(absl::StrFormat(
        "The cuBLAS key %s carried to K = %d gives an invalid descriptor: %s", to_string(key.key),
        s.k, v.message()));
  }
  return d;
}

absl::StatusOr<dsl::GemmDesc> lookup(const CublasTable& t, const runtime::GemmShape& s) {
  absl::StatusOr<int> key = lookup_key(t, s);
  if (!key.ok()) return key.status();
  return desc_for(t.keys[*key], s);
}

}  // namespace fixbits::profile
