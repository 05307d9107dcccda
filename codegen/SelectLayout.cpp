// SelectLayout: reduce_friendly_layout builds §5.2's layout; select_reduce_layout
// compares reducing in place with converting first. Example (4 warps of 32):
//   reduce (32, 128) axis 0, producer blocked(ept=1x32 lanes=8x4 warps=4x1):
//     direct:   rows over 8 lanes x 4 warps -> 3 shuffle levels x 32 columns and a
//               cross-warp stage, plus a round trip to give each thread its column:
//               not emitted by LowerReduce (weight infinite)
//     friendly: ept=32x1 lanes=1x32 warps=1x4 -> in-thread trees only; + convert (1 trip)
//   -> convert.
//   reduce (128, 4) axis 1 (rows in threads, the axis in registers): friendly ==
//   producer -> no conversion.
#include "codegen/SelectLayout.h"

#include <limits>

#include "absl/strings/str_format.h"
#include "codegen/ReducePlan.h"

namespace fixbits::codegen {
namespace {

bool divides(int64_t a, int64_t b) { return a > 0 && b % a == 0; }

}  // namespace

absl::StatusOr<Layout> reduce_friendly_layout(const std::vector<int64_t>& shape, int axis,
                                              int warp_size, int warps) {
  const int n = static_cast<int>(shape.size());
  if (n == 1) {
    Layout l;
    if (absl::Status s = blocked_layout(shape, warp_size, warps, &l); !s.ok()) return s;
    return l;
  }
  if (n != 2 || axis < 0 || axis > 1) {
    return absl::UnimplementedError(absl::StrFormat(
        "select_layout: reducing axis %d of a rank-%d tile is not supported (rank 1 and 2 are).",
        axis, n));
  }
  const int kept = 1 - axis;
  const int64_t n_axis = shape[axis], n_kept = shape[kept];
  auto fail = [&] {
    return absl::UnimplementedError(absl::StrFormat(
        "select_layout: a (%dx%d) tile reduced along axis %d does not split evenly over %d "
        "warps of %d lanes.", shape[0], shape[1], axis, warps, warp_size));
  };
  // Warps on the kept dimension first, then lanes; the axis gets what is left.
  const int64_t warps_kept = std::min<int64_t>(warps, n_kept);
  if (!divides(warps_kept, warps) || !divides(warps_kept, n_kept)) return fail();
  const int64_t lanes_kept = std::min<int64_t>(warp_size, n_kept / warps_kept);
  if (!divides(lanes_kept, warp_size) || !divides(lanes_kept, n_kept / warps_kept)) return fail();
  const int64_t warps_axis = warps / warps_kept, lanes_axis = warp_size / lanes_kept;
  if (!divides(warps_axis * lanes_axis, n_axis)) return fail();
  Layout l;
  l.shape = shape;
  l.elems_per_thread.assign(2, 1);
  l.lanes.assign(2, 1);
  l.warps.assign(2, 1);
  l.elems_per_thread[kept] = n_kept / (warps_kept * lanes_kept);
  l.lanes[kept] = static_cast<int>(lanes_kept);
  l.warps[kept] = static_cast<int>(warps_kept);
  l.elems_per_thread[axis] = n_axis / (warps_axis * lanes_axis);
  l.lanes[axis] = static_cast<int>(lanes_axis);
  l.warps[axis] = static_cast<int>(warps_axis);
  l.order = {axis, kept};
  if (absl::Status s = check(l); !s.ok()) return s;
  return l;
}

ReduceCost reduce_cost(const Layout& l, int axis, int warp_size, int warps) {
  ReduceCost c;
  const int64_t lines = regs(l) / l.elems_per_thread[axis];
  int levels = 0;
  for (int v = l.lanes[axis]; v > 1; v /= 2) ++levels;
  c.shuffles = lines * levels;
  if (l.warps[axis] > 1) c.smem_trips += 1;
  if (rank(l) == 1) return c;
  // The result must land in the blocked layout of its shape.
  Layout result = drop_dim(l, axis), want;
  if (!blocked_layout(result.shape, warp_size, warps, &want).ok() || !(result == want)) {
    c.smem_trips += 1;
  }
  c.lowered = l.lanes[axis] == 1 && l.warps[axis] == 1 && l.order[0] == axis &&
              result == want;
  return c;
}

int64_t weight(const ReduceCost& c) {
  if (!c.lowered) return std::numeric_limits<int64_t>::max() / 2;
  return c.shuffles + 64 * c.smem_trips;
}

absl::StatusOr<LayoutChoice> select_reduce_layout(const Layout& producer, const tile::Op& op,
                                                  int op_number, int warp_size, int warps) {
  const int axis = static_cast<int>(op.imm);
  LayoutChoice choice;
  choice.producer = producer;
  choice.reduce = producer;
  const ReduceCost direct = reduce_cost(producer, axis, warp_size, warps);
  if (rank(producer) == 1) {
    choice.why = "rank 1: the blocked layout is the friendly one";
    return choice;
  }
  auto refuse = [&](const std::string& why) {
    return absl::UnimplementedError(absl::StrFormat(
        "reduce #%d: reducing axis %d of a %s tile in %s is not supported: %s.", op_number, axis,
        absl::StrFormat("(%dx%d)", producer.shape[0], producer.shape[1]), to_string(producer),
        why));
  };
  if (op.order == dsl::TreeOrder::kFree) {
    if (direct.lowered) {
      choice.why = "free order: the bits follow the producer's layout, kept";
      return choice;
    }
    return refuse("a free-order reduce keeps the producer's layout (its bits follow it), and "
                  "only an axis wholly in registers is lowered there");
  }
  absl::StatusOr<Layout> friendly = reduce_friendly_layout(producer.shape, axis, warp_size, warps);
  if (!friendly.ok()) return refuse(std::string(friendly.status().message()));
  if (*friendly == producer) {
    choice.why = "the producer's layout is the friendly one";
    return choice;
  }
  ReduceCost converted = reduce_cost(*friendly, axis, warp_size, warps);
  converted.smem_trips += 1;  // the convert_layout itself
  const int64_t elems = producer.shape[0] * producer.shape[1];
  const bool fits = elems <= kMaxConvertElems;
  if (!fits) converted.lowered = false;
  if (weight(direct) <= weight(converted)) {
    if (!direct.lowered) {
      return refuse(fits ? std::string("the kept extent leaves the axis across lanes or warps, "
                                       "and the result would not be in its blocked layout")
                         : absl::StrFormat("the tile has %d elements and a layout conversion "
                                           "stages at most %d through shared memory",
                                           elems, kMaxConvertElems));
    }
    choice.why = absl::StrFormat("direct (weight %d) beats converting (weight %d)",
                                 weight(direct), weight(converted));
    return choice;
  }
  choice.reduce = *friendly;
  choice.convert = true;
  choice.why = direct.lowered
                   ? absl::StrFormat("convert (weight %d) beats direct (weight %d)",
                                     weight(converted), weight(direct))
                   : "convert: the producer's layout spreads the axis over lanes or warps";
  return choice;
}

absl::StatusOr<std::vector<float>> simulate_reduce_op(const std::vector<int64_t>& shape,
                                                      const tile::Op& op, int op_number,
                                                      int warp_size, int warps,
                                                      const std::vector<float>& x,
                                                      const std::vector<float>& init) {
  Layout producer;
  if (absl::Status s = blocked_layout(shape, warp_size, warps, &producer); !s.ok()) return s;
  absl::StatusOr<LayoutChoice> choice = select_reduce_layout(producer, op, op_number, warp_size, warps);
  if (!choice.ok()) return choice.status();
  absl::StatusOr<ReducePlan> plan = plan_reduce(choice->reduce, op, op_number);
  if (!plan.ok()) return plan.status();
  return simulate_reduce(choice->reduce, *plan, op.combine, x, init);
}

}  // namespace fixbits::codegen
