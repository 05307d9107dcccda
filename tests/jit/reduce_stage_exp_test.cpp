// ReduceConfig.stage_exp on the CPU: softmax's kept e_i held in shared memory
// (tile::Builder::stage) between the sum and the outputs, instead of computed again
// from the kept x.
//   - bits: the test interpreter's output is memcmp-equal to reference::reduce for
//     softmax f32 / bf16 / f16, one block per row (K = 1, 2 and the shared bound) and
//     cluster rows (P = 2, 3, 8; K = 1 and the bound), on 1-element, odd and multi-pass
//     rows, with NaN, inf, -0.0 and subnormals;
//   - structure: K stage ops at the top level, each read by two ops (the sum's leaf and
//     the output's division), and K fewer exps than the same kernel without the knob;
//   - PTX (sm_90a): each thread stores its e_i with st.shared.v4.f32 and the outputs
//     read them with ld.shared.v4.f32; the dynamic shared bytes are the kept x's plus
//     4 a kept element; gfx942 compiles it through LDS;
//   - the static checker: a one-block or cluster kernel signs as the same kernel without
//     the knob (each output's tree is unchanged), and a kernel whose staged value is
//     x - m instead of e_i signs apart (the check can fail);
//   - rules: stage in a loop body, or of an integer tile, is refused naming the op; the
//     knob off softmax or without keep_in_shared, or past the shared bound counting the
//     f32 e_i, is refused naming the field.
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "codegen/Compile.h"
#include "dsl/reference/Reference.h"
#include "dsl/tile/ReduceProgram.h"
#include "gtest/gtest.h"
#include "tests/codegen/ReduceInputs.h"
#include "tests/codegen/ReducePhases.h"
#include "tests/codegen/TextCount.h"
#include "tests/jit/ProgramSignature.h"

