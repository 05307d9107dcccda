// ReduceConfig.keep_in_shared, on the CPU: the kept passes of a fused RMSNorm / softmax
// row (one block per row) and the kept strips of a cluster row held in shared memory
// as staged loads (tile::Builder::load_staged) instead of registers.
//   - bits: the test interpreter's output is memcmp-equal to reference::reduce for
//     RMSNorm and softmax, f32 / bf16 / f16, one block per row (K = 1, 2 and the shared
//     bound) and cluster rows (P = 2, 3, 8; K = 1 and the bound), on 1-element, odd and
//     multi-strip rows, with NaN, inf, -0.0 and subnormals;
//   - structure: exactly K staged loads, all at the top level and no other load of x
//     outside loops; every use of a staged value is its own op (RMSNorm bf16: the square's
//     widening and the output's), so each reads the shared slots where it is;
//   - PTX (sm_90a): each thread's chunks are copied with cp.async.cg 16 bytes, strip i's
//     copies are commit group i and its reads wait for that group alone
//     (cp.async.wait_group K-1-i), each read an ld.shared.v4, the kept strips are read again
//     after the cluster barrier from shared memory, and the shared arrays have the kept
//     bytes; gfx942 compiles the unsplit form with LDS stores and loads (no async copy);
//   - rules: a staged load in a loop body, of a scalar, carried or yielded by a loop is
//     refused naming the op; the knob without keep_passes, or past kMaxStagedBytes, is
//     refused naming the field and the numbers; a program whose shared arrays pass 48 KiB
//     is refused by the lowering, naming them.
#include <gtest/gtest.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "codegen/Compile.h"
#include "dsl/reference/Reference.h"
#include "dsl/tile/ReduceProgram.h"
#include "tests/codegen/ProgramInterpreter.h"
#include "tests/codegen/ReduceInputs.h"
#include "tests/codegen/ReducePhases.h"
#include "tests/codegen/TextCount.h"

