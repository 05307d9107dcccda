// ProgramInterpreter (tests only): runs a tile Program on the CPU, one block at a
// time, with the semantics codegen gives each op, so the split-row programs of
// dsl::reduce_phases and the programs of dsl::gemm can be checked bit for bit
// against the CPU reference without a GPU.
//
// Contract: covers the ops dsl::reduce / reduce_phases / gemm emit (program_id,
// const, arange, splat, binary, unary, compare, select, cast, reshape, load, store,
// reduce, for, fma, dot, xor_permute, mma_sync, wgmma). Every arithmetic op is one
// binary32 operation (the test is built with -ffp-contract=off); fma is std::fma;
// max/min and reduce combines are codegen::combine_f32 (NaN propagating); a reduce
// runs codegen::simulate_plan on the blocked layout codegen gives the tile, which is
// what LowerReduce emits. fp8 (e4m3/e5m2) tiles are held as their exact floats.
// Matrix ops are executed as the PTX ISA defines them on the fragments: per warp
// (mma_sync m16n8k16) or per warpgroup of 4 warps (wgmma m64nNk16/k32, A from each
// warp's registers in the mma.sync layout, B from the FIRST warp of the group, as
// LowerMma's shared slot does) the thread-held values are gathered into A, B and C
// by the ISA fragment layouts (written out below, independently of GemmProgram),
// every D element is MmaModel::mma(C, A row, B column) with the sm_90 model (the
// one dsl::reference::gemm uses), and D is scattered back in the C layout. Loads outside a buffer (under a
// true mask) and stores outside one fail the run with a Status naming the op and
// offset, so a program that would touch memory it must not is caught. An f32 NaN
// is stored as 0x7fffffff (PTX's canonical NaN); f16/bf16 through to_bits.
// Example:
//   Buffers mem{{"x", {DType::kF32, bits}}, {"y", {DType::kF32, out}}};
//   run_block(program, /*block=*/0, {{"cols", 1000}}, {}, mem, /*lanes=*/32);
//   run_block(gemm_main, /*block=*/{x, y, z}, ints, floats, mem, 32);   // 3-D grid
//   run_cluster(cluster_prog, /*first_block=*/row * P, ints, floats, mem, 32);  // P blocks
// A cluster barrier (kClusterBarrier) runs only under run_cluster: all blocks of the
// cluster reach it before any passes it (run_block fails on one).
#pragma once

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "codegen/Layout.h"
#include "codegen/ReducePlan.h"
#include "codegen/SelectLayout.h"
#include "dsl/FloatFormat.h"
#include "dsl/reference/ExpF32.h"
#include "dsl/reference/MmaModel.h"
#include "dsl/tile/Program.h"

namespace fixbits::testing {

struct HostBuffer {
  DType dtype = DType::kF32;
  std::vector<uint32_t> bits;  // one element per entry, low bits
};
using Buffers = std::map<std::string, HostBuffer>;

namespace interp_detail {

// A value: floats in f (f16/bf16 held exactly as floats), integers and i1 in i.
struct Val {
  std::vector<float> f;
  std::vector<int64_t> i;
  bool is_float = false;
  size_t size() const { return is_float ? f.size() : i.size(); }
};

class Interpreter {
 public:
  Interpreter(const tile::Program& p, std::array<int64_t, 3> block,
              const std::map<std::string, int64_t>& ints,
              const std::map<std::string, float>& floats, Buffers& mem, int lanes)
      : p_(p), block_(block), mem_(mem), lanes_(lanes), vals_(p.values.size()) {
    for (size_t k = 0; k < p.params.size(); ++k) {
      const tile::Param& prm = p.params[k];
      Val v;
      if (prm.type.elem == tile::Elem::kPtr) {
        ptr_name_[static_cast<int>(k)] = prm.name;
        v.i = {0};
      } else if (prm.type.elem == tile::Elem::kF32) {
        v.is_float = true;
        v.f = {floats.count(prm.name) ? floats.at(prm.name) : 0.0f};
      } else {
        v.i = {ints.count(prm.name) ? ints.at(prm.name) : 0};
      }
      vals_[k] = v;
    }
  }