namespace fixbits {
namespace {

using dsl::ReduceConfig;
using dsl::ReduceDesc;
using dsl::ReduceOp;
using testing::count_of;

ReduceDesc softmax(DType in, int64_t strip) {
  return ReduceDesc{.op = ReduceOp::kSoftmax, .in_dtype = in, .out_dtype = in, .strip = strip};
}

// Top-level stage ops, the ops (anywhere) reading each, and the exps anywhere.
struct StageUse {
  int stages = 0;
  std::vector<int> readers;
  int exps = 0;
};
void count_ops(const std::vector<tile::Op>& ops, const std::vector<int>& ids, StageUse& u) {
  for (const tile::Op& op : ops) {
    if (op.kind == tile::OpKind::kUnary &&
        (op.un == tile::UnaryOp::kExp || op.un == tile::UnaryOp::kExpNonPositive)) {
      ++u.exps;
    }
    for (int a : op.args) {
      for (size_t i = 0; i < ids.size(); ++i) u.readers[i] += a == ids[i] ? 1 : 0;
    }
    count_ops(op.body, ids, u);
  }
}
StageUse stage_use(const tile::Program& p) {
  StageUse u;
  std::vector<int> ids;
  for (const tile::Op& op : p.body) {
    if (op.kind == tile::OpKind::kStage) ids.push_back(op.results[0]);
  }
  u.stages = static_cast<int>(ids.size());
  u.readers.assign(ids.size(), 0);
  count_ops(p.body, ids, u);
  return u;
}

TEST(ReduceStageExp, OneBlockPerRowBitIdenticalToReference) {
  int cases = 0;
  for (DType in : {DType::kF32, DType::kBF16, DType::kF16}) {
    const ReduceDesc d = softmax(in, 256);
    ReduceConfig c{.warps = 2, .elems_per_thread = 4, .keep_passes = 1, .keep_in_shared = true,
                   .stage_exp = true};  // Q = 256
    const int64_t most = dsl::max_keep_passes(d, c);
    EXPECT_EQ(most, std::min<int64_t>(dsl::kMaxKeptPerThread,
                                      dsl::max_staged_bytes(c) / (256 * (dtype_bits(in) / 8 + 4))));
    for (int64_t keep : {int64_t{1}, int64_t{2}, most}) {
      c.keep_passes = static_cast<int>(keep);
      auto prog = dsl::reduce(d, c);
      ASSERT_TRUE(prog.ok()) << prog.status();
      EXPECT_TRUE(prog->name.ends_with("_se")) << prog->name;
      ReduceConfig plain = c;
      plain.stage_exp = false;
      auto without = dsl::reduce(d, plain);
      ASSERT_TRUE(without.ok()) << without.status();
      const StageUse u = stage_use(*prog), w = stage_use(*without);
      EXPECT_EQ(u.stages, keep);
      EXPECT_EQ(w.stages, 0);
      for (int r : u.readers) EXPECT_EQ(r, 2) << "the sum's leaf and the output's division";
      EXPECT_EQ(w.exps - u.exps, keep) << "one exp a kept element, not two";
      for (int64_t cols : {int64_t{1}, int64_t{255}, int64_t{257}, int64_t{600}, int64_t{2049}}) {
        for (int specials = 0; specials < 2; ++specials) {
          const auto prob = testing::fused_row_problem(d, 2, cols, static_cast<uint32_t>(cols * 5 + keep + specials),
                                                       specials);
          EXPECT_EQ(testing::mismatch_with_reference(d, prob, [&](const auto& p) { return testing::run_reduce_phases(d, c, p); }),
                    "")
              << dsl::to_string(d) << " keep " << keep << " cols " << cols << " specials " << specials;
          ++cases;
        }
      }
    }
  }
  EXPECT_EQ(cases, 3 * 3 * 5 * 2);
}

TEST(ReduceStageExp, ClusterRowsBitIdenticalToReference) {
  int cases = 0;
  for (DType in : {DType::kF32, DType::kBF16, DType::kF16}) {
    const ReduceDesc d = softmax(in, 256);
    for (int p : {2, 3, 8}) {
      ReduceConfig c{.warps = 1, .elems_per_thread = 8, .blocks_per_row = p, .keep_passes = 1,
                     .cluster_rows = true, .keep_in_shared = true, .stage_exp = true};
      const int64_t most = dsl::max_keep_passes(d, c);
      for (int64_t keep : {int64_t{1}, most}) {
        c.keep_passes = static_cast<int>(keep);
        auto progs = dsl::reduce_phases(d, c);
        ASSERT_TRUE(progs.ok()) << progs.status();
        ASSERT_EQ(progs->size(), 1u);
        EXPECT_EQ(stage_use(progs->front()).stages, keep);
        EXPECT_EQ(testing::cluster_rows_mismatch(progs->front(), d, 11, static_cast<uint32_t>(p), &cases), "")
            << dsl::to_string(d) << " P " << p << " keep " << keep;
      }
    }
  }
  EXPECT_EQ(cases, 3 * 3 * 2 * 4 * 2);
}

// The shape of 2048 x 16384's candidates: bf16, strip 4096, 8 warps x 8, the first 4
// passes kept.
TEST(ReduceStageExp, PtxStoresAndReadsTheExpsInSharedMemory) {
  const ReduceDesc d = softmax(DType::kBF16, 4096);
  const ReduceConfig c{.warps = 8, .elems_per_thread = 8, .keep_passes = 4, .keep_in_shared = true,
                       .whole_strips = true, .stage_exp = true};
  auto prog = dsl::reduce(d, c);
  ASSERT_TRUE(prog.ok()) << prog.status();
  auto k = codegen::compile(*prog, codegen::Target::kNvptxSm90a);
  ASSERT_TRUE(k.ok()) << k.status();
  ReduceConfig plain = c;
  plain.stage_exp = false;
  auto pp = dsl::reduce(d, plain);
  ASSERT_TRUE(pp.ok()) << pp.status();
  auto pk = codegen::compile(*pp, codegen::Target::kNvptxSm90a);
  ASSERT_TRUE(pk.ok()) << pk.status();
  // A pass is the strip (Q = 4096): 4 passes x 16 e_i a thread = 16 chunks of 4 floats,
  // each stored once (LLVM prints the vector store as .b32) and read back once by the
  // outputs, which no longer read the kept x (2 chunks of 8 bf16 a pass): 16 - 8 more
  // ld.shared.v4.
  EXPECT_EQ(count_of(k->text, "st.shared.v4.b32") - count_of(pk->text, "st.shared.v4.b32"), 16);
  EXPECT_EQ(count_of(k->text, "ld.shared.v4.b32") - count_of(pk->text, "ld.shared.v4.b32"), 16 - 8);
  // x: 4 x 4096 bf16; e: 4 x 4096 f32.
  EXPECT_EQ(k->dynamic_shared_bytes, 4 * 4096 * 2 + 4 * 4096 * 4);
  EXPECT_EQ(pk->dynamic_shared_bytes, 4 * 4096 * 2);
}

TEST(ReduceStageExp, Gfx942StagesTheExpsThroughLds) {
  const ReduceDesc d = softmax(DType::kBF16, 1024);
  const ReduceConfig c{.warps = 4, .elems_per_thread = 4, .lanes = 64, .keep_passes = 1,
                       .keep_in_shared = true, .stage_exp = true};
  auto prog = dsl::reduce(d, c);
  ASSERT_TRUE(prog.ok()) << prog.status();
  auto k = codegen::compile(*prog, codegen::Target::kAmdgpuGfx942);
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_GT(count_of(k->text, "ds_write"), 0);
  EXPECT_GT(count_of(k->text, "ds_read"), 0);
}

// The verify-before-load hook's signature: the knob moves where e_i waits, not what
// any output is.
TEST(ReduceStageExp, SignsAsTheKernelWithoutIt) {
  struct Case {
    DType in;
    int warps, ept, keep, cluster;
  };
  // One block per row, and cluster rows of P = 2 and 4. (The cluster kernels signed apart
  // until the checker's layout fix-up moved their masked max loop, laid out below the
  // kept passes it leaves to, above them: docs/verify.md, Layout.)
  const std::vector<Case> cases = {{DType::kBF16, 4, 8, 2, 0}, {DType::kF32, 8, 4, 1, 0}, {DType::kF16, 4, 8, 3, 0},
                                   {DType::kBF16, 8, 4, 4, 0}, {DType::kBF16, 4, 8, 2, 2}, {DType::kF32, 8, 4, 1, 4},
                                   {DType::kF16, 4, 8, 3, 2}};
  for (const Case& cs : cases) {
    SCOPED_TRACE(absl::StrFormat("%s w%d e%d keep %d cluster %d", dtype_name(cs.in), cs.warps, cs.ept, cs.keep,
                                 cs.cluster));
    const ReduceDesc d = softmax(cs.in, 1024);
    ReduceConfig c{.warps = cs.warps, .elems_per_thread = cs.ept, .keep_passes = cs.keep, .keep_in_shared = true,
                   .stage_exp = true};
    if (cs.cluster > 0) {
      c.blocks_per_row = cs.cluster;
      c.cluster_rows = true;
    }
    ReduceConfig plain = c;
    plain.stage_exp = false;
    auto staged = dsl::reduce_phases(d, c);
    auto recomputed = dsl::reduce_phases(d, plain);
    ASSERT_TRUE(staged.ok()) << staged.status();
    ASSERT_TRUE(recomputed.ok()) << recomputed.status();
    auto sig = testing::sm90a_signature(staged->front());
    auto plain_sig = testing::sm90a_signature(recomputed->front());
    ASSERT_TRUE(sig.ok()) << sig.status();
    ASSERT_TRUE(plain_sig.ok()) << plain_sig.status();
    EXPECT_EQ(*sig, *plain_sig);
    // The same kernel staging x - m instead of e_i = exp(x - m): its outputs divide
    // another value, and the signature says so.
    tile::Program wrong = staged->front();
    std::vector<int> defined_by_exp;
    for (const tile::Op& op : wrong.body) {
      if (op.kind == tile::OpKind::kUnary && op.un == tile::UnaryOp::kExpNonPositive) {
        defined_by_exp.resize(std::max<size_t>(defined_by_exp.size(), op.results[0] + 1), -1);
        defined_by_exp[op.results[0]] = op.args[0];
      }
    }
    int swapped = 0;
    for (tile::Op& op : wrong.body) {
      if (op.kind != tile::OpKind::kStage) continue;
      ASSERT_LT(static_cast<size_t>(op.args[0]), defined_by_exp.size());
      ASSERT_GE(defined_by_exp[op.args[0]], 0) << "a stage op stages an exp";
      op.args[0] = defined_by_exp[op.args[0]];
      ++swapped;
    }
    EXPECT_EQ(swapped, cs.keep);
    ASSERT_TRUE(tile::validate(wrong).ok()) << tile::validate(wrong);
    auto wrong_sig = testing::sm90a_signature(wrong);
    ASSERT_TRUE(wrong_sig.ok()) << wrong_sig.status();
    EXPECT_NE(*wrong_sig, *sig);
  }
}

TEST(ReduceStageExp, RulesNameTheOpOrTheField) {
  // stage in a loop body; of an integer tile.
  {
    tile::Builder b("stage_in_loop");
    tile::Value x = b.param("x", tile::Type::ptr(DType::kF32));
    tile::Value i = b.arange(32);
    tile::Value v = b.load(x, i);
    std::vector<tile::Value> loop = b.begin_for(b.const_int(tile::Elem::kI32, 0), b.const_int(tile::Elem::kI32, 4),
                                                b.const_int(tile::Elem::kI32, 1), {});
    b.stage(v);
    b.end_for({});
    auto p = b.finish();
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.status().message().find("stage #"), std::string::npos) << p.status();
    EXPECT_NE(p.status().message().find("top level"), std::string::npos) << p.status();
  }
  {
    tile::Builder b("stage_of_ints");
    b.stage(b.arange(32));
    auto p = b.finish();
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.status().message().find("stage"), std::string::npos) << p.status();
    EXPECT_NE(p.status().message().find("float tile"), std::string::npos) << p.status();
  }
  auto message = [](const ReduceDesc& d, const ReduceConfig& c) {
    auto p = dsl::reduce(d, c);
    return p.ok() ? std::string("ok") : std::string(p.status().message());
  };
  const ReduceConfig staged{.warps = 4, .elems_per_thread = 8, .keep_passes = 1, .keep_in_shared = true,
                            .stage_exp = true};
  EXPECT_EQ(message(softmax(DType::kBF16, 1024), staged), "ok");
  ReduceDesc rms = softmax(DType::kBF16, 1024);
  rms.op = ReduceOp::kRmsNorm;
  EXPECT_NE(message(rms, staged).find("ReduceConfig.stage_exp"), std::string::npos) << message(rms, staged);
  ReduceConfig in_registers = staged;
  in_registers.keep_in_shared = false;
  const std::string m = message(softmax(DType::kBF16, 1024), in_registers);
  EXPECT_NE(m.find("ReduceConfig.stage_exp"), std::string::npos) << m;
  EXPECT_NE(m.find("keep_in_shared false"), std::string::npos) << m;
  // The bound counts 6 bytes a bf16 element: passes the x alone would fit (strip 4096:
  // 20 passes of 8 KiB fit the 200 KiB; with their 16 KiB of e_i, 8 do).
  ReduceConfig big = staged;
  big.keep_passes = 20;
  ReduceConfig x_only = big;
  x_only.stage_exp = false;
  EXPECT_EQ(message(softmax(DType::kBF16, 4096), x_only), "ok");
  const std::string b = message(softmax(DType::kBF16, 4096), big);
  EXPECT_NE(b.find("ReduceConfig.keep_passes"), std::string::npos) << b;
  EXPECT_NE(b.find("stage_exp"), std::string::npos) << b;
  EXPECT_EQ(dsl::max_keep_passes(softmax(DType::kBF16, 1024), staged), dsl::max_staged_bytes(staged) / (1024 * 6));
}

}  // namespace
}  // namespace fixbits
