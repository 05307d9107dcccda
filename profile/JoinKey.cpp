// JoinKey: a key the table lacks joins it as a variant of its class (JoinKey.h).
// Invariant: after a join every variant of the table is contained by its class, and no
// variant held before the join changes its class.
#include "profile/JoinKey.h"

#include <algorithm>
#include <utility>

#include "profile/CublasClass.h"

namespace fixbits::profile {
namespace {

// The fields a new class of `key` fixes: key_mask(key) and the mask of every class of
// `family` with the key's coarse values (a class the probes split by a finer field).
uint32_t new_class_mask(const CublasTable& t, const std::string& family, const CublasKey& key) {
  uint32_t mask = key_mask(key);
  for (const TableClass& c : t.classes) {
    if (c.family == family && contains(class_of(c.cls.values, kCoarseFields), key)) {
      mask |= c.cls.mask;
    }
  }
  return mask;
}

}  // namespace

JoinedKey join_key(CublasTable& table, ScanState& state, const std::string& family,
                   const CublasKey& key, std::string_view note) {
  JoinedKey out;
  if (int v = find_variant(table, family, key); v >= 0) {
    out.variant = v;
    out.cls = table.variants[v].cls;
    return out;
  }
  int containing = -1, count = 0;
  for (size_t c = 0; c < table.classes.size(); ++c) {
    if (table.classes[c].family == family && contains(table.classes[c].cls, key)) {
      containing = static_cast<int>(c);
      ++count;
    }
  }
  out.how = JoinedKey::How::kGained;
  out.cls = containing;
  if (count != 1) {
    const CublasClass cc = class_of(key, new_class_mask(table, family, key));
    auto same = std::find_if(table.classes.begin(), table.classes.end(), [&](const TableClass& c) {
      return c.family == family && c.cls == cc;
    });
    if (same != table.classes.end()) {
      out.cls = static_cast<int>(same - table.classes.begin());
    } else {
      TableClass tc;
      tc.family = family;
      tc.cls = cc;
      tc.note = std::string(note);
      out.cls = static_cast<int>(table.classes.size());
      table.classes.push_back(std::move(tc));
      out.how = JoinedKey::How::kNewClass;
    }
  }
  if (state.shapes.size() < table.variants.size()) state.shapes.resize(table.variants.size());
  out.variant = static_cast<int>(table.variants.size());
  table.variants.push_back(
      TableVariant{.family = family, .key = key, .cls = out.cls, .shapes = 0, .seen = {}});
  state.shapes.emplace_back();
  return out;
}

absl::StatusOr<ProbePoint> join_answer_at(CublasTable& table, ScanState& state,
                                          const runtime::GemmShape& s,
                                          const runtime::AlgoConfig& answer, std::string_view note,
                                          JoinedKey* joined) {
  const JoinedKey j = join_key(table, state, family_of(s), answer_of(answer).key, note);
  if (joined != nullptr) *joined = j;
  absl::StatusOr<ProbePoint> pt = point_of_shape(table, s, answer, nullptr);
  if (!pt.ok()) return pt.status();
  if (j.how != JoinedKey::How::kHeld) {
    table.variants[j.variant].seen.push_back(*pt);
    state.shapes[j.variant].points[{pt->k, pt->splitk}] = {pt->m, pt->n};
  }
  return pt;
}

}  // namespace fixbits::profile
