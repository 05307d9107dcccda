// ReduceCandidates: the configurations worth timing for one reduction of one shape --
// the search space of the bench's tuning, as a library function, so an application tunes
// a reduction as the bench does (time each candidate's ReduceRunner, keep the fastest).
//
// Invariant: reduce_candidates is a pure function of its arguments (no device, no
// environment): the same list, in the same order, for the same inputs. For a pinned
// descriptor every candidate gives the same bits (the knobs are speed knobs of one
// pinned tree; jit's GPU tests show it config by config); for a free one they may differ,
// as free order allows. A candidate may still be refused by dsl::reduce_phases or
// ReduceRunner::create for this shape (a block wider than the strip, kept passes past
// the register bound, a cluster wider than the row's strips): a tuner skips those.
//
// The list, per base configuration (warps x elements a thread, at the options' lanes) that
// is valid (dsl::validate) and whose pass is at most twice the line (or 1024):
//   - the base itself;
//   - RMSNorm / softmax rows: the first N passes kept in registers (N = 1, 2, 4, ... and
//     the whole row's passes, within the register bound; with reg_cap R, pinned, each
//     again asking for the blocks an SM that R registers a thread allow; a whole row kept
//     also with R rows a block for each R of rows_per_block, rows >= R * SMs), and pinned, the
//     row's passes kept in shared memory (also asking for 2, 3, 4 blocks an SM; softmax
//     also with its kept e_i in shared memory, stage_exp; a whole row so kept also with R
//     rows a block for each R of rows_per_block, the next row a double buffer);
//   - pinned, where ReduceRunner::suggest_blocks_per_row gives P > 1: split rows with P
//     and 2P blocks a row (columns: also P/2), RMSNorm / softmax rows also in alternating
//     row order; where x passes 24 MiB, in row groups of 16 and 8 MiB (rows_per_launch);
//     RMSNorm / softmax rows on NVIDIA also as one cluster kernel for each P of
//     cluster_parts (its share of strips kept in registers, in shared memory -- softmax
//     also with its e_i there, stage_exp -- or none);
//   - pinned RMSNorm / softmax rows of 4 strips or more that do not split (P = 1) on
//     NVIDIA: the same cluster kernels for P = 2 and 4 of cluster_parts (P <= strips);
// then every pinned row candidate in one block or one cluster again with whole_strips
// where cols is a multiple of its pass extent, and (softmax, NVIDIA) every candidate again
// with divide_by_reciprocal.
#pragma once

#include <cstdint>
#include <vector>

#include "dsl/ReduceDesc.h"
#include "dsl/tile/ReduceProgram.h"

namespace fixbits::jit {

// The bench's 13 bases: warps x elements a thread from 1 x 8 to 16 x 32.
std::vector<dsl::ReduceConfig> default_reduce_configs();

struct CandidateOptions {
  int multiprocessors = 132;  // the device's SMs / CUs (runtime::DeviceInfo)
  int lanes = 32;             // 32 (NVIDIA) or 64 (gfx942: no clusters, no divide_by_reciprocal)
  std::vector<dsl::ReduceConfig> configs = default_reduce_configs();  // the bases
  std::vector<int> cluster_parts = {2, 4, 6, 8};  // cluster sizes P tried; empty: none
  // > 0: the register-capped kept-pass candidates (0: none). 48 by default since session
  // 30's H100 table, where softmax 8192 x 4096's 8 x 8 kernel ran 63.3 us capped to 48
  // registers (5 blocks an SM) against 88.7 us uncapped (docs/performance.md).
  int reg_cap = 48;
  // Rows a block takes in turn (rows_per_block) for the candidates that keep a whole
  // RMSNorm / softmax row in registers, and (pinned) in shared memory, where the next row
  // is a double buffer in flight (session 41); values <= 1 are ignored; empty: none. Empty by
  // default: their bits are the reference's (the interpreter, and the GPU test on an H100
  // in session 40), but on the H100 they won no softmax row (8 x 8 gained 3% at 8192 x
  // 4096, 16 x 4 lost its occupancy to the carried registers and the row's winner stayed
  // 16 x 4 with one row a block; docs/performance.md, session 40), so a tuner would only
  // spend time on them. The bench turns them on with FIXBITS_BENCH_ROWS_PER_BLOCK=2,4.
  std::vector<int> rows_per_block = {};
  bool whole_strips = true;        // the whole_strips candidates
  bool divide_by_reciprocal = true;  // the softmax divide_by_reciprocal candidates
};

std::vector<dsl::ReduceConfig> reduce_candidates(const dsl::ReduceDesc& desc, int64_t rows, int64_t cols,
                                                 const CandidateOptions& options = {});

}  // namespace fixbits::jit
