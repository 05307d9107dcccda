// ReducePhases: a reduction's split kernels (dsl::reduce_phases) run on the program
// interpreter, for the codegen tests that compare against them (reduce_split_test,
// reduce_cluster_test, reduce_row_order_test, reduce_rows_per_block_test, reduce_staged_test,
// reduce_whole_strips_test, column_split_test).
// Invariant: reduce_buffers gives x and w as drawn, y of the op's output length filled
// with 0xdead (an unwritten y element shows), and the workspaces ws/wsm/wss filled with
// NaN bytes (an unwritten entry reads as NaN, which no plain row's result is);
// run_reduce_phases runs every phase block by block, in order, on one such set (with
// cols, and rows for a phase that walks the rows backward), and returns y's bits;
// run_one_kernel runs dsl::reduce's one kernel over the blocks its grid names (rows,
// rows/R, cols); same_bits compares two runs' bits with memcmp; phases_message gives
// reduce_phases' "ok" or error message;
// run_clusters runs a cluster program (grid row_blocks) a cluster at a time over every
// row on one such set and returns y's bits; run_cluster_config builds a cluster_rows
// config's one program (an error if there is not exactly one) and runs it so; phase_list prints the phases' names, grids
// and parameters; mismatch_with_reference says whether a run's y bits are the
// reference's (an empty string) or how they are not; cluster_rows_mismatch says it for a
// cluster program over the cluster tests' row lengths.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "dsl/reference/Reference.h"
#include "dsl/tile/ReduceProgram.h"
#include "tests/codegen/ProgramInterpreter.h"
#include "tests/codegen/ReduceInputs.h"

namespace fixbits::testing {

inline Buffers reduce_buffers(const dsl::ReduceDesc& d, const dsl::reference::ReduceProblem& p) {
  const bool elementwise = d.op == dsl::ReduceOp::kRmsNorm || d.op == dsl::ReduceOp::kSoftmax;
  const size_t ws = static_cast<size_t>(p.rows * dsl::strip_count(d, p.cols));
  Buffers mem;
  mem["x"] = {d.in_dtype, p.x};
  mem["w"] = {d.in_dtype, p.w};
  mem["y"] = {d.out_dtype, std::vector<uint32_t>(elementwise ? p.x.size() : p.rows, 0xdeadu)};
  for (const char* name : {"ws", "wsm", "wss"}) mem[name] = {DType::kF32, std::vector<uint32_t>(ws, 0xffffffffu)};
  return mem;
}

// "name@grid(param,param,) " per phase, in launch order: what a test of the phases'
// documented names, grids and parameter lists compares.
inline std::string phase_list(const std::vector<tile::Program>& phases) {
  std::string s;
  for (const tile::Program& p : phases) {
    s += p.name + "@" + p.grid + "(";
    for (const tile::Param& prm : p.params) s += prm.name + ",";
    s += ") ";
  }
  return s;
}

inline absl::StatusOr<std::vector<uint32_t>> run_reduce_phases(const dsl::ReduceDesc& d,
                                                              const dsl::ReduceConfig& cfg,
                                                              const dsl::reference::ReduceProblem& p) {
  absl::StatusOr<std::vector<tile::Program>> phases = dsl::reduce_phases(d, cfg);
  if (!phases.ok()) return phases.status();
  Buffers mem = reduce_buffers(d, p);
  for (const tile::Program& prog : *phases) {
    if (prog.grid != "rows" && prog.grid != "row_blocks") {
      return absl::InternalError("unexpected grid " + prog.grid);
    }
    const int64_t blocks = prog.grid == "row_blocks" ? p.rows * cfg.blocks_per_row : p.rows;
    for (int64_t b = 0; b < blocks; ++b) {
      absl::Status s = run_block(prog, b, {{"cols", p.cols}, {"rows", p.rows}}, {{"eps", p.eps}}, mem, cfg.lanes);
      if (!s.ok()) return s;
    }
  }
  return mem["y"].bits;
}

// The one kernel of (d, cfg) (dsl::reduce) over every block dsl::grid_blocks gives its
// grid, on one reduce_buffers set, with cols and rows; y's bits.
inline absl::StatusOr<std::vector<uint32_t>> run_one_kernel(const dsl::ReduceDesc& d, const dsl::ReduceConfig& cfg,
                                                           const dsl::reference::ReduceProblem& p) {
  absl::StatusOr<tile::Program> prog = dsl::reduce(d, cfg);
  if (!prog.ok()) return prog.status();
  absl::StatusOr<int64_t> blocks = dsl::grid_blocks(prog->grid, p.rows, p.cols, 1);
  if (!blocks.ok()) return blocks.status();
  Buffers mem = reduce_buffers(d, p);
  for (int64_t b = 0; b < *blocks; ++b) {
    absl::Status s = run_block(*prog, b, {{"cols", p.cols}, {"rows", p.rows}}, {{"eps", p.eps}}, mem, cfg.lanes);
    if (!s.ok()) return s;
  }
  return mem["y"].bits;
}

// What dsl::reduce_phases(d, c) says: "ok", or its error's message (the knob-error tests).
inline std::string phases_message(const dsl::ReduceDesc& d, const dsl::ReduceConfig& c) {
  absl::StatusOr<std::vector<tile::Program>> r = dsl::reduce_phases(d, c);
  return r.ok() ? std::string("ok") : std::string(r.status().message());
}

// Whether two runs' bits are the same (memcmp).
inline bool same_bits(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(uint32_t)) == 0;
}

