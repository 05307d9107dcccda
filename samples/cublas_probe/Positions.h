// Positions: does an output element's reduction order depend on where in D it sits?
// The probe and the match assume it does not (CublasBlackBox.h); a kernel that hands
// tiles different K ranges (stream-K, a split decided per tile) breaks that, and no
// single descriptor can then reproduce it.
//
// Contract: every experiment fills ALL rows of A with one vector a and ALL columns of
// B with one vector b, so every element of D is the same dot product; any difference
// between elements is the kernel's order moving with the position.
//   1. `draws` random (a, b) pairs: how many distinct output values D holds.
//   2. The pair walk replicated (r at 0, +L at m, -L at m + 1, for m = 1 .. K-2, one
//      full-shape call each): each element's walk string; elements are grouped by it.
// It prints the groups (count, bounding rows and columns, the walk string of a
// sampled element) and a map of D in at most 48 x 64 blocks, one letter per group,
// '*' where a block mixes groups. Walks longer than `max_k` are skipped (one call per
// m). Errors of the box come back as a Status.
#pragma once

#include <cstdio>

#include "absl/status/status.h"
#include "profile/CublasBlackBox.h"

namespace fixbits::samples {

absl::Status print_positions(profile::CublasBlackBox& box, int draws, int64_t max_k,
                             std::FILE* out);

}  // namespace fixbits::samples
