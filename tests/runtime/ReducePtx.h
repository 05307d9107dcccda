// ReducePtx: kernel texts of dsl::reduce programs from our codegen, for CPU tests of
// the verify hook and the autotuner (real PTX / AMDGCN, not hand-written toys).
// Invariant: a text is compiled once per (descriptor, config, target) per process;
// errors from dsl::reduce or codegen::compile come back unchanged.
#pragma once

#include <map>
#include <string>
#include <tuple>

#include "absl/status/statusor.h"
#include "codegen/Compile.h"
#include "dsl/tile/ReduceProgram.h"

namespace fixbits::runtime::testing {

inline absl::StatusOr<std::string> reduce_text(
    const dsl::ReduceDesc& d, const dsl::ReduceConfig& c,
    codegen::Target target = codegen::Target::kNvptxSm90a) {
  static auto* memo = new std::map<std::tuple<std::string, int, int, int, int>, std::string>();
  const auto key = std::make_tuple(dsl::to_string(d), c.warps, c.elems_per_thread, c.lanes,
                                   static_cast<int>(target));
  if (auto it = memo->find(key); it != memo->end()) return it->second;
  absl::StatusOr<tile::Program> prog = dsl::reduce(d, c);
  if (!prog.ok()) return prog.status();
  absl::StatusOr<codegen::CompiledKernel> k = codegen::compile(*prog, target);
  if (!k.ok()) return k.status();
  memo->emplace(key, k->text);
  return k->text;
}

}  // namespace fixbits::runtime::testing