// The cluster program `prog` (grid row_blocks, clusters of prog.cluster blocks, each
// cluster run together up to its barriers: run_cluster) over every row; y's bits.
inline absl::StatusOr<std::vector<uint32_t>> run_clusters(const tile::Program& prog, const dsl::ReduceDesc& d,
                                                          const dsl::reference::ReduceProblem& p, int lanes) {
  if (prog.grid != "row_blocks") return absl::InternalError("unexpected grid " + prog.grid);
  Buffers mem = reduce_buffers(d, p);
  for (int64_t row = 0; row < p.rows; ++row) {
    absl::Status s = run_cluster(prog, row * prog.cluster, {{"cols", p.cols}}, {{"eps", p.eps}}, mem, lanes);
    if (!s.ok()) return s;
  }
  return mem["y"].bits;
}

// dsl::reduce_phases(d, cfg) for a cluster_rows config: exactly one program, run by
// run_clusters; y's bits.
inline absl::StatusOr<std::vector<uint32_t>> run_cluster_config(const dsl::ReduceDesc& d, const dsl::ReduceConfig& cfg,
                                                                const dsl::reference::ReduceProblem& p) {
  absl::StatusOr<std::vector<tile::Program>> progs = dsl::reduce_phases(d, cfg);
  if (!progs.ok()) return progs.status();
  if (progs->size() != 1) {
    return absl::InternalError(absl::StrCat("a cluster_rows config built ", progs->size(), " programs, not 1"));
  }
  return run_clusters(progs->front(), d, p, cfg.lanes);
}

// y's bits from run(p) against dsl::reference::reduce(d, p): "" when they are
// memcmp-equal, else what differed (or the error either side returned).
template <class Run>
std::string mismatch_with_reference(const dsl::ReduceDesc& d, const dsl::reference::ReduceProblem& p, Run run) {
  absl::StatusOr<std::vector<uint32_t>> ref = dsl::reference::reduce(d, p);
  if (!ref.ok()) return absl::StrCat("reference: ", ref.status().message());
  absl::StatusOr<std::vector<uint32_t>> got = run(p);
  if (!got.ok()) return absl::StrCat("run: ", got.status().message());
  if (got->size() != ref->size()) return absl::StrCat(got->size(), " outputs, the reference has ", ref->size());
  if (std::memcmp(got->data(), ref->data(), ref->size() * 4) != 0) return "bits differ from the reference";
  return "";
}

// A cluster program's rows against the reference: 2 rows of each of 1, 257, 2000 and 4099
// columns, without and with specials (fused_row_problem, seed cols * seed_step + salt +
// specials), each run a cluster at a time (run_clusters, 32 lanes); *cases counts the
// cases run. "" when every case is memcmp-equal to the reference, else each one that is
// not ("cols N specials S: how"), one a line.
inline std::string cluster_rows_mismatch(const tile::Program& prog, const dsl::ReduceDesc& d, uint32_t seed_step,
                                         uint32_t salt, int* cases) {
  std::string out;
  for (int64_t cols : {int64_t{1}, int64_t{257}, int64_t{2000}, int64_t{4099}}) {
    for (int specials = 0; specials < 2; ++specials) {
      const auto prob = fused_row_problem(d, 2, cols, static_cast<uint32_t>(cols * seed_step + salt + specials),
                                          specials);
      const std::string m =
          mismatch_with_reference(d, prob, [&](const auto& q) { return run_clusters(prog, d, q, 32); });
      if (!m.empty()) absl::StrAppend(&out, "cols ", cols, " specials ", specials, ": ", m, "\n");
      ++*cases;
    }
  }
  return out;
}

}  // namespace fixbits::testing
