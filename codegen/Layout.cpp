// Layout: the free functions of blocked layouts. Registers, lanes and warps are
// mixed-radix numbers whose digits are the per-dimension indices in `order`.
// Example (shape 8x4, ept 1x4, lanes 8x1, warps 1x1, order 1,0):
//   slot {reg 3, lane 5, warp 0} -> reg digits (d1=3, d0=0), lane digits (d1=0, d0=5)
//   -> coord (5, 3).
#include "codegen/Layout.h"

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace fixbits::codegen {

int rank(const Layout& l) { return static_cast<int>(l.shape.size()); }

absl::Status check(const Layout& l) {
  size_t n = l.shape.size();
  if (l.elems_per_thread.size() != n || l.lanes.size() != n || l.warps.size() != n ||
      l.order.size() != n) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "layout: every per-dimension field must have rank %d entries.", n));
  }
  std::vector<bool> seen(n, false);
  for (int d : l.order) {
    if (d < 0 || d >= static_cast<int>(n) || seen[d]) {
      return absl::InvalidArgumentError("layout: order must be a permutation of the dimensions.");
    }
    seen[d] = true;
  }
  for (size_t d = 0; d < n; ++d) {
    if (l.elems_per_thread[d] < 1 || l.lanes[d] < 1 || l.warps[d] < 1 ||
        l.elems_per_thread[d] * l.lanes[d] * l.warps[d] != l.shape[d]) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "layout: dimension %d has extent %d but elems_per_thread*lanes*warps = %d*%d*%d.", d,
          l.shape[d], l.elems_per_thread[d], l.lanes[d], l.warps[d]));
    }
  }
  return absl::OkStatus();
}

int64_t regs(const Layout& l) {
  int64_t r = 1;
  for (int64_t e : l.elems_per_thread) r *= e;
  return r;
}
int lane_count(const Layout& l) {
  int r = 1;
  for (int e : l.lanes) r *= e;
  return r;
}
int warp_count(const Layout& l) {
  int r = 1;
  for (int e : l.warps) r *= e;
  return r;
}

namespace {
// Splits a linear index into per-dimension digits, radix `radix[d]`, in `order`.
template <class T>
std::vector<int64_t> digits(int64_t linear, const std::vector<T>& radix,
                            const std::vector<int>& order) {
  std::vector<int64_t> out(radix.size(), 0);
  for (int d : order) {
    out[d] = linear % radix[d];
    linear /= radix[d];
  }
  return out;
}
template <class T>
int64_t linear(const std::vector<int64_t>& dig, const std::vector<T>& radix,
               const std::vector<int>& order) {
  int64_t v = 0;
  for (auto it = order.rbegin(); it != order.rend(); ++it) v = v * radix[*it] + dig[*it];
  return v;
}
}  // namespace

std::vector<int64_t> coord_of(const Layout& l, const Slot& s) {
  std::vector<int64_t> r = digits(s.reg, l.elems_per_thread, l.order);
  std::vector<int64_t> ln = digits(s.lane, l.lanes, l.order);
  std::vector<int64_t> w = digits(s.warp, l.warps, l.order);
  std::vector<int64_t> c(l.shape.size());
  for (size_t d = 0; d < c.size(); ++d) {
    c[d] = (w[d] * l.lanes[d] + ln[d]) * l.elems_per_thread[d] + r[d];
  }
  return c;
}

Slot slot_of(const Layout& l, const std::vector<int64_t>& coord) {
  size_t n = l.shape.size();
  std::vector<int64_t> r(n), ln(n), w(n);
  for (size_t d = 0; d < n; ++d) {
    r[d] = coord[d] % l.elems_per_thread[d];
    int64_t t = coord[d] / l.elems_per_thread[d];
    ln[d] = t % l.lanes[d];
    w[d] = t / l.lanes[d];
  }
  return Slot{linear(r, l.elems_per_thread, l.order), static_cast<int>(linear(ln, l.lanes, l.order)),
              static_cast<int>(linear(w, l.warps, l.order))};
}

