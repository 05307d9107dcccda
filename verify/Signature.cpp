// Signature.cpp — parse, walk, hash the roots; explain the first difference.
//
// A kernel's signature is the hash of its distinct root trees in sorted order; a kernel
// that reconstructs no root keeps its name, launch bound and text as its signature (§6.2),
// so two such kernels stay apart.
#include "verify/Signature.h"

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "verify/GcnParser.h"
#include "verify/GcnWalk.h"
#include "verify/Graph.h"
#include "verify/Hash.h"
#include "verify/PtxParser.h"
#include "verify/PtxWalk.h"

namespace fixbits::verify {
namespace {

struct Kernel {
  std::string name;
  std::unique_ptr<Graph> graph;
  std::vector<Root> roots;
  std::vector<uint64_t> distinct;  // sorted distinct root hashes
  uint64_t sig = 0;
};

struct Analysis {
  std::vector<Kernel> kernels;
  uint64_t sig = 0;
};

absl::StatusOr<Analysis> analyze(std::string_view text, Target target) {
  if (target == Target::kAuto) {
    auto t = detect_target(text);
    if (!t.ok()) return t.status();
    target = *t;
  }
  const absl::string_view view(text.data(), text.size());
  absl::StatusOr<Module> m = target == Target::kPtx ? parse_ptx(view) : parse_gcn(view);
  if (!m.ok()) return m.status();
  Analysis out;
  out.sig = hash_text(target == Target::kPtx ? "ptx" : "gcn");
  for (const Function& f : m->functions) {
    if (!f.is_entry) continue;
    Kernel k;
    k.name = f.name;
    k.graph = std::make_unique<Graph>();
    bool complete = true;
    k.roots = target == Target::kPtx ? walk_ptx(*m, f, *k.graph, &complete)
                                     : walk_gcn(*m, f, *k.graph, &complete);
    if (!complete) k.roots.clear();  // an unfinished walk is never trusted: text hash below
    for (const Root& r : k.roots) k.distinct.push_back(k.graph->at(r.node).hash);
    std::sort(k.distinct.begin(), k.distinct.end());
    k.distinct.erase(std::unique(k.distinct.begin(), k.distinct.end()), k.distinct.end());
    uint64_t h = hash_text("kernel");
    if (k.distinct.empty()) {
      h = mix(h, hash_text(f.name));
      for (int64_t b : f.launch_bound) h = mix(h, static_cast<uint64_t>(b));
      h = mix(h, hash_text(text));
    }
    for (uint64_t r : k.distinct) h = mix(h, r);
    k.sig = h;
    out.sig = mix(out.sig, h);
    out.kernels.push_back(std::move(k));
  }
  if (out.kernels.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "The ", target == Target::kPtx ? "PTX" : "AMDGCN", " text holds no kernel entry to check."));
  }
  return out;
}

// Descends two differing trees to the first node whose own facts differ.
std::string first_difference(const Graph& ga, NodeId a, const Graph& gb, NodeId b, int depth) {
  const Node &x = ga.at(a), &y = gb.at(b);
  const bool x_bal = x.bal.valid && !x.bal.is_leaf, y_bal = y.bal.valid && !y.bal.is_leaf;
  // FIXBITS_EXPLAIN_TOP (set): describe the differing roots themselves, not the deepest
  // differing node below them.
  const bool descend = std::getenv("FIXBITS_EXPLAIN_TOP") == nullptr;
  if (depth < 64 && descend && !x_bal && !y_bal && x.kind == y.kind && x.op == y.op && x.imm == y.imm &&
      x.kids.size() == y.kids.size() && (x.kind != Kind::kInt || x.aff == y.aff)) {
    for (size_t i = 0; i < x.kids.size(); ++i) {
      if (ga.at(x.kids[i]).hash != gb.at(y.kids[i]).hash) {
        return first_difference(ga, x.kids[i], gb, y.kids[i], depth + 1);
      }
    }
  }
  // FIXBITS_EXPLAIN_DEPTH (1..16) prints more levels below the differing node.
  int shown = 2;
  if (const char* e = std::getenv("FIXBITS_EXPLAIN_DEPTH"); e != nullptr) shown = std::clamp(std::atoi(e), 1, 16);
  return absl::StrCat("first differing node:\n  A: ", ga.describe(a, shown), "\n  B: ", gb.describe(b, shown));
}

}  // namespace

