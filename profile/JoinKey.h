// JoinKey: a cuBLASLt answer key the table lacks becomes one of its variants, in the
// class it belongs to. widen_map (WidenMap.h) joins the keys first met in new cells;
// fixbits-cublas-scan --probe-at joins the answer a shape gets on this GPU when the map's
// GPU never gave it (session 37's run 4: an H100 answered f16 14497x1x364 with id 13
// custom 13, a key the H200-scanned map lacks, so the match found no descriptor and the
// probe had no variant to probe).
//
// Contract of join_key(table, state, family, key, note):
//   * a key the table holds for `family` (find_variant) comes back as it is (kHeld);
//   * else it becomes a new variant (no shapes, no seen points; state.shapes grows by
//     one) of the one class of `family` that contains it (kGained), or, when none or two
//     do, of the class that fixes key_mask(key) and the mask of every class of `family`
//     with the key's coarse values (as rekey_table keys a split class's parts, so no
//     earlier variant belongs to it): the table's class of exactly those fields if it has
//     one (a class an earlier join made), else a new class without a descriptor whose
//     note is `note` (kNewClass).
// join_answer_at(table, state, s, answer, note, joined): the probe point of shape s where
// cuBLASLt answered `answer` (point_of_shape), joining the answer's key first when the
// table lacks it; a joined variant keeps s as a seen point (TableVariant::seen, and in
// state.shapes), so a resumed table still has the shape to probe it at. *joined (if
// given) says how the key came in.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "profile/CublasKey.h"
#include "profile/CublasScan.h"
#include "profile/CublasTable.h"
#include "runtime/CublasLt.h"

namespace fixbits::profile {

struct JoinedKey {
  enum class How { kHeld, kGained, kNewClass };
  int variant = -1;
  int cls = -1;
  How how = How::kHeld;
};

JoinedKey join_key(CublasTable& table, ScanState& state, const std::string& family,
                   const CublasKey& key, std::string_view note);

absl::StatusOr<ProbePoint> join_answer_at(CublasTable& table, ScanState& state,
                                          const runtime::GemmShape& s,
                                          const runtime::AlgoConfig& answer, std::string_view note,
                                          JoinedKey* joined = nullptr);

}  // namespace fixbits::profile
