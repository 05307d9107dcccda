// SumTree: the pivot recursion of SumTree.h. Invariant: every inner node joins the
// pivot's subtree with one whole sibling subtree, found by the experiments' counts.
#include "dsl/probe/SumTree.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"

namespace fixbits::dsl::probe {
namespace {

constexpr float kHalfL = 32768.0f;           // 2^15: a of ±L, and b everywhere
constexpr float kOneA = 0x1p-22f;            // a of a one: one = 2^-22 * 2^15 = 2^-7
constexpr float kOne = 0x1p-7f;

class Recovery {
 public:
  Recovery(const GemmBlackBox& box, DType a, DType b, DType out, const SumTreeOptions& o)
      : box_(box), a_(a), b_(b), out_(out), o_(o) {
    plus_ = to_bits(a, kHalfL);
    minus_ = to_bits(a, -kHalfL);
    one_ = to_bits(a, kOneA);
    zero_ = to_bits(a, 0.0f);
    b_col_.assign(static_cast<size_t>(o.k), to_bits(b, kHalfL));
  }

  absl::StatusOr<int> split(const std::vector<int64_t>& set) {
    if (set.size() == 1) return add_node({.leaf = set[0], .min_leaf = set[0], .leaves = 1});
    const int64_t pivot = set[0];
    std::vector<int64_t> others(set.begin() + 1, set.end());
    absl::StatusOr<std::vector<int64_t>> counts = run_pivot(set, pivot, others);
    if (!counts.ok()) return counts.status();
    // Leaves grouped by how many of the set's leaves lie under LCA(pivot, j).
    std::map<int64_t, std::vector<int64_t>> groups;
    const int64_t n = static_cast<int64_t>(set.size());
    for (size_t x = 0; x < others.size(); ++x) groups[n - 2 - (*counts)[x]].push_back(others[x]);
    int node = add_node({.leaf = pivot, .min_leaf = pivot, .leaves = 1});
    int64_t under = 1;
    for (auto& [inside, group] : groups) {
      under += static_cast<int64_t>(group.size());
      if (inside + 2 != under) {
        return absl::FailedPreconditionError(absl::StrCat(
            "SumTree: around pivot ", pivot, " the leaves with ", inside,
            " others under their meeting point (e.g. ", group[0],
            ") do not nest into one binary tree: not a tree of f32 roundings on this window."));
      }
      absl::StatusOr<int> sub = split(group);
      if (!sub.ok()) return sub.status();
      node = join(node, *sub);
    }
    return node;
  }

  SumTree take(int root) {
    tree_.root = root;
    return std::move(tree_);
  }

 private:
  int add_node(SumTree::Node n) {
    tree_.nodes.push_back(n);
    return static_cast<int>(tree_.nodes.size()) - 1;
  }
  int join(int x, int y) {
    const SumTree::Node& nx = tree_.nodes[static_cast<size_t>(x)];
    const SumTree::Node& ny = tree_.nodes[static_cast<size_t>(y)];
    if (ny.min_leaf < nx.min_leaf) std::swap(x, y);
    SumTree::Node n{.left = x, .right = y,
                    .min_leaf = std::min(nx.min_leaf, ny.min_leaf),
                    .leaves = nx.leaves + ny.leaves};
    return add_node(n);
  }