namespace fixbits {
namespace {

using dsl::ReduceConfig;
using dsl::ReduceDesc;
using dsl::ReduceOp;

using testing::count_of;

dsl::reference::ReduceProblem make_problem(const ReduceDesc& d, int64_t cols, uint32_t seed, bool specials) {
  return testing::fused_row_problem(d, 2, cols, seed, specials);
}

// The staged loads of a program (top level only, as the rules ask) and, for each, the
// ops reading it anywhere in the program.
struct StagedUse {
  int staged = 0;          // staged loads
  int top_level_loads = 0; // loads of x (parameter 0) outside loops, staged or not
  std::vector<int> readers;  // per staged load, the ops that read it
};
StagedUse staged_use(const tile::Program& p) {
  StagedUse u;
  std::vector<int> ids;
  for (const tile::Op& op : p.body) {
    if (op.kind != tile::OpKind::kLoad || op.args[0] != 0) continue;
    ++u.top_level_loads;
    if (op.staged) ids.push_back(op.results[0]);
  }
  u.staged = static_cast<int>(ids.size());
  u.readers.assign(ids.size(), 0);
  auto walk = [&](auto&& self, const std::vector<tile::Op>& ops) -> void {
    for (const tile::Op& op : ops) {
      for (size_t i = 0; i < ids.size(); ++i) {
        for (int a : op.args) {
          if (a == ids[i]) {
            ++u.readers[i];
            break;
          }
        }
      }
      self(self, op.body);
    }
  };
  walk(walk, p.body);
  return u;
}

TEST(ReduceStaged, OneBlockPerRowBitIdenticalToReference) {
  int cases = 0;
  for (ReduceOp op : {ReduceOp::kRmsNorm, ReduceOp::kSoftmax}) {
    for (DType in : {DType::kF32, DType::kBF16, DType::kF16}) {
      const ReduceDesc d{.op = op, .in_dtype = in, .out_dtype = in, .strip = 256};
      ReduceConfig c{.warps = 2, .elems_per_thread = 4, .keep_in_shared = true};  // Q = 256
      c.keep_passes = 1;
      const int64_t most = dsl::max_keep_passes(d, c);
      EXPECT_EQ(most, std::min<int64_t>(dsl::kMaxKeptPerThread, dsl::max_staged_bytes(c) / (256 * (dtype_bits(in) / 8))));
      for (int64_t keep : {int64_t{1}, int64_t{2}, int64_t{7}}) {
        c.keep_passes = static_cast<int>(keep);
        auto prog = dsl::reduce(d, c);
        ASSERT_TRUE(prog.ok()) << prog.status();
        const StagedUse u = staged_use(*prog);
        EXPECT_EQ(u.staged, keep);
        EXPECT_EQ(u.top_level_loads, keep) << "only the staged loads read x outside loops";
        for (int r : u.readers) {
          // RMSNorm: the square and the output; softmax: the max tree, the exp for the sum,
          // the exp for the output. Each its own op (a widening, or for f32 the op itself).
          const int want = op == ReduceOp::kRmsNorm ? 2 : 3;
          EXPECT_EQ(r, want) << dsl::to_string(d) << " keep " << keep;
        }
        for (int64_t cols : {int64_t{1}, int64_t{255}, int64_t{257}, int64_t{600}, int64_t{2049}}) {
          for (int specials = 0; specials < 2; ++specials) {
            const auto prob = make_problem(d, cols, static_cast<uint32_t>(cols * 7 + keep + specials), specials);
            EXPECT_EQ(testing::mismatch_with_reference(
                          d, prob, [&](const auto& p) { return testing::run_reduce_phases(d, c, p); }),
                      "")
                << dsl::to_string(d) << " keep " << keep << " cols " << cols << " specials " << specials;
            ++cases;
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 2 * 3 * 3 * 5 * 2);
}

TEST(ReduceStaged, ClusterRowsBitIdenticalToReference) {
  int cases = 0;
  for (ReduceOp op : {ReduceOp::kRmsNorm, ReduceOp::kSoftmax}) {
    for (DType in : {DType::kF32, DType::kBF16, DType::kF16}) {
      const ReduceDesc d{.op = op, .in_dtype = in, .out_dtype = in, .strip = 256};
      for (int p : {2, 3, 8}) {
        ReduceConfig c{.warps = 1, .elems_per_thread = 8, .blocks_per_row = p, .keep_passes = 1,
                       .cluster_rows = true, .keep_in_shared = true};
        const int64_t most = dsl::max_keep_passes(d, c);
        for (int64_t keep : {int64_t{1}, most}) {
          c.keep_passes = static_cast<int>(keep);
          auto progs = dsl::reduce_phases(d, c);
          ASSERT_TRUE(progs.ok()) << progs.status();
          ASSERT_EQ(progs->size(), 1u);
          EXPECT_EQ(staged_use(progs->front()).staged, keep);
          EXPECT_EQ(testing::cluster_rows_mismatch(progs->front(), d, 13, static_cast<uint32_t>(p), &cases), "")
              << dsl::to_string(d) << " P " << p << " keep " << keep;
        }
      }
    }
  }
  EXPECT_EQ(cases, 2 * 3 * 3 * 2 * 4 * 2);
}

// The bench's cluster kernel: bf16, strip 4096, 8 warps x 8, P 8, K 4 (the block's
// whole share of a 131072-element row).
TEST(ReduceStaged, PtxCopiesAsynchronouslyAndReadsSharedAfterTheBarrier) {
  const ReduceDesc d{.op = ReduceOp::kRmsNorm, .in_dtype = DType::kBF16, .out_dtype = DType::kBF16,
                     .strip = 4096};
  const ReduceConfig c{.warps = 8, .elems_per_thread = 8, .blocks_per_row = 8, .keep_passes = 4,
                       .cluster_rows = true, .keep_in_shared = true};
  auto progs = dsl::reduce_phases(d, c);
  ASSERT_TRUE(progs.ok()) << progs.status();
  EXPECT_TRUE(progs->front().name.ends_with("_k4s_p8_cluster")) << progs->front().name;
  auto k = codegen::compile(progs->front(), codegen::Target::kNvptxSm90a);
  ASSERT_TRUE(k.ok()) << k.status();
  const std::string& t = k->text;
  // 4 strips x 16 bf16 a thread = 4 x 2 chunks of 16 bytes.
  EXPECT_EQ(count_of(t, "cp.async.cg.shared.global"), 8);
  EXPECT_EQ(count_of(t, "], 16;"), 8);
  // Four pieces of 4096 bf16 (8192 bytes each) of the dynamic shared memory, which the
  // launch passes.
  EXPECT_EQ(count_of(t, ".extern .shared .align 16 .b8 fixbits_dynamic_smem[];"), 1);
  EXPECT_EQ(k->dynamic_shared_bytes, 4 * 8192);
  const size_t wait = t.find("barrier.cluster.wait");
  ASSERT_NE(wait, std::string::npos);
  const std::string before = t.substr(0, wait), after = t.substr(wait);
  // Each kept strip is read twice (the square before the barrier, the output after),
  // each read after a wait for the thread's copies.
  // Strip i's copies are commit group i; its tree waits for it alone (wait_group 3 - i
  // leaves the later strips in flight), and after the barrier every group is done.
  EXPECT_EQ(count_of(before, "cp.async.commit_group;"), 4);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(count_of(before, absl::StrCat("cp.async.wait_group \t", 3 - i, ";")), 1) << i;
    EXPECT_EQ(count_of(after, absl::StrCat("cp.async.wait_group \t", 3 - i, ";")), 1) << i;
  }
  EXPECT_EQ(count_of(t, "cp.async.wait_all"), 0);
  EXPECT_EQ(count_of(after, "cp.async.cg"), 0) << "no copy after the barrier";
  EXPECT_GE(count_of(after, "ld.shared.v4.b32"), 8) << "the kept strips come back from shared memory";
  // The register form keeps them instead: no shared array, no async copy.
  ReduceConfig regs = c;
  regs.keep_in_shared = false;
  auto rp = dsl::reduce_phases(d, regs);
  ASSERT_TRUE(rp.ok()) << rp.status();
  auto rk = codegen::compile(rp->front(), codegen::Target::kNvptxSm90a);
  ASSERT_TRUE(rk.ok()) << rk.status();
  EXPECT_EQ(count_of(rk->text, "cp.async"), 0);
  EXPECT_EQ(count_of(rk->text, "fixbits_dynamic_smem"), 0);
  EXPECT_EQ(rk->dynamic_shared_bytes, 0);
}

TEST(ReduceStaged, Gfx942StagesThroughLdsWithoutAsyncCopies) {
  const ReduceDesc d{.op = ReduceOp::kRmsNorm, .in_dtype = DType::kBF16, .out_dtype = DType::kBF16,
                     .strip = 1024};
  const ReduceConfig c{.warps = 4, .elems_per_thread = 4, .lanes = 64, .keep_passes = 2,
                       .keep_in_shared = true};
  auto prog = dsl::reduce(d, c);
  ASSERT_TRUE(prog.ok()) << prog.status();
  auto k = codegen::compile(*prog, codegen::Target::kAmdgpuGfx942);
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_GT(count_of(k->text, "ds_write"), 0) << "the kept passes go to LDS";
  EXPECT_GT(count_of(k->text, "ds_read"), 0) << "and come back from it";
  EXPECT_EQ(count_of(k->text, "global_load_lds"), 0);
}

TEST(ReduceStaged, ProgramRulesForStagedLoads) {
  auto message = [](absl::StatusOr<tile::Program> p) {
    return p.ok() ? std::string("ok") : std::string(p.status().message());
  };
  auto frame = [](tile::Builder& b) {
    tile::Value x = b.param("x", tile::Type::ptr(DType::kF32));
    tile::Value i = b.arange(64);
    tile::Value m = b.compare(tile::CompareOp::kLt, i, b.const_int(tile::Elem::kI32, 10));
    return std::make_tuple(x, i, m, b.const_float(tile::Elem::kF32, 0.0f));
  };
  {  // At the top level, read by a later op: fine.
    tile::Builder b("k");
    auto [x, i, m, zero] = frame(b);
    tile::Value s = b.load_staged(x, i, m, zero);
    b.store(x, i, b.add(s, s), m);
    auto p = b.finish();
    EXPECT_EQ(message(p), "ok");
    EXPECT_NE(tile::to_string(*p).find("load_staged %0["), std::string::npos) << tile::to_string(*p);
  }
  {  // In a loop body, not a double buffer's yield.
    tile::Builder b("k");
    auto [x, i, m, zero] = frame(b);
    tile::Value z = b.const_int(tile::Elem::kI32, 0);
    b.begin_for(z, z, z, {});
    b.load_staged(x, i, m, zero);
    b.end_for({});
    EXPECT_NE(message(b.finish()).find("must be yielded as exactly one carried staged load"), std::string::npos)
        << message(b.finish());
  }
  {  // A double buffer: carried from a top-level staged load, the body's staged load its
     // yield, the carried value read in the body and the result after the loop.
    tile::Builder b("k");
    auto [x, i, m, zero] = frame(b);
    tile::Value s = b.load_staged(x, i, m, zero);
    tile::Value z = b.const_int(tile::Elem::kI32, 0);
    std::vector<tile::Value> l = b.begin_for(z, b.const_int(tile::Elem::kI32, 3), b.const_int(tile::Elem::kI32, 1),
                                             {s});
    tile::Value next = b.load_staged(x, i, m, zero);
    b.store(x, i, b.add(l[1], l[1]), m);
    std::vector<tile::Value> out = b.end_for({next});
    b.store(x, i, out[0], m);
    b.set_num_warps(1);
    auto p = b.finish();
    EXPECT_EQ(message(p), "ok");
    // It lowers: two slot sets of 64 f32, the copies in the loop, every copy waited for
    // at the loop's exit before the result is read there.
    auto k = codegen::compile(*p, codegen::Target::kNvptxSm90a);
    ASSERT_TRUE(k.ok()) << k.status();
    EXPECT_EQ(k->dynamic_shared_bytes, 2 * 64 * 4);
    const size_t exit_wait = k->text.rfind("cp.async.wait_group \t0;");
    ASSERT_NE(exit_wait, std::string::npos) << k->text;
    EXPECT_LT(k->text.rfind("cp.async.ca.shared.global"), exit_wait) << k->text;  // 8-byte chunks: .ca
    EXPECT_GT(k->text.rfind("ld.shared"), exit_wait) << "the result is read after the exit's wait\n" << k->text;
  }
  {  // Carried by a loop, but yielded as itself: no next slots.
    tile::Builder b("k");
    auto [x, i, m, zero] = frame(b);
    tile::Value s = b.load_staged(x, i, m, zero);
    tile::Value z = b.const_int(tile::Elem::kI32, 0);
    std::vector<tile::Value> l = b.begin_for(z, z, z, {s});
    b.end_for({l[1]});
    EXPECT_NE(message(b.finish()).find("must be a staged load made in the loop's body"), std::string::npos)
        << message(b.finish());
  }
  {  // A stage op's value carried: only staged loads start a double buffer.
    tile::Builder b("k");
    auto [x, i, m, zero] = frame(b);
    tile::Value s = b.stage(b.load(x, i, m, zero));
    tile::Value z = b.const_int(tile::Elem::kI32, 0);
    std::vector<tile::Value> l = b.begin_for(z, z, z, {s});
    b.end_for({b.load_staged(x, i, m, zero)});
    (void)l;
    EXPECT_NE(message(b.finish()).find("carried value"), std::string::npos) << message(b.finish());
  }
  {  // One staged load starting two double buffers.
    tile::Builder b("k");
    auto [x, i, m, zero] = frame(b);
    tile::Value s = b.load_staged(x, i, m, zero);
    tile::Value z = b.const_int(tile::Elem::kI32, 0);
    b.begin_for(z, z, z, {s, s});
    b.end_for({b.load_staged(x, i, m, zero), b.load_staged(x, i, m, zero)});
    EXPECT_NE(message(b.finish()).find("starts two double buffers"), std::string::npos) << message(b.finish());
  }
  {  // A double buffer in a nested loop.
    tile::Builder b("k");
    auto [x, i, m, zero] = frame(b);
    tile::Value z = b.const_int(tile::Elem::kI32, 0);
    b.begin_for(z, z, z, {});
    tile::Value s = b.load_staged(x, i, m, zero);
    b.begin_for(z, z, z, {s});
    b.end_for({b.load_staged(x, i, m, zero)});
    b.end_for({});
    EXPECT_NE(message(b.finish()).find("only a top-level loop carries a staged load"), std::string::npos)
        << message(b.finish());
  }
  {  // Yielded by a loop.
    tile::Builder b("k");
    auto [x, i, m, zero] = frame(b);
    tile::Value s = b.load_staged(x, i, m, zero);
    tile::Value z = b.const_int(tile::Elem::kI32, 0);
    std::vector<tile::Value> l = b.begin_for(z, z, z, {b.add(s, s)});
    b.end_for({s});
    (void)l;
    EXPECT_NE(message(b.finish()).find("yield"), std::string::npos);
  }
  {  // A scalar.
    tile::Builder b("k");
    tile::Value x = b.param("x", tile::Type::ptr(DType::kF32));
    tile::Value z = b.const_int(tile::Elem::kI32, 0);
    b.load_staged(x, z, b.compare(tile::CompareOp::kLt, z, z), b.const_float(tile::Elem::kF32, 0.0f));
    EXPECT_NE(message(b.finish()).find("must load a tile"), std::string::npos);
  }
}

// Staged values live in dynamic shared memory, so they may pass the 48 KiB of static
// shared memory (the launch opts in); past what a block may have at all (sm_90: 227
// KiB) the lowering refuses the program, naming it and the bytes, rather than leave the
// driver to refuse it without a word.
TEST(ReduceStaged, StagedBytesPastTheBlockLimitAreRefused) {
  auto program = [](int64_t extent) {
    tile::Builder b("too_much");
    tile::Value x = b.param("x", tile::Type::ptr(DType::kF32));
    tile::Value i = b.arange(extent);
    tile::Value m = b.compare(tile::CompareOp::kLt, i, b.const_int(tile::Elem::kI32, 10));
    tile::Value s = b.load_staged(x, i, m, b.const_float(tile::Elem::kF32, 0.0f));
    b.store(x, i, b.add(s, s), m);
    b.set_num_warps(4);
    return b.finish();
  };
  auto past_static = program(16384);  // 64 KiB of f32
  ASSERT_TRUE(past_static.ok()) << past_static.status();
  auto fits = codegen::compile(*past_static, codegen::Target::kNvptxSm90a);
  ASSERT_TRUE(fits.ok()) << fits.status();
  EXPECT_EQ(fits->dynamic_shared_bytes, 65536);
  auto big = program(65536);  // 256 KiB
  ASSERT_TRUE(big.ok()) << big.status();
  auto k = codegen::compile(*big, codegen::Target::kNvptxSm90a);
  ASSERT_FALSE(k.ok());
  EXPECT_NE(std::string(k.status().message()).find("program too_much: its staged loads take 262144 bytes of "
                                                   "dynamic shared memory"),
            std::string::npos) << k.status();
  EXPECT_NE(std::string(k.status().message()).find("allows 232448 a block"), std::string::npos) << k.status();
  // 128 KiB: fits sm_90's 227 KiB, not gfx942's 64 KiB of LDS.
  auto half = program(32768);
  ASSERT_TRUE(half.ok()) << half.status();
  EXPECT_TRUE(codegen::compile(*half, codegen::Target::kNvptxSm90a).ok());
  auto amd = codegen::compile(*half, codegen::Target::kAmdgpuGfx942);
  ASSERT_FALSE(amd.ok());
  EXPECT_NE(std::string(amd.status().message()).find("amdgpu"), std::string::npos) << amd.status();
}

TEST(ReduceStaged, KnobErrorsNameTheField) {
  const ReduceDesc rms{.op = ReduceOp::kRmsNorm, .in_dtype = DType::kBF16, .out_dtype = DType::kBF16,
                       .strip = 4096};
  const auto msg = testing::phases_message;
  ReduceConfig c{.warps = 8, .elems_per_thread = 8, .keep_in_shared = true};
  EXPECT_NE(msg(rms, c).find("ReduceConfig.keep_in_shared says where kept passes live; it needs keep_passes > 0"),
            std::string::npos) << msg(rms, c);
  // 200 KiB / (4096 x 2 bytes) = 25 passes; the register bound would be 4.
  EXPECT_EQ(dsl::max_keep_passes(rms, c), 25);
  c.keep_passes = 25;
  EXPECT_EQ(msg(rms, c), "ok");
  c.keep_passes = 26;
  EXPECT_NE(msg(rms, c).find("ReduceConfig.keep_passes 26 with keep_in_shared keeps 26 x 4096 elements of bf16 = "
                             "212992 bytes of shared memory per block"),
            std::string::npos) << msg(rms, c);
  EXPECT_NE(msg(rms, c).find("at most 25 passes"), std::string::npos);
  // gfx942 (lanes 64): 40 KiB of its 64 KiB of LDS, 5 passes.
  ReduceConfig amd{.warps = 4, .elems_per_thread = 16, .lanes = 64, .keep_passes = 1, .keep_in_shared = true};
  EXPECT_EQ(dsl::max_keep_passes(rms, amd), 5);
  c.keep_in_shared = false;
  EXPECT_NE(msg(rms, c).find("values of x per thread"), std::string::npos) << msg(rms, c);
  ReduceDesc sum = rms;
  sum.op = ReduceOp::kSum;
  c.keep_passes = 1;
  c.keep_in_shared = true;
  EXPECT_NE(msg(sum, c).find("keep_passes 1 applies to rms_norm and softmax"), std::string::npos) << msg(sum, c);
}

}  // namespace
}  // namespace fixbits
