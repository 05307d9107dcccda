// Positions: see Positions.h. Every element of D is the same dot product; the groups
// printed here are the positions whose bits (draws) or walk strings (pair walk) agree.
#include "samples/cublas_probe/Positions.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "dsl/probe/Experiments.h"
#include "profile/MatchDraws.h"

namespace fixbits::samples {
namespace {

using dsl::reference::GemmProblem;

// The full-shape problem whose every row of A is `a` and every column of B is `b`.
GemmProblem replicate(const runtime::GemmShape& s, const std::vector<uint32_t>& a,
                      const std::vector<uint32_t>& b) {
  GemmProblem p;
  p.m = s.m;
  p.n = s.n;
  p.k = s.k;
  p.a.resize(static_cast<size_t>(s.m * s.k));
  for (int64_t i = 0; i < s.m; ++i) std::copy(a.begin(), a.end(), p.a.begin() + i * s.k);
  p.b.resize(static_cast<size_t>(s.k * s.n));
  for (int64_t k = 0; k < s.k; ++k)
    std::fill(p.b.begin() + k * s.n, p.b.begin() + (k + 1) * s.n, b[static_cast<size_t>(k)]);
  return p;
}

struct Group {
  uint64_t key = 0;
  int64_t count = 0, r0 = 0, r1 = 0, c0 = 0, c1 = 0;
  int64_t first = 0;  // the first element (row-major index) of the group
};

// Groups the elements by key, largest first; `of[e]` becomes element e's group index.
std::vector<Group> group(const std::vector<uint64_t>& keys, int64_t n, std::vector<int>* of) {
  std::map<uint64_t, Group> by;
  for (size_t e = 0; e < keys.size(); ++e) {
    const int64_t r = static_cast<int64_t>(e) / n, c = static_cast<int64_t>(e) % n;
    auto [it, fresh] = by.try_emplace(keys[e]);
    Group& g = it->second;
    if (fresh) g = {keys[e], 0, r, r, c, c, static_cast<int64_t>(e)};
    ++g.count;
    g.r0 = std::min(g.r0, r), g.r1 = std::max(g.r1, r);
    g.c0 = std::min(g.c0, c), g.c1 = std::max(g.c1, c);
  }
  std::vector<Group> out;
  for (auto& [k, g] : by) out.push_back(g);
  std::sort(out.begin(), out.end(), [](const Group& x, const Group& y) {
    return x.count != y.count ? x.count > y.count : x.first < y.first;
  });
  std::map<uint64_t, int> index;
  for (size_t i = 0; i < out.size(); ++i) index[out[i].key] = static_cast<int>(i);
  of->resize(keys.size());
  for (size_t e = 0; e < keys.size(); ++e) (*of)[e] = index[keys[e]];
  return out;
}

char letter(int g) { return g < 26 ? static_cast<char>('A' + g) : '+'; }

void print_groups(const std::vector<Group>& groups, const std::vector<int>& of,
                  const runtime::GemmShape& s, std::FILE* out) {
  for (size_t i = 0; i < groups.size() && i < 26; ++i) {
    const Group& g = groups[i];
    std::fprintf(out, "      %c: %lld elements, rows %lld..%lld, columns %lld..%lld\n", letter(i),
                 static_cast<long long>(g.count), static_cast<long long>(g.r0),
                 static_cast<long long>(g.r1), static_cast<long long>(g.c0),
                 static_cast<long long>(g.c1));
  }
  if (groups.size() < 2) return;
  const int64_t bm = (s.m + 47) / 48, bn = (s.n + 63) / 64;
  std::fprintf(out, "      map, one character per %lld rows x %lld columns ('*' mixed):\n",
               static_cast<long long>(bm), static_cast<long long>(bn));
  for (int64_t r0 = 0; r0 < s.m; r0 += bm) {
    std::string line;
    for (int64_t c0 = 0; c0 < s.n; c0 += bn) {
      int seen = -1;
      for (int64_t r = r0; r < std::min(s.m, r0 + bm) && seen != -2; ++r)
        for (int64_t c = c0; c < std::min(s.n, c0 + bn); ++c) {
          const int g = of[static_cast<size_t>(r * s.n + c)];
          if (seen == -1) seen = g;
          if (seen != g) {
            seen = -2;
            break;
          }
        }
      line += seen == -2 ? '*' : letter(seen);
    }
    std::fprintf(out, "      %6lld %s\n", static_cast<long long>(r0), line.c_str());
  }
}

uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001b3ull; }

}  // namespace