  // For each j of `others`: the count of ones outside LCA(pivot, j)'s subtree.
  absl::StatusOr<std::vector<int64_t>> run_pivot(const std::vector<int64_t>& set, int64_t pivot,
                                                 const std::vector<int64_t>& others) {
    std::vector<int64_t> counts;
    counts.reserve(others.size());
    const int64_t k = o_.k;
    for (size_t start = 0; start < others.size(); start += static_cast<size_t>(o_.rows_per_call)) {
      const size_t rows = std::min(others.size() - start, static_cast<size_t>(o_.rows_per_call));
      tree_.rows += static_cast<int64_t>(rows);
      if (tree_.rows > o_.max_rows) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "SumTree: more than SumTreeOptions.max_rows = ", o_.max_rows,
            " experiment rows; the tree is not balanced enough for this window."));
      }
      reference::GemmProblem p;
      p.m = static_cast<int64_t>(rows);
      p.n = 1;
      p.k = k;
      p.a.assign(static_cast<size_t>(p.m * k), zero_);
      p.b = b_col_;
      for (size_t r = 0; r < rows; ++r) {
        uint32_t* row = p.a.data() + r * static_cast<size_t>(k);
        for (int64_t s : set) row[s] = one_;
        row[pivot] = plus_;
        row[others[start + r]] = minus_;
      }
      ++tree_.calls;
      absl::StatusOr<std::vector<uint32_t>> got = box_(p);
      if (!got.ok()) return got.status();
      if (got->size() != rows) {
        return absl::InternalError(absl::StrCat("SumTree: the black box returned ", got->size(),
                                                " outputs for ", rows, " rows."));
      }
      for (size_t r = 0; r < rows; ++r) {
        const float v = to_float(out_, (*got)[r]) / kOne;
        const int64_t c = static_cast<int64_t>(v);
        if (!(v >= 0) || static_cast<float>(c) != v || c > static_cast<int64_t>(set.size()) - 2) {
          return absl::FailedPreconditionError(absl::StrCat(
              "SumTree: with +L at ", pivot, " and -L at ", others[start + r], " the output is ",
              to_float(out_, (*got)[r]), ", not a count of ones times 2^-7: not a tree of f32 "
              "roundings on this window (or a partial sum held below f32)."));
        }
        counts.push_back(c);
      }
    }
    return counts;
  }

  const GemmBlackBox& box_;
  DType a_, b_, out_;
  SumTreeOptions o_;
  uint32_t plus_ = 0, minus_ = 0, one_ = 0, zero_ = 0;
  std::vector<uint32_t> b_col_;
  SumTree tree_;
};

void print(const SumTree& t, int node, std::string* out) {
  const SumTree::Node& n = t.nodes[static_cast<size_t>(node)];
  if (n.leaf >= 0) {
    absl::StrAppend(out, n.leaf);
    return;
  }
  out->push_back('(');
  print(t, n.left, out);
  out->push_back(' ');
  print(t, n.right, out);
  out->push_back(')');
}

}  // namespace

absl::StatusOr<SumTree> recover_sum_tree(const GemmBlackBox& box, DType a, DType b, DType out,
                                         const SumTreeOptions& o) {
  for (DType t : {a, b}) {
    if (to_float(t, to_bits(t, kOneA)) != kOneA || to_float(t, to_bits(t, kHalfL)) != kHalfL) {
      return absl::InvalidArgumentError(absl::StrCat(
          "SumTree: the input dtype ", std::string(dtype_name(t)), " cannot hold 2^15 and 2^-22 exactly."));
    }
  }
  if (out != DType::kF32 && out != DType::kF16 && out != DType::kBF16) {
    return absl::InvalidArgumentError(absl::StrCat("SumTree: the output dtype ", std::string(dtype_name(out)),
                                                   " cannot hold the counts; f32, f16 or bf16."));
  }
  const int64_t cap = out == DType::kF32 ? 4096 : int64_t{2} << dtype_mantissa_bits(out);
  std::vector<int64_t> set = o.leaves;
  if (set.empty()) {
    if (o.first < 0 || o.length < 1 || o.first + o.length > o.k) {
      return absl::InvalidArgumentError(absl::StrCat("SumTreeOptions.first: the window [", o.first,
                                                     ", ", o.first + o.length,
                                                     ") is empty or outside K = ", o.k, "."));
    }
    for (int64_t i = 0; i < o.length; ++i) set.push_back(o.first + i);
  }
  for (size_t i = 0; i < set.size(); ++i) {
    if (set[i] < 0 || set[i] >= o.k || (i > 0 && set[i] <= set[i - 1])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "SumTreeOptions.leaves: leaf ", set[i], " is outside K = ", o.k,
          " or not above the one before; the leaves are ascending and distinct."));
    }
  }
  const int64_t n = static_cast<int64_t>(set.size());
  if (n > cap) {
    return absl::InvalidArgumentError(absl::StrCat(
        o.leaves.empty() ? "SumTreeOptions.length: " : "SumTreeOptions.leaves: ", n,
        " leaves are more than the ", cap, " output ", std::string(dtype_name(out)),
        " counts exactly."));
  }
  if (o.rows_per_call < 1) {
    return absl::InvalidArgumentError("SumTreeOptions.rows_per_call: must be >= 1.");
  }
  Recovery r(box, a, b, out, o);
  absl::StatusOr<int> root = r.split(set);
  if (!root.ok()) return root.status();
  return r.take(*root);
}

std::string to_string(const SumTree& t) {
  std::string out;
  if (t.root >= 0) print(t, t.root, &out);
  return out;
}

}  // namespace fixbits::dsl::probe
