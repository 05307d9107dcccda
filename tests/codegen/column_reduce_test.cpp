// Coalesced column reductions: dsl::reduce of a pinned column ReduceDesc, run block by
// block on the CPU interpreter (which reduces with codegen's layout choice and plan,
// as LowerReduce emits them), memcmp against dsl/reference's ReduceReference for
// shapes with 1 row, 1 column, non-powers of two and adversarial values (±L, r,
// subnormals, -0.0, NaN, ±inf: tests/jit/RandomInputs.h), under
// several warp counts and pass sizes; plus the program's structure (one coalesced
// row-major load per pass, an axis-0 reduce) and the codegen choice it triggers.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>

#include "absl/strings/str_cat.h"
#include "codegen/Compile.h"
#include "codegen/SelectLayout.h"
#include "dsl/reference/Reference.h"
#include "dsl/tile/ReduceProgram.h"
#include "tests/codegen/ProgramInterpreter.h"
#include "tests/jit/RandomInputs.h"

namespace fixbits {
namespace {

using dsl::ReduceConfig;
using dsl::ReduceDesc;
using dsl::ReduceOp;

// Every block of the column program on the interpreter; y's bits.
absl::StatusOr<std::vector<uint32_t>> run_columns(const ReduceDesc& d, const ReduceConfig& cfg,
                                                  const dsl::reference::ReduceProblem& p) {
  absl::StatusOr<tile::Program> prog = dsl::reduce(d, cfg);
  if (!prog.ok()) return prog.status();
  if (prog->grid != absl::StrCat("cols/", int64_t{cfg.lanes} * cfg.warps)) {
    return absl::InternalError("unexpected grid " + prog->grid);
  }
  absl::StatusOr<int64_t> blocks = dsl::grid_blocks(prog->grid, p.rows, p.cols, 1);
  if (!blocks.ok()) return blocks.status();
  testing::Buffers mem;
  mem["x"] = {d.in_dtype, p.x};
  mem["y"] = {d.out_dtype, std::vector<uint32_t>(static_cast<size_t>(p.cols), 0xdeadu)};
  for (int64_t b = 0; b < *blocks; ++b) {
    absl::Status s = testing::run_block(*prog, b, {{"rows", p.rows}, {"cols", p.cols}}, {}, mem, cfg.lanes);
    if (!s.ok()) return s;
  }
  return mem["y"].bits;
}

TEST(ColumnReduce, BitIdenticalToReferenceForEveryShapeAndKnob) {
  int cases = 0;
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin}) {
    for (DType in : {DType::kF32, DType::kBF16}) {
      for (int64_t strip : {int64_t{1}, int64_t{4}, int64_t{64}, int64_t{1024}}) {
        ReduceDesc d{.op = op, .axis = dsl::ReduceAxis::kColumn, .in_dtype = in,
                     .out_dtype = in == DType::kF32 ? DType::kF32 : DType::kBF16, .strip = strip};
        for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{
                 {1, 1}, {1, 300}, {1000, 1}, {37, 130}, {257, 33}, {130, 64}}) {
          dsl::reference::ReduceProblem p{.rows = rows, .cols = cols, .x = {}, .w = {}};
          std::mt19937_64 rng(static_cast<uint64_t>(rows * 31 + cols + strip));
          p.x = testing::random_bits(in, static_cast<size_t>(rows * cols), rng,
                                     testing::Mix::kAdversarial, /*specials=*/true);
          auto ref = dsl::reference::reduce(d, p);
          ASSERT_TRUE(ref.ok()) << ref.status();
          for (ReduceConfig c : {ReduceConfig{.warps = 1, .elems_per_thread = 64},
                                 ReduceConfig{.warps = 4, .elems_per_thread = 4},
                                 ReduceConfig{.warps = 8, .elems_per_thread = 16},
                                 ReduceConfig{.warps = 2, .elems_per_thread = 8, .lanes = 64}}) {
            auto got = run_columns(d, c, p);
            ASSERT_TRUE(got.ok()) << dsl::to_string(d) << " warps=" << c.warps << ": " << got.status();
            ASSERT_EQ(*got, *ref) << dsl::to_string(d) << " rows=" << rows << " cols=" << cols
                                  << " warps=" << c.warps << " ept=" << c.elems_per_thread
                                  << " lanes=" << c.lanes;
            ++cases;
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 3 * 2 * 4 * 6 * 4);
}

// The program loads one (Rq*C) row-major tile per pass (consecutive threads,
// consecutive columns) and reduces its (Rq, C) view along axis 0; codegen converts
// it to one column per thread, so the reduce needs no shuffle and no cross-warp stage.
TEST(ColumnReduce, ProgramLoadsRowSegmentsAndReducesAxisZero) {
  ReduceDesc d{.op = ReduceOp::kSum, .axis = dsl::ReduceAxis::kColumn, .strip = 1024};
  auto prog = dsl::reduce(d, ReduceConfig{.warps = 4, .elems_per_thread = 4});
  ASSERT_TRUE(prog.ok()) << prog.status();
  const std::string text = tile::to_string(*prog);
  EXPECT_NE(text.find("reshape"), std::string::npos) << text;
  EXPECT_NE(text.find(": f32<4x128>"), std::string::npos) << text;
  EXPECT_NE(text.find("axis=0 combine=add order=pinned strip=4"), std::string::npos) << text;
  codegen::Layout producer;
  ASSERT_TRUE(codegen::blocked_layout({4, 128}, 32, 4, &producer).ok());
  // Warp w reads row w: lane l columns 4l..4l+3, 512 contiguous bytes per warp.
  for (int lane = 0; lane < 32; ++lane) {
    EXPECT_EQ(codegen::coord_of(producer, {0, lane, 2}), (std::vector<int64_t>{2, 4 * lane}));
  }
  tile::Op op;
  op.kind = tile::OpKind::kReduce;
  op.imm = 0;
  op.strip = 4;
  auto choice = codegen::select_reduce_layout(producer, op, 0, 32, 4);
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_TRUE(choice->convert);
  for (auto target : {codegen::Target::kNvptxSm90a, codegen::Target::kAmdgpuGfx942}) {
    ReduceConfig c{.warps = 4, .elems_per_thread = 4, .lanes = target == codegen::Target::kNvptxSm90a ? 32 : 64};
    auto p = dsl::reduce(d, c);
    ASSERT_TRUE(p.ok()) << p.status();
    auto k = codegen::compile(*p, target);
    ASSERT_TRUE(k.ok()) << k.status();
  }
}

}  // namespace
}  // namespace fixbits