absl::Status print_positions(profile::CublasBlackBox& box, int draws, int64_t max_k,
                             std::FILE* out) {
  const runtime::GemmShape& s = box.shape();
  const size_t elems = static_cast<size_t>(s.m * s.n);
  std::vector<int> of;
  for (int d = 0; d < draws; ++d) {
    std::mt19937_64 rng(0x5eed + 104729 * d);
    std::vector<uint32_t> a(static_cast<size_t>(s.k)), b(static_cast<size_t>(s.k));
    for (uint32_t& x : a) x = profile::draw_input_bits(s.a_dtype, rng, /*with_subnormal=*/false);
    for (uint32_t& x : b) x = profile::draw_input_bits(s.b_dtype, rng, /*with_subnormal=*/false);
    absl::StatusOr<std::vector<uint32_t>> d_bits = box.run(replicate(s, a, b));
    if (!d_bits.ok()) return d_bits.status();
    std::vector<uint64_t> keys(d_bits->begin(), d_bits->end());
    const std::vector<Group> groups = group(keys, s.n, &of);
    std::fprintf(out, "    positions, random draw %d: %zu distinct value(s) over %zu elements\n", d,
                 groups.size(), elems);
    print_groups(groups, of, s, out);
  }
  if (s.k < 3) return absl::OkStatus();
  if (s.k > max_k) {
    std::fprintf(out, "    positions, pair walk: skipped, K = %lld > %lld\n",
                 static_cast<long long>(s.k), static_cast<long long>(max_k));
    return absl::OkStatus();
  }
  // Walk strings are kept whole only for the elements of a 64 x 64 sample.
  const std::vector<int64_t> rows = profile::spread(s.m, 64), cols = profile::spread(s.n, 64);
  std::map<int64_t, std::string> sampled;
  for (int64_t r : rows)
    for (int64_t c : cols) sampled[r * s.n + c];
  std::vector<uint64_t> keys(elems, 0xcbf29ce484222325ull);
  const dsl::probe::ProbeValues v = dsl::probe::probe_values(s.a_dtype, s.b_dtype);
  for (int64_t m = 1; m + 1 < s.k; ++m) {
    const dsl::probe::Placement pl{s.k, {{0, 'r'}, {m, '+'}, {m + 1, '-'}}};
    const GemmProblem one = dsl::probe::make_problem(pl, s.a_dtype, s.b_dtype);
    absl::StatusOr<std::vector<uint32_t>> d_bits = box.run(replicate(s, one.a, one.b));
    if (!d_bits.ok()) return d_bits.status();
    for (size_t e = 0; e < elems; ++e) {
      const dsl::probe::Outcome o = dsl::probe::classify(s.out_dtype, v.r, (*d_bits)[e]);
      keys[e] = mix(keys[e], static_cast<uint64_t>(o) + 1);
    }
    for (auto& [e, text] : sampled) {
      const dsl::probe::Outcome o =
          dsl::probe::classify(s.out_dtype, v.r, (*d_bits)[static_cast<size_t>(e)]);
      text += o == dsl::probe::Outcome::kR ? 'r' : o == dsl::probe::Outcome::kZero ? '0' : 'x';
    }
  }
  const std::vector<Group> groups = group(keys, s.n, &of);
  std::fprintf(out, "    positions, pair walk (m = 1 .. %lld): %zu distinct walk(s)\n",
               static_cast<long long>(s.k - 2), groups.size());
  print_groups(groups, of, s, out);
  // The walk of each group (from a sampled element), and where it differs from A's.
  std::vector<std::string> walk(groups.size());
  for (const auto& [e, text] : sampled) {
    std::string& w = walk[static_cast<size_t>(of[static_cast<size_t>(e)])];
    if (w.empty()) w = text;
  }
  for (size_t g = 0; g < groups.size() && g < 8; ++g) {
    if (walk[g].empty()) {
      std::fprintf(out, "      walk %c: no sampled element\n", letter(static_cast<int>(g)));
      continue;
    }
    std::fprintf(out, "      walk %c (m from 1):", letter(static_cast<int>(g)));
    for (size_t i = 0; i < walk[g].size(); ++i) {
      if (i % 64 == 0) std::fprintf(out, "\n        %5zu ", i + 1);
      std::fputc(walk[g][i], out);
    }
    std::fputc('\n', out);
  }
  return absl::OkStatus();
}

}  // namespace fixbits::samples
