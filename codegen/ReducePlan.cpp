// ReducePlan: plan_reduce picks the levels; simulate_plan executes them on the CPU
// thread by thread, the way LowerReduce's emitted code does on the GPU.
// Example: Q = 512, R = 4, lanes 32, warps 4, pinned S = 1024 is invalid (S > Q);
// S = 256: reg_group 4, lane offsets {1,2,4,8,16}, unit 128, units 4,
// units_per_strip 2, strips 2: slots (w0,w1) form strip 0, (w2,w3) strip 1.
#include "codegen/ReducePlan.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_format.h"

namespace fixbits::codegen {

float identity_f32(tile::Combine c) {
  switch (c) {
    case tile::Combine::kAdd: return -0.0f;
    case tile::Combine::kMax: return -std::numeric_limits<float>::infinity();
    case tile::Combine::kMin: return std::numeric_limits<float>::infinity();
  }
  return -0.0f;
}

float combine_f32(tile::Combine c, float a, float b) {
  if (c == tile::Combine::kAdd) return a + b;
  if (std::isnan(a) || std::isnan(b)) return std::bit_cast<float>(0x7fffffffu);
  bool want_max = c == tile::Combine::kMax;
  if (a == b) return std::signbit(a) == std::signbit(b) ? a : (want_max ? 0.0f : -0.0f);
  return (a > b) == want_max ? a : b;
}

absl::StatusOr<ReducePlan> plan_reduce(const Layout& in, const tile::Op& op, int op_number) {
  const int axis = static_cast<int>(op.imm);
  auto fail = [&](const std::string& m) {
    return absl::InvalidArgumentError(absl::StrFormat("reduce #%d: %s", op_number, m));
  };
  ReducePlan p;
  p.order = op.order;
  if (rank(in) == 2) {
    if (axis < 0 || axis > 1 || in.lanes[axis] != 1 || in.warps[axis] != 1 ||
        in.order[0] != axis) {
      return absl::UnimplementedError(absl::StrFormat(
          "reduce #%d: reducing axis %d of a rank-2 tile spread over lanes or warps (%s) is not "
          "lowered; only an axis wholly in registers (fastest in the register order) is.",
          op_number, axis, to_string(in)));
    }
    p.across_threads = false;
    p.lines = in.elems_per_thread[1 - axis];
    p.regs = in.elems_per_thread[axis];
    p.lanes = lane_count(in);
    p.warps = warp_count(in);
    p.strip = op.order == dsl::TreeOrder::kPinned && op.strip ? op.strip : p.regs;
    p.reg_group = std::min(p.strip, p.regs);
    p.strips = p.regs / p.reg_group;
    return p;
  }
  if (rank(in) != 1) return fail(absl::StrFormat("rank-%d tiles cannot be reduced yet", rank(in)));
  const int64_t q = in.shape[0];
  p.regs = in.elems_per_thread[0];
  p.lanes = in.lanes[0];
  p.warps = in.warps[0];
  if (op.order == dsl::TreeOrder::kFree) {
    p.strip = q;
    p.reg_group = p.regs;
    for (int o = p.lanes / 2; o >= 1; o /= 2) p.lane_offsets.push_back(o);
    p.unit = p.regs * p.lanes;
    p.units = p.warps;
    p.units_per_strip = p.warps;
    p.strips = 1;
    p.uses_smem = p.warps > 1;
    return p;
  }
  const int64_t s = op.strip ? op.strip : q;
  if (s > q || q % s != 0) {
    return fail(absl::StrFormat("strip %d does not divide the extent %d", s, q));
  }
  p.strip = s;
  p.reg_group = std::min(s, p.regs);
  const int64_t lane_span = std::min<int64_t>(std::max<int64_t>(s / p.regs, 1), p.lanes);
  for (int64_t o = 1; o < lane_span; o *= 2) p.lane_offsets.push_back(static_cast<int>(o));
  p.unit = std::min<int64_t>(s, p.regs * p.lanes);
  p.units = q / p.unit;
  p.units_per_strip = s / p.unit;
  p.strips = q / s;
  p.uses_smem = p.units > 1;
  constexpr int64_t kMaxSlots = 8192;  // 32 KiB of f32
  if (p.units > kMaxSlots) {
    return fail(absl::StrFormat(
        "strip %d over a %d-element pass needs %d shared-memory slots (at most %d); use fewer "
        "elements per pass", s, q, p.units, kMaxSlots));
  }
  return p;
}

namespace {

// Balanced tree over v[lo, lo+n), n a power of two: pairs neighbours level by level.
float tree(tile::Combine c, const float* v, int64_t n) {
  std::vector<float> level(v, v + n);
  while (level.size() > 1) {
    for (size_t j = 0; j < level.size() / 2; ++j) level[j] = combine_f32(c, level[2 * j], level[2 * j + 1]);
    level.resize(level.size() / 2);
  }
  return level[0];
}

}  // namespace

std::vector<float> simulate_plan(const ReducePlan& p, tile::Combine c, const std::vector<float>& x,
                                 const std::vector<float>& init) {
  const int64_t threads = int64_t{p.lanes} * p.warps;
  if (!p.across_threads) {
    std::vector<float> out(threads * p.lines);
    for (int64_t row = 0; row < threads * p.lines; ++row) {
      const float* v = &x[row * p.regs];
      float r = init.empty() ? identity_f32(c) : init[row];
      if (p.order == dsl::TreeOrder::kFree) {
        for (int64_t k = 0; k < p.regs; ++k) r = combine_f32(c, r, v[k]);
      } else {
        for (int64_t s = 0; s < p.strips; ++s) r = combine_f32(c, r, tree(c, v + s * p.reg_group, p.reg_group));
      }
      out[row] = r;
    }
    return out;
  }
  // Step 1: within each thread.
  const int64_t groups = p.regs / p.reg_group;
  std::vector<std::vector<float>> part(threads, std::vector<float>(groups));
  for (int64_t t = 0; t < threads; ++t) {
    const float* v = &x[t * p.regs];
    if (p.order == dsl::TreeOrder::kFree) {
      float r = v[0];
      for (int64_t k = 1; k < p.regs; ++k) r = combine_f32(c, r, v[k]);
      part[t][0] = r;
    } else {
      for (int64_t g = 0; g < groups; ++g) part[t][g] = tree(c, v + g * p.reg_group, p.reg_group);
    }
  }
  // Step 2: within each warp (only one group per thread when lanes take part).
  for (int off : p.lane_offsets) {
    std::vector<std::vector<float>> next = part;
    for (int64_t t = 0; t < threads; ++t) {
      int64_t partner = t ^ off;  // same warp: off < lanes
      next[t][0] = combine_f32(c, part[t][0], part[partner][0]);
    }
    part.swap(next);
  }
  // Step 3: across warps.
  float r = init.empty() ? identity_f32(c) : init[0];
  if (!p.uses_smem) return {combine_f32(c, r, part[0][0])};
  std::vector<float> smem(p.units, std::nanf(""));
  for (int64_t t = 0; t < threads; ++t) {
    if (p.order == dsl::TreeOrder::kFree) {
      if (t % p.lanes == 0) smem[t / p.lanes] = part[t][0];
      continue;
    }
    for (int64_t g = 0; g < groups; ++g) {
      int64_t pos = t * p.regs + g * p.reg_group;
      if (pos % p.unit == 0) smem[pos / p.unit] = part[t][g];
    }
  }
  if (p.order == dsl::TreeOrder::kFree) {
    float w = smem[0];
    for (int64_t k = 1; k < p.units; ++k) w = combine_f32(c, w, smem[k]);
    return {init.empty() ? w : combine_f32(c, r, w)};
  }
  for (int64_t s = 0; s < p.strips; ++s) {
    r = combine_f32(c, r, tree(c, &smem[s * p.units_per_strip], p.units_per_strip));
  }
  return {r};
}

std::vector<float> simulate_reduce(const Layout& in, const ReducePlan& p, tile::Combine c,
                                   const std::vector<float>& x, const std::vector<float>& init) {
  if (rank(in) == 1) {
    // The rank-1 blocked layout holds element t*R + r in register r of thread t.
    return simulate_plan(p, c, x, init.size() > 1 ? std::vector<float>{init[0]} : init);
  }
  const int axis = in.order[0];  // the in-thread plan's axis (plan_reduce checked it)
  const int kept = 1 - axis;
  const int64_t threads = int64_t{lane_count(in)} * warp_count(in);
  const int64_t per_thread = regs(in);
  std::vector<float> phys(threads * per_thread), phys_init;
  std::vector<int64_t> result_of(threads * p.lines);  // line slot -> kept coordinate
  for (int64_t t = 0; t < threads; ++t) {
    Slot s{0, static_cast<int>(t % lane_count(in)), static_cast<int>(t / lane_count(in))};
    for (s.reg = 0; s.reg < per_thread; ++s.reg) {
      std::vector<int64_t> coord = coord_of(in, s);
      phys[t * per_thread + s.reg] = x[flat_index(in, coord)];
      if (s.reg % p.regs == 0) result_of[t * p.lines + s.reg / p.regs] = coord[kept];
    }
  }
  if (!init.empty()) {
    for (int64_t k : result_of) phys_init.push_back(init.size() == 1 ? init[0] : init[k]);
  }
  std::vector<float> out_phys = simulate_plan(p, c, phys, phys_init);
  std::vector<float> out(in.shape[kept]);
  for (size_t i = 0; i < out_phys.size(); ++i) out[result_of[i]] = out_phys[i];
  return out;
}

}  // namespace fixbits::codegen