absl::StatusOr<Target> detect_target(std::string_view text) {
  auto has = [&](std::string_view s) { return text.find(s) != std::string_view::npos; };
  if (has(".amdgcn_target") || has(".amdhsa_kernel") || has("s_endpgm")) return Target::kGcn;
  if (has(".version") || has(".entry")) return Target::kPtx;
  return absl::InvalidArgumentError(
      "The text is neither PTX (no .version or .entry) nor AMDGCN (no .amdgcn_target, "
      ".amdhsa_kernel or s_endpgm).");
}

absl::StatusOr<Signature> signature(std::string_view text, Target target) {
  auto an = analyze(text, target);
  if (!an.ok()) return an.status();
  Signature s;
  s.hex = hex64(an->sig);
  for (const Kernel& k : an->kernels) {
    s.kernels.push_back({k.name, hex64(k.sig), static_cast<int>(k.distinct.size())});
  }
  return s;
}

absl::StatusOr<Equivalence> equivalent(std::string_view a, std::string_view b, Target target) {
  auto x = analyze(a, target);
  if (!x.ok()) return absl::Status(x.status().code(), absl::StrCat("kernel A: ", x.status().message()));
  auto y = analyze(b, target);
  if (!y.ok()) return absl::Status(y.status().code(), absl::StrCat("kernel B: ", y.status().message()));
  Equivalence e;
  e.signature_a = hex64(x->sig);
  e.signature_b = hex64(y->sig);
  e.equivalent = x->sig == y->sig;
  if (e.equivalent) return e;
  if (x->kernels.size() != y->kernels.size()) {
    e.explanation = absl::StrCat("A has ", x->kernels.size(), " entries and B has ", y->kernels.size(), ".");
    return e;
  }
  for (size_t i = 0; i < x->kernels.size(); ++i) {
    const Kernel &ka = x->kernels[i], &kb = y->kernels[i];
    if (ka.sig == kb.sig) continue;
    std::string head = absl::StrCat("entry ", ka.name, " (A) vs ", kb.name, " (B): ");
    if (ka.distinct.empty() || kb.distinct.empty()) {
      e.explanation = absl::StrCat(head, ka.distinct.empty() ? "A" : "B",
                                   " reconstructs no reduction reaching a global store, so it keeps its "
                                   "launch geometry and text as its signature.");
      return e;
    }
    // The first root (program order) of A whose tree B lacks, against B's root at that rank.
    for (size_t r = 0; r < ka.roots.size(); ++r) {
      uint64_t h = ka.graph->at(ka.roots[r].node).hash;
      if (std::binary_search(kb.distinct.begin(), kb.distinct.end(), h)) continue;
      const Root& rb = kb.roots[std::min(r, kb.roots.size() - 1)];
      e.explanation = absl::StrCat(head, "the tree stored at A line ", ka.roots[r].line,
                                   " has no equal in B (compared with B line ", rb.line, "); ",
                                   first_difference(*ka.graph, ka.roots[r].node, *kb.graph, rb.node, 0));
      return e;
    }
    for (size_t r = 0; r < kb.roots.size(); ++r) {
      uint64_t h = kb.graph->at(kb.roots[r].node).hash;
      if (std::binary_search(ka.distinct.begin(), ka.distinct.end(), h)) continue;
      e.explanation = absl::StrCat(head, "B stores a tree at line ", kb.roots[r].line,
                                   " that A never stores: ", kb.graph->describe(kb.roots[r].node, 3));
      return e;
    }
  }
  e.explanation = "The module signatures differ but every entry matches (entry order differs).";
  return e;
}

}  // namespace fixbits::verify