  absl::Status run() { return run_ops(p_.body); }
  // Runs the top-level ops from where the last call stopped up to the next cluster
  // barrier (stepping over it) or the end; *done is set at the end.
  absl::Status run_segment(bool* done) {
    for (; next_ < p_.body.size(); ++next_) {
      if (p_.body[next_].kind == tile::OpKind::kClusterBarrier) {
        ++next_;
        *done = false;
        return absl::OkStatus();
      }
      if (absl::Status s = step(p_.body[next_]); !s.ok()) return s;
    }
    *done = true;
    return absl::OkStatus();
  }

 private:
  const tile::Type& type(int id) const { return p_.values[id]; }
  static bool is_f(tile::Elem e) {  // held in Val::f (fp8 storage as its exact float)
    return e == tile::Elem::kF32 || e == tile::Elem::kF16 || e == tile::Elem::kBF16 ||
           tile::is_fp8(e);
  }
  // Operand a at element r (scalars broadcast).
  float fat(int id, size_t r) const { const Val& v = vals_[id]; return v.f.size() == 1 ? v.f[0] : v.f[r]; }
  int64_t iat(int id, size_t r) const { const Val& v = vals_[id]; return v.i.size() == 1 ? v.i[0] : v.i[r]; }
  static size_t count(const tile::Type& t) {
    size_t n = 1;
    for (int64_t d : t.shape) n *= static_cast<size_t>(d);
    return n;
  }
  static int64_t wrap(tile::Elem e, int64_t x) {
    if (e == tile::Elem::kI32) return static_cast<int32_t>(static_cast<uint32_t>(x));
    if (e == tile::Elem::kI1) return x & 1;
    return x;
  }
  static float canon(float x) { return std::isnan(x) ? std::bit_cast<float>(0x7fffffffu) : x; }

  absl::Status fail(const tile::Op& op, const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrFormat("%s: %s", tile::op_name(op), what));
  }

