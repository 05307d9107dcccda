// ScanSlices: see ScanSlices.h. Invariant: a class of the result is base's unless
// exactly one slice changed it; appended classes keep their slice's order; a variant's
// seen points are base's unless slices gave it others, all the same.
#include "profile/ScanSlices.h"

#include "absl/strings/str_format.h"

namespace fixbits::profile {

absl::StatusOr<CublasTable> merge_scan_slices(const CublasTable& base,
                                              const std::vector<CublasTable>& slices) {
  CublasTable out = base;
  const size_t classes0 = base.classes.size();
  std::vector<int> changed_by(classes0, -1);
  std::vector<int> moved_by(base.variants.size(), -1);
  for (size_t j = 0; j < slices.size(); ++j) {
    const CublasTable& s = slices[j];
    auto refuse = [&](const char* field, const std::string& what) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "merge_scan_slices: slice %d is not a slice of this base: its %s %s.", j, field, what));
    };
    if (s.arch != base.arch || s.library != base.library) {
      return refuse("arch/library", "are " + s.arch + "/" + s.library);
    }
    if (s.maps != base.maps) return refuse("maps", "differ");
    if (s.classes.size() < classes0) {
      return refuse("classes", absl::StrFormat("number %d, under base's %d", s.classes.size(), classes0));
    }
    if (s.variants.size() != base.variants.size()) {
      return refuse("variants", absl::StrFormat("number %d, not %d", s.variants.size(), base.variants.size()));
    }
    std::vector<int> place(s.classes.size());
    for (size_t c = 0; c < s.classes.size(); ++c) {
      if (c < classes0) {
        place[c] = static_cast<int>(c);
        if (s.classes[c] == base.classes[c]) continue;
        if (changed_by[c] >= 0) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "merge_scan_slices: class %d was changed by slice %d and by slice %d; slices of "
              "one run visit disjoint classes.", c, changed_by[c], j));
        }
        changed_by[c] = static_cast<int>(j);
        out.classes[c] = s.classes[c];
      } else {
        place[c] = static_cast<int>(out.classes.size());
        out.classes.push_back(s.classes[c]);
      }
    }
    for (size_t v = 0; v < s.variants.size(); ++v) {
      const TableVariant& sv = s.variants[v];
      const TableVariant& bv = base.variants[v];
      if (sv.family != bv.family || !(sv.key == bv.key) || sv.shapes != bv.shapes) {
        return refuse("variants", absl::StrFormat("differ at variant %d", v));
      }
      if (sv.seen != bv.seen) {
        // A run that asked for lost shapes (find_points) gave variants seen points; two
        // that found different ones are not one base's runs.
        if (out.variants[v].seen != bv.seen && out.variants[v].seen != sv.seen) {
          return refuse("variants", absl::StrFormat("seen points differ at variant %d", v));
        }
        out.variants[v].seen = sv.seen;
      }
      if (sv.cls < 0 || sv.cls >= static_cast<int>(s.classes.size())) {
        return refuse("variants", absl::StrFormat("point variant %d at class %d", v, sv.cls));
      }
      if (sv.cls == bv.cls) continue;
      if (moved_by[v] >= 0) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "merge_scan_slices: variant %d was moved by slice %d and by slice %d; slices of one "
            "run visit disjoint classes.", v, moved_by[v], j));
      }
      moved_by[v] = static_cast<int>(j);
      out.variants[v].cls = place[static_cast<size_t>(sv.cls)];
    }
  }
  return out;
}

}  // namespace fixbits::profile
