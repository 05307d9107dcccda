// ReduceCandidates: see ReduceCandidates.h.
#include "jit/ReduceCandidates.h"

#include <algorithm>

#include "dsl/FloatFormat.h"
#include "jit/ReduceRunner.h"

namespace fixbits::jit {
namespace {

// A kept-in-shared candidate `k`, and the same asking for 2, 3 and 4 blocks an SM
// (min_blocks_per_sm, label mb=N: registers capped to fit, the shared kept bytes and
// the threads permitting), since the registers, not the shared bytes, then bound how
// many blocks an SM holds (2048 threads and 227 KiB of shared memory an sm_90 SM; 64 KiB
// of LDS a gfx942 CU).
void add_staged(std::vector<dsl::ReduceConfig>& out, const dsl::ReduceDesc& desc, dsl::ReduceConfig k) {
  out.push_back(k);
  const int64_t threads = int64_t{k.lanes} * k.warps;
  // (staged_bytes_per_element counts both sets of a rows_per_block double buffer)
  const int64_t kept_bytes = k.keep_passes * dsl::pass_extent(desc, k) * dsl::staged_bytes_per_element(desc, k);
  for (int n : {2, 3, 4}) {
    const int64_t shared = k.lanes == 32 ? int64_t{227} << 10 : int64_t{64} << 10;
    if (n * threads > 2048 || n * (kept_bytes + 1024) > shared) break;
    k.min_blocks_per_sm = n;
    out.push_back(k);
  }
}

// Softmax's kept-in-shared candidate k (its row or share `passes` passes) again with its
// e_i in shared memory beside the kept x (stage_exp, label se=1), as many passes as the
// bound with the 4 more bytes an element allows; nothing for other ops.
void add_stage_exp(std::vector<dsl::ReduceConfig>& out, const dsl::ReduceDesc& desc, dsl::ReduceConfig k,
                   int64_t passes) {
  if (desc.op != dsl::ReduceOp::kSoftmax) return;
  k.stage_exp = true;
  k.keep_passes = static_cast<int>(std::min<int64_t>(passes, dsl::max_keep_passes(desc, k)));
  if (k.keep_passes > 0) add_staged(out, desc, k);
}

}  // namespace

// The wide ones (16 and 32 elements a thread) let one pass cover a whole row of 1024-16384
// elements: every load of a short row is in flight at once, and with keep_passes an
// RMSNorm/softmax row is read once.
std::vector<dsl::ReduceConfig> default_reduce_configs() {
  return {
      {.warps = 1, .elems_per_thread = 8},   {.warps = 2, .elems_per_thread = 8},
      {.warps = 4, .elems_per_thread = 4},   {.warps = 4, .elems_per_thread = 8},
      {.warps = 8, .elems_per_thread = 4},   {.warps = 8, .elems_per_thread = 8},
      {.warps = 16, .elems_per_thread = 4},  {.warps = 32, .elems_per_thread = 2},
      {.warps = 2, .elems_per_thread = 16},  {.warps = 4, .elems_per_thread = 16},
      {.warps = 8, .elems_per_thread = 16},  {.warps = 16, .elems_per_thread = 16},
      {.warps = 16, .elems_per_thread = 32},
  };
}

std::vector<dsl::ReduceConfig> reduce_candidates(const dsl::ReduceDesc& desc, int64_t rows, int64_t cols,
                                                 const CandidateOptions& o) {
  const int64_t line = desc.axis == dsl::ReduceAxis::kRow ? cols : rows;
  std::vector<dsl::ReduceConfig> configs;
  for (dsl::ReduceConfig c : o.configs) {
    c.lanes = o.lanes;
    if (!dsl::validate(c).ok()) continue;  // e.g. 32 warps of 64 lanes: over 1024 threads
    if (int64_t{c.warps} * c.lanes * c.elems_per_thread <= 2 * std::max<int64_t>(line, 1024)) {
      configs.push_back(c);
    }
  }
  std::vector<dsl::ReduceConfig> candidates(configs.begin(), configs.end());
  const bool two_pass = desc.op == dsl::ReduceOp::kRmsNorm || desc.op == dsl::ReduceOp::kSoftmax;
  for (dsl::ReduceConfig c : configs) {
    const dsl::ReduceConfig base = c;  // c gets the split knobs below
    if (two_pass && desc.axis == dsl::ReduceAxis::kRow) {
      // The first N passes kept in registers (label keep=N): powers of two and the
      // whole row's passes, no more than the row has and the registers allow.
      const int64_t need = (line - 1) / dsl::pass_extent(desc, c) + 1;
      const int64_t most = std::min<int64_t>(need, dsl::max_keep_passes(desc, c));
      // With reg_cap R, a pinned one also asks ptxas for as many blocks an SM as R
      // registers a thread allow (label mb=N): session 22's exp lowering took the 8 x 8
      // softmax kernel from 48 to 54 registers, 5 blocks an SM to 4; with mb=5 ptxas
      // fits it in 48 without spills, while 4 x 8 spills 212 bytes at its 48
      // (performance.md, session 23). A spilling candidate only costs tuning time; on by
      // default (CandidateOptions::reg_cap) since session 30.
      // A whole row kept (N = need) also takes R rows a block in turn for each R of
      // o.rows_per_block (label rb=R: the next row's kept x in flight while this row is
      // reduced) where the rows still give every SM a block (rows >= R * SMs).
      auto add_kept = [&](dsl::ReduceConfig k) {
        const int64_t cap = o.reg_cap;
        const int64_t threads = int64_t{k.lanes} * k.warps;
        const int64_t mb = cap > 0 ? 65536 / (threads * cap) : 0;
        const bool capped = desc.order == dsl::TreeOrder::kPinned && mb >= 2 &&
                            mb <= std::min<int64_t>(32, 2048 / threads);
        std::vector<int> rs = {1};
        if (k.keep_passes == need) {
          for (int r : o.rows_per_block) {
            if (r > 1 && rows >= int64_t{r} * o.multiprocessors) rs.push_back(r);
          }
        }
        for (int r : rs) {
          k.rows_per_block = r;
          k.min_blocks_per_sm = 0;
          candidates.push_back(k);
          if (capped) {
            k.min_blocks_per_sm = static_cast<int>(mb);
            candidates.push_back(k);
          }
        }
      };
      for (int64_t n = 1; n <= most; n *= 2) {
        dsl::ReduceConfig k = c;
        k.keep_passes = static_cast<int>(n);
        add_kept(k);
      }
      if (most == need && (need & (need - 1)) != 0) {
        dsl::ReduceConfig k = c;
        k.keep_passes = static_cast<int>(need);
        add_kept(k);
      }
      // And in shared memory (label sh=1): as many passes as the row has, up to the
      // shared bound, so the registers stay free across the reduction.
      if (desc.order == dsl::TreeOrder::kPinned) {
        dsl::ReduceConfig k = c;
        k.keep_in_shared = true;
        k.keep_passes = static_cast<int>(std::min<int64_t>(need, dsl::max_keep_passes(desc, k)));
        if (k.keep_passes > 0) add_staged(candidates, desc, k);
        // Softmax also with the kept passes' e_i in shared memory (label se=1: one exp
        // an element instead of two, 4 more shared bytes an element).
        add_stage_exp(candidates, desc, k, need);
        // A whole row in shared memory also with R rows a block for each R of
        // o.rows_per_block (label sh=1 rb=R: the next row's copies in flight in a double
        // buffer, no register carried; each row read into registers once), where the
        // bounds hold the whole row and the rows give every SM a block.
        for (int r : o.rows_per_block) {
          dsl::ReduceConfig kr = c;
          kr.keep_in_shared = true;
          kr.rows_per_block = r;
          if (r > 1 && rows >= int64_t{r} * o.multiprocessors && dsl::max_keep_passes(desc, kr) >= need) {
            kr.keep_passes = static_cast<int>(need);
            add_staged(candidates, desc, kr);
          }
        }
      }
    }
    // Split rows (or a pinned column sum's column groups): the suggested P and twice
    // it (more blocks in flight per SM); columns also half of it (a smaller workspace).
    // RMSNorm/softmax rows also try each in alternating row order (label alt=1: every
    // later phase starts on the rows the phase before read last, still in L2).
    const int p = ReduceRunner::suggest_blocks_per_row(desc, c, rows, cols, o.multiprocessors);
    if (p > 1) {
      const bool by_row = desc.axis == dsl::ReduceAxis::kRow;
      const int64_t most = by_row ? std::min<int64_t>(dsl::strip_count(desc, cols), 1024)
                                  : dsl::max_column_parts(desc, c);
      auto add_split = [&](int parts) {
        c.blocks_per_row = parts;
        candidates.push_back(c);
        if (two_pass && by_row) {
          dsl::ReduceConfig k = c;
          k.alternate_row_order = true;
          candidates.push_back(k);
        }
      };
      add_split(p);
      if (2 * p <= most) add_split(2 * p);
      if (!by_row && p / 2 > 1) add_split(p / 2);
    }
    // Row groups (label rpl=G): split RMSNorm/softmax rows whose x passes the L2 run
    // every phase on G rows before the next G rows, so the later phases' reads of x hit
    // L2; G rows of x hold 16 or 8 MiB, and P is suggested for G rows (more blocks per
    // row, as each launch has fewer rows).
    const size_t x_bytes = static_cast<size_t>(rows * cols) * dtype_bits(desc.in_dtype) / 8;
    if (p > 1 && two_pass && desc.axis == dsl::ReduceAxis::kRow && x_bytes > (size_t{24} << 20)) {
      const size_t row_bytes = static_cast<size_t>(cols) * dtype_bits(desc.in_dtype) / 8;
      for (size_t mib : {16, 8}) {
        const int64_t g = static_cast<int64_t>(std::max<size_t>((mib << 20) / row_bytes, 1));
        if (g >= rows) continue;
        const int pg = ReduceRunner::suggest_blocks_per_row(desc, base, g, cols, o.multiprocessors);
        if (pg < 2) continue;
        for (int parts : {pg, 2 * pg}) {
          if (parts > std::min<int64_t>(dsl::strip_count(desc, cols), 1024)) break;
          dsl::ReduceConfig k = base;
          k.blocks_per_row = parts;
          k.rows_per_launch = g;
          candidates.push_back(k);
        }
      }
    }
    // Cluster rows (label cl=1; NVIDIA sm_90): an RMSNorm/softmax split row as one
    // kernel, its P = 2, 4, 6, 8 blocks one thread-block cluster, each keeping its share of
    // the row's strips in registers (keep=K strips a block; at most the register bound,
    // then the rest is read again), so x is read from memory once instead of twice
    // (softmax: three times); and each P once more keeping nothing (keep=0).
    // Rows long enough that one block holds 4 strips or more (2048 x 16384: the row in
    // 64 KB of registers, 2 blocks an SM, 0.625 of the copy on an H100 where one strip a
    // block reaches 0.824; fewer blocks in flight is the suspect, not measured) also try
    // the cluster kernel with P = 2 and 4 of cluster_parts where the rows alone would not
    // split (4 x 4096 as 4 blocks of one strip: the shape of 8192 x 4096's kernel).
    const int64_t strips = dsl::strip_count(desc, cols);
    const bool long_row = p <= 1 && strips >= 4;
    if ((p > 1 || long_row) && two_pass && desc.axis == dsl::ReduceAxis::kRow &&
        desc.order == dsl::TreeOrder::kPinned && o.lanes == 32) {
      for (int parts : o.cluster_parts) {
        if (parts > strips || (long_row && parts > 4)) break;
        dsl::ReduceConfig k = base;
        k.blocks_per_row = parts;
        k.cluster_rows = true;
        const int64_t share = (strips - 1) / parts + 1;
        k.keep_passes = static_cast<int>(std::min<int64_t>(share, dsl::max_keep_passes(desc, k)));
        candidates.push_back(k);  // a config whose block exceeds the strip fails to build: skipped
        // And keeping nothing: the block reads its share again right after the cluster
        // barrier, while the share (the row / P) is likely still in the L2, with no
        // registers held across the barrier (occupancy, which the kept share costs).
        // Its share in shared memory instead (label sh=1): cp.async copies, read back after
        // the barrier, no registers held across it.
        dsl::ReduceConfig sh = k;
        sh.keep_in_shared = true;
        sh.keep_passes = static_cast<int>(std::min<int64_t>(share, dsl::max_keep_passes(desc, sh)));
        if (sh.keep_passes > 0) add_staged(candidates, desc, sh);
        add_stage_exp(candidates, desc, sh, share);  // softmax: with its e_i there too
        if (k.keep_passes > 0) {
          k.keep_passes = 0;
          candidates.push_back(k);
        }
      }
    }
  }
  // Rows of whole passes (label ws=1): each pinned row candidate in one block or one
  // cluster again without per-element masks (whole_strips) where cols is a multiple of its
  // pass extent (o.whole_strips).
  if (desc.axis == dsl::ReduceAxis::kRow && desc.order == dsl::TreeOrder::kPinned && o.whole_strips) {
    const size_t end = candidates.size();
    for (size_t i = 0; i < end; ++i) {
      dsl::ReduceConfig w = candidates[i];
      if ((w.blocks_per_row != 1 && !w.cluster_rows) || cols % dsl::pass_extent(desc, w) != 0) continue;
      w.whole_strips = true;
      candidates.push_back(w);
    }
  }
  // Softmax's division (label rd=1): every candidate again with one reciprocal and two
  // fmas a register instead of a division each (ReduceConfig.divide_by_reciprocal; the
  // same bits; NVIDIA), with o.divide_by_reciprocal.
  if (desc.op == dsl::ReduceOp::kSoftmax && o.divide_by_reciprocal && o.lanes == 32) {
    const size_t end = candidates.size();
    for (size_t i = 0; i < end; ++i) {
      dsl::ReduceConfig r = candidates[i];
      r.divide_by_reciprocal = true;
      candidates.push_back(r);
    }
  }
  return candidates;
}

}  // namespace fixbits::jit