  absl::Status run_ops(const std::vector<tile::Op>& ops) {
    for (const tile::Op& op : ops) {
      if (absl::Status s = step(op); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

  absl::Status step(const tile::Op& op) {
    Val out;
    const tile::Type* rt = op.results.empty() ? nullptr : &type(op.results[0]);
    const size_t n = rt ? count(*rt) : 0;
    if (rt) out.is_float = is_f(rt->elem);
    switch (op.kind) {
      case tile::OpKind::kProgramId:
        if (op.imm < 0 || op.imm > 2) return fail(op, "axis out of range");
        out.i = {block_[static_cast<size_t>(op.imm)]};
        break;
      case tile::OpKind::kConst:
        if (out.is_float) out.f = {std::bit_cast<float>(op.fbits)};
        else out.i = {op.imm};
        break;
      case tile::OpKind::kArange:
        for (int64_t k = 0; k < op.imm; ++k) out.i.push_back(k);
        break;
      case tile::OpKind::kSplat:
        if (out.is_float) out.f.assign(n, fat(op.args[0], 0));
        else out.i.assign(n, iat(op.args[0], 0));
        break;
      case tile::OpKind::kBinary:
        for (size_t r = 0; r < n; ++r) {
          if (out.is_float) {
            float a = fat(op.args[0], r), b = fat(op.args[1], r), v = 0;
            switch (op.bin) {
              case tile::BinaryOp::kAdd: v = a + b; break;
              case tile::BinaryOp::kSub: v = a - b; break;
              case tile::BinaryOp::kMul: v = a * b; break;
              case tile::BinaryOp::kDiv: v = a / b; break;
              case tile::BinaryOp::kMax: v = codegen::combine_f32(tile::Combine::kMax, a, b); break;
              case tile::BinaryOp::kMin: v = codegen::combine_f32(tile::Combine::kMin, a, b); break;
            }
            out.f.push_back(v);
          } else {
            int64_t a = iat(op.args[0], r), b = iat(op.args[1], r), v = 0;
            switch (op.bin) {
              case tile::BinaryOp::kAdd: v = a + b; break;
              case tile::BinaryOp::kSub: v = a - b; break;
              case tile::BinaryOp::kMul: v = a * b; break;
              case tile::BinaryOp::kDiv: v = b == 0 ? 0 : (b == -1 ? -a : a / b); break;
              case tile::BinaryOp::kMax: v = std::max(a, b); break;
              case tile::BinaryOp::kMin: v = std::min(a, b); break;
            }
            out.i.push_back(wrap(rt->elem, v));
          }
        }
        break;
      case tile::OpKind::kUnary:
        for (size_t r = 0; r < n; ++r) {
          float a = fat(op.args[0], r);
          // kExpNonPositive of a positive argument is unspecified: a NaN here, so a
          // program that uses one differs from the reference.
          out.f.push_back(op.un == tile::UnaryOp::kNeg    ? -a
                          : op.un == tile::UnaryOp::kSqrt ? std::sqrt(a)
                          : op.un == tile::UnaryOp::kExpNonPositive && a > 0.0f
                              ? std::bit_cast<float>(0x7fa00badu)
                              : dsl::reference::fixbits_exp(a));
        }
        break;
      case tile::OpKind::kCompare: {
        const bool fl = is_f(type(op.args[0]).elem);
        for (size_t r = 0; r < n; ++r) {
          bool v = false;
          if (fl) {
            float a = fat(op.args[0], r), b = fat(op.args[1], r);
            switch (op.cmp) {
              case tile::CompareOp::kLt: v = a < b; break;
              case tile::CompareOp::kLe: v = a <= b; break;
              case tile::CompareOp::kGt: v = a > b; break;
              case tile::CompareOp::kGe: v = a >= b; break;
              case tile::CompareOp::kEq: v = a == b; break;
              case tile::CompareOp::kNe: v = !(a == b); break;
            }
          } else {
            int64_t a = iat(op.args[0], r), b = iat(op.args[1], r);
            switch (op.cmp) {
              case tile::CompareOp::kLt: v = a < b; break;
              case tile::CompareOp::kLe: v = a <= b; break;
              case tile::CompareOp::kGt: v = a > b; break;
              case tile::CompareOp::kGe: v = a >= b; break;
              case tile::CompareOp::kEq: v = a == b; break;
              case tile::CompareOp::kNe: v = a != b; break;
            }
          }
          out.i.push_back(v);
        }
        break;
      }
      case tile::OpKind::kSelect:
        for (size_t r = 0; r < n; ++r) {
          const bool c = iat(op.args[0], r) != 0;
          if (out.is_float) out.f.push_back(c ? fat(op.args[1], r) : fat(op.args[2], r));
          else out.i.push_back(c ? iat(op.args[1], r) : iat(op.args[2], r));
        }
        break;
      case tile::OpKind::kCast: {
        const tile::Elem from = type(op.args[0]).elem, to = op.type.elem;
        for (size_t r = 0; r < n; ++r) {
          if (is_f(from) && is_f(to)) {
            float x = fat(op.args[0], r);
            out.f.push_back(to == tile::Elem::kF32 ? x
                            : dsl_round(to == tile::Elem::kF16 ? DType::kF16 : DType::kBF16, x));
          } else if (!is_f(from) && !is_f(to)) {
            out.i.push_back(wrap(to, iat(op.args[0], r)));
          } else if (!is_f(from)) {
            out.f.push_back(static_cast<float>(iat(op.args[0], r)));
          } else {
            out.i.push_back(static_cast<int64_t>(fat(op.args[0], r)));
          }
        }
        break;
      }
      case tile::OpKind::kReshape: out = vals_[op.args[0]]; break;
      case tile::OpKind::kStage: out = vals_[op.args[0]]; break;  // where it lives is codegen's
      case tile::OpKind::kLoad: {
        HostBuffer* buf = buffer(op.args[0]);
        if (!buf) return fail(op, "pointer names no buffer");
        for (size_t r = 0; r < n; ++r) {
          if (op.has_mask && iat(op.args[2], r) == 0) {
            out.f.push_back(fat(op.args[3], 0));
            continue;
          }
          const int64_t off = iat(op.args[1], r);
          if (off < 0 || off >= static_cast<int64_t>(buf->bits.size())) {
            return fail(op, absl::StrFormat("offset %d outside a buffer of %d", off, buf->bits.size()));
          }
          out.f.push_back(to_float(buf->dtype, buf->bits[static_cast<size_t>(off)]));
        }
        break;
      }
      case tile::OpKind::kStore: {
        HostBuffer* buf = buffer(op.args[0]);
        if (!buf) return fail(op, "pointer names no buffer");
        const size_t m = std::max(vals_[op.args[1]].size(), vals_[op.args[2]].size());
        for (size_t r = 0; r < m; ++r) {
          if (op.has_mask && iat(op.args[3], r) == 0) continue;
          const int64_t off = iat(op.args[1], r);
          if (off < 0 || off >= static_cast<int64_t>(buf->bits.size())) {
            return fail(op, absl::StrFormat("offset %d outside a buffer of %d", off, buf->bits.size()));
          }
          const float v = fat(op.args[2], r);
          buf->bits[static_cast<size_t>(off)] =
              buf->dtype == DType::kF32 ? std::bit_cast<uint32_t>(canon(v)) : to_bits(buf->dtype, v);
        }
        return absl::OkStatus();
      }
      case tile::OpKind::kReduce: {
        // The same rank-2 layout choice and tree the emitter uses (SelectLayout).
        const tile::Type& in = type(op.args[0]);
        std::vector<float> init;  // one per result element (a carried tile) or one for all
        if (op.args.size() > 1) init = vals_[op.args[1]].f;
        absl::StatusOr<std::vector<float>> r = codegen::simulate_reduce_op(
            in.shape, op, 0, lanes_, p_.num_warps, vals_[op.args[0]].f, init);
        if (!r.ok()) return r.status();
        out.f = *std::move(r);
        out.is_float = true;
        break;
      }
      case tile::OpKind::kReduceGroup:
        // K reduces (Program.h), tile j's init the group's or, chained, result j - 1.
        for (size_t j = 0; j < static_cast<size_t>(op.imm); ++j) {
          if (absl::Status s = step(tile::group_member(op, j)); !s.ok()) return s;
        }
        return absl::OkStatus();
      case tile::OpKind::kClusterBarrier:
        // Only run_cluster, which runs every block of the cluster up to the barrier
        // before any goes on, gives it its meaning.
        return fail(op, "a cluster barrier needs run_cluster (the blocks of a cluster run together)");
      case tile::OpKind::kFor: {
        const int64_t lo = iat(op.args[0], 0), hi = iat(op.args[1], 0), st = iat(op.args[2], 0);
        std::vector<Val> carried;
        for (size_t k = 3; k < op.args.size(); ++k) carried.push_back(vals_[op.args[k]]);
        for (int64_t iv = lo; iv < hi; iv = wrap(type(op.args[0]).elem, iv + st)) {
          vals_[op.body_args[0]].i = {iv};
          vals_[op.body_args[0]].is_float = false;
          for (size_t k = 0; k < carried.size(); ++k) vals_[op.body_args[k + 1]] = carried[k];
          if (absl::Status s = run_ops(op.body); !s.ok()) return s;
          for (size_t k = 0; k < carried.size(); ++k) carried[k] = vals_[op.yields[k]];
        }
        for (size_t k = 0; k < carried.size(); ++k) vals_[op.results[k]] = carried[k];
        return absl::OkStatus();
      }
      case tile::OpKind::kFma:
        for (size_t r = 0; r < n; ++r) {
          out.f.push_back(std::fma(fat(op.args[0], r), fat(op.args[1], r), fat(op.args[2], r)));
        }
        break;
      case tile::OpKind::kDot: {
        // Program.h's chain: d = acc; d = fma(a[i][k], b[k][j], d) for k = 0..K-1, the
        // f16/bf16 inputs already held as their exact floats.
        const tile::Type& at = type(op.args[0]);
        const size_t m = static_cast<size_t>(at.shape[0]), kk = static_cast<size_t>(at.shape[1]);
        const size_t nn = static_cast<size_t>(type(op.args[1]).shape[1]);
        const Val& a = vals_[op.args[0]];
        const Val& b = vals_[op.args[1]];
        for (size_t i = 0; i < m; ++i) {
          for (size_t j = 0; j < nn; ++j) {
            float d = fat(op.args[2], i * nn + j);
            for (size_t k = 0; k < kk; ++k) d = std::fma(a.f[i * kk + k], b.f[k * nn + j], d);
            out.f.push_back(d);
          }
        }
        break;
      }
      case tile::OpKind::kXorPermute:
        for (size_t r = 0; r < n; ++r) out.f.push_back(fat(op.args[0], r ^ static_cast<size_t>(op.imm)));
        break;
      case tile::OpKind::kMmaSync:
      case tile::OpKind::kWgmma: {
        absl::Status s = matrix(op, &out);
        if (!s.ok()) return s;
        break;
      }
      default:
        return fail(op, "not interpreted");
    }
    vals_[op.results[0]] = std::move(out);
    return absl::OkStatus();
  }

  static DType dtype_of(tile::Elem e) {
    switch (e) {
      case tile::Elem::kF16: return DType::kF16;
      case tile::Elem::kBF16: return DType::kBF16;
      case tile::Elem::kE4M3: return DType::kF8E4M3;
      case tile::Elem::kE5M2: return DType::kF8E5M2;
      default: return DType::kF32;
    }
  }

  // mma_sync / wgmma on the thread-held fragments, see the header comment. Per
  // thread: ra a, rb*W b, 4*W c values (mma_sync: W = 1; wgmma m64nN: W = N/8);
  // K = 16 (f16/bf16: ra 8, rb 4) or 32 (fp8: ra 16, rb 8). PTX ISA fragment
  // layouts (g = lane / 4, t = lane % 4, r = value index within a tile, j = the
  // 8-column tile, b value rb*j + r, c value 4j + r):
  //   A, K 16: row g + 8*((r/2)%2), k 2t + r%2 + 8*(r/4)
  //   A, K 32: row g + 8*((r/4)%2), k 4t + r%4 + 16*(r/8)
  //   B, K 16: k 2t + r%2 + 8*(r/2), column 8j + g
  //   B, K 32: k 4t + r%4 + 16*(r/4), column 8j + g
  //   C / D:   row g + 8*(r/2), column 8j + 2t + r%2     (wgmma: + 16*(warp%4) rows)
  absl::Status matrix(const tile::Op& op, Val* out) {
    const bool wg = op.kind == tile::OpKind::kWgmma;
    const size_t threads = static_cast<size_t>(32 * p_.num_warps);
    const Val& a = vals_[op.args[0]];
    const Val& b = vals_[op.args[1]];
    const Val& c = vals_[op.args[2]];
    const tile::Elem in = type(op.args[0]).elem;
    const bool fp8 = tile::is_fp8(in);
    const size_t ra = fp8 ? 16 : 8, rb = fp8 ? 8 : 4, kk = fp8 ? 32 : 16;
    const size_t w = c.f.size() / (threads * 4);  // 8-column tiles
    if (w < 1 || (!wg && w != 1) || a.f.size() != threads * ra || b.f.size() != threads * rb * w ||
        c.f.size() != threads * 4 * w) {
      return fail(op, absl::StrFormat("fragment sizes %d, %d, %d do not fit %d threads",
                                      a.f.size(), b.f.size(), c.f.size(), threads));
    }
    if (wg && p_.num_warps % 4 != 0) return fail(op, "wgmma needs whole warpgroups");
    const size_t warps_per_unit = wg ? 4 : 1;
    const size_t rows = 16 * warps_per_unit, cols = 8 * w;
    if (!model_) model_ = dsl::reference::make_sm90_mma_model();
    out->is_float = true;
    out->f.assign(c.f.size(), 0.0f);
    std::vector<float> am(rows * kk), bm(kk * cols), cm(rows * cols), dm(rows * cols);
    // Thread value (r, j) of the C / D layout -> (row, column) of the unit's tile.
    auto cd = [&](size_t dw, size_t g, size_t t, size_t v) {
      const size_t j = v / 4, r = v % 4;
      return (16 * dw + g + 8 * (r / 2)) * cols + 8 * j + 2 * t + r % 2;
    };
    for (size_t w0 = 0; w0 < static_cast<size_t>(p_.num_warps); w0 += warps_per_unit) {
      for (size_t dw = 0; dw < warps_per_unit; ++dw) {
        for (size_t lane = 0; lane < 32; ++lane) {
          const size_t tid = (w0 + dw) * 32 + lane, g = lane / 4, t = lane % 4;
          for (size_t r = 0; r < ra; ++r) {
            const size_t row = 16 * dw + g + 8 * (fp8 ? (r / 4) % 2 : (r / 2) % 2);
            const size_t k = fp8 ? 4 * t + r % 4 + 16 * (r / 8) : 2 * t + r % 2 + 8 * (r / 4);
            am[row * kk + k] = a.f[tid * ra + r];
          }
          if (dw == 0) {  // wgmma: the first warp's B is the group's B
            for (size_t v = 0; v < rb * w; ++v) {
              const size_t j = v / rb, r = v % rb;
              const size_t k = fp8 ? 4 * t + r % 4 + 16 * (r / 4) : 2 * t + r % 2 + 8 * (r / 2);
              bm[k * cols + 8 * j + g] = b.f[tid * rb * w + v];
            }
          }
          for (size_t v = 0; v < 4 * w; ++v) cm[cd(dw, g, t, v)] = c.f[tid * 4 * w + v];
        }
      }
      std::vector<float> col(kk);
      for (size_t row = 0; row < rows; ++row) {
        for (size_t n = 0; n < cols; ++n) {
          for (size_t k = 0; k < kk; ++k) col[k] = bm[k * cols + n];
          dm[row * cols + n] = model_->mma(cm[row * cols + n],
                                           std::span<const float>(&am[row * kk], kk),
                                           std::span<const float>(col), dtype_of(in));
        }
      }
      for (size_t dw = 0; dw < warps_per_unit; ++dw) {
        for (size_t lane = 0; lane < 32; ++lane) {
          const size_t tid = (w0 + dw) * 32 + lane, g = lane / 4, t = lane % 4;
          for (size_t v = 0; v < 4 * w; ++v) out->f[tid * 4 * w + v] = dm[cd(dw, g, t, v)];
        }
      }
    }
    return absl::OkStatus();
  }

  static float dsl_round(DType t, float x) { return std::isnan(x) ? x : round_to(t, x); }

  HostBuffer* buffer(int id) {
    auto it = ptr_name_.find(id);
    if (it == ptr_name_.end()) return nullptr;
    auto b = mem_.find(it->second);
    return b == mem_.end() ? nullptr : &b->second;
  }

  const tile::Program& p_;
  std::array<int64_t, 3> block_;
  std::unique_ptr<dsl::reference::MmaModel> model_;
  Buffers& mem_;
  int lanes_;
  std::vector<Val> vals_;
  std::map<int, std::string> ptr_name_;
  size_t next_ = 0;  // run_segment: the next top-level op
};

}  // namespace interp_detail

// Runs block (x, y, z) of `p`; scalar parameters are looked up by name (missing: 0).
inline absl::Status run_block(const tile::Program& p, std::array<int64_t, 3> block,
                              const std::map<std::string, int64_t>& ints,
                              const std::map<std::string, float>& floats, Buffers& mem, int lanes) {
  interp_detail::Interpreter it(p, block, ints, floats, mem, lanes);
  return it.run();
}
// Runs block `block` (along x; y = z = 0) of `p`.
inline absl::Status run_block(const tile::Program& p, int64_t block,
                              const std::map<std::string, int64_t>& ints,
                              const std::map<std::string, float>& floats, Buffers& mem, int lanes) {
  return run_block(p, std::array<int64_t, 3>{block, 0, 0}, ints, floats, mem, lanes);
}

// Runs the p.cluster blocks first_block, first_block + 1, ... of one thread-block
// cluster (along x) as a cluster barrier orders them: every block runs up to the
// barrier, then every block goes on to the next one. Within a segment the blocks run
// last to first, so a program that reads what a later block writes before a barrier
// separates them sees that block's data unwritten.
inline absl::Status run_cluster(const tile::Program& p, int64_t first_block,
                                const std::map<std::string, int64_t>& ints,
                                const std::map<std::string, float>& floats, Buffers& mem, int lanes) {
  std::vector<std::unique_ptr<interp_detail::Interpreter>> blocks;
  for (int64_t k = 0; k < p.cluster; ++k) {
    blocks.push_back(std::make_unique<interp_detail::Interpreter>(
        p, std::array<int64_t, 3>{first_block + k, 0, 0}, ints, floats, mem, lanes));
  }
  for (bool done = false; !done;) {
    for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
      bool end = false;
      if (absl::Status s = (*it)->run_segment(&end); !s.ok()) return s;
      done = end;  // every block meets the same top-level barriers
    }
  }
  return absl::OkStatus();
}

}  // namespace fixbits::testing
