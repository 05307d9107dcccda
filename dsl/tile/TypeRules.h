// TypeRules: the typing rule of every tile op, shared by the Builder (to give
// results their types) and by validate() (to re-check a whole Program).
//
// Contract: infer_results(values, op, number, &out) reads only the types of the
// op's operands (and, for kFor, of its body arguments and yields), and either
// fills `out` with the result types or returns InvalidArgument whose message
// starts "<op name> #<number>: " and says which operand or attribute is wrong.
// It never crashes on a malformed op (bad ids are reported, not dereferenced).
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "dsl/tile/Program.h"

namespace fixbits::tile {

absl::Status infer_results(const std::vector<Type>& values, const Op& op, int number,
                           std::vector<Type>* out);

// kFor only: the types its body arguments take (iv, then one per init).
absl::Status loop_body_arg_types(const std::vector<Type>& values, const Op& op, int number,
                                 std::vector<Type>* out);

}  // namespace fixbits::tile