std::string to_string(const Layout& l) {
  return absl::StrFormat("blocked(shape=%s ept=%s lanes=%s warps=%s order=%s)",
                         absl::StrJoin(l.shape, "x"), absl::StrJoin(l.elems_per_thread, "x"),
                         absl::StrJoin(l.lanes, "x"), absl::StrJoin(l.warps, "x"),
                         absl::StrJoin(l.order, ","));
}

absl::Status blocked_layout(const std::vector<int64_t>& shape, int warp_size, int warps,
                            Layout* out) {
  if (shape.empty() || shape.size() > 2) {
    return absl::UnimplementedError(absl::StrFormat(
        "layout: tiles of rank %d are not supported yet (rank 1 and 2 are).", shape.size()));
  }
  const int64_t threads = int64_t{warp_size} * warps;
  if (shape.size() == 1 || shape[0] % threads == 0) {
    if (shape[0] % threads != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "layout: a tile of shape (%s) needs its leading extent to be a multiple of %d threads "
          "(%d warps of %d lanes).", absl::StrJoin(shape, "x"), threads, warps, warp_size));
    }
    Layout l;
    l.shape = shape;
    l.elems_per_thread = {shape[0] / threads};
    l.lanes = {warp_size};
    l.warps = {warps};
    l.order = {0};
    if (shape.size() == 2) {
      l.elems_per_thread.push_back(shape[1]);
      l.lanes.push_back(1);
      l.warps.push_back(1);
      l.order = {1, 0};
    }
    *out = l;
    return check(l);
  }
  // Rank 2 with fewer rows than threads: split the flat index i = t*R + r.
  auto fail = [&] {
    return absl::InvalidArgumentError(absl::StrFormat(
        "layout: a tile of shape (%s) cannot be dealt to %d threads (%d warps of %d lanes) "
        "as consecutive row-major pieces; its elements, its row length and the lanes must "
        "divide one another.", absl::StrJoin(shape, "x"), threads, warps, warp_size));
  };
  const int64_t elems = shape[0] * shape[1];
  if (elems % threads != 0) return fail();
  const int64_t r = elems / threads;
  if (shape[1] % r != 0) return fail();
  const int64_t groups = shape[1] / r;  // R-element pieces of one row
  Layout l;
  l.shape = shape;
  l.order = {1, 0};
  l.elems_per_thread = {1, r};
  if (groups < warp_size) {
    if (warp_size % groups != 0) return fail();
    l.lanes = {static_cast<int>(warp_size / groups), static_cast<int>(groups)};
    l.warps = {warps, 1};
  } else {
    if (groups % warp_size != 0 || warps % (groups / warp_size) != 0) return fail();
    const int w1 = static_cast<int>(groups / warp_size);
    l.lanes = {1, warp_size};
    l.warps = {warps / w1, w1};
  }
  if (absl::Status s = check(l); !s.ok()) return fail();
  *out = l;
  return absl::OkStatus();
}

int64_t flat_index(const Layout& l, const std::vector<int64_t>& coord) {
  int64_t f = 0;
  for (size_t d = 0; d < coord.size(); ++d) f = f * l.shape[d] + coord[d];
  return f;
}

Layout drop_dim(const Layout& l, int axis) {
  Layout o;
  for (int d = 0; d < rank(l); ++d) {
    if (d == axis) continue;
    o.shape.push_back(l.shape[d]);
    o.elems_per_thread.push_back(l.elems_per_thread[d]);
    o.lanes.push_back(l.lanes[d]);
    o.warps.push_back(l.warps[d]);
  }
  for (int d : l.order) {
    if (d != axis) o.order.push_back(d > axis ? d - 1 : d);
  }
  return o;
}

}  // namespace fixbits::codegen
