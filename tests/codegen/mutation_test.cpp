// Robustness: thousands of randomly corrupted tile programs (operand ids, attributes,
// kinds, types) go through validate and compile. Each must come back as OK or as a
// Status whose message names an op or field — never a crash, hang or LLVM assert.
#include <gtest/gtest.h>

#include <random>

#include "codegen/Compile.h"
#include "dsl/tile/ReduceProgram.h"

namespace fixbits::codegen {
namespace {

void visit(std::vector<tile::Op>& ops, std::vector<tile::Op*>& out) {
  for (tile::Op& op : ops) {
    out.push_back(&op);
    visit(op.body, out);
  }
}

void mutate(tile::Program& p, std::mt19937& rng) {
  std::vector<tile::Op*> ops;
  visit(p.body, ops);
  tile::Op& op = *ops[rng() % ops.size()];
  const int n = static_cast<int>(p.values.size());
  switch (rng() % 9) {
    case 0:
      if (!op.args.empty()) op.args[rng() % op.args.size()] = static_cast<int>(rng() % (n + 4)) - 2;
      break;
    case 1: op.imm = static_cast<int64_t>(rng() % 7) - 2; break;
    case 2: op.kind = static_cast<tile::OpKind>(rng() % 15); break;
    case 3: op.strip = int64_t{1} << (rng() % 14); break;
    case 4: op.type.elem = static_cast<tile::Elem>(rng() % 7); break;
    case 5: op.has_mask = !op.has_mask; break;
    case 6: if (!op.args.empty()) op.args.pop_back(); break;
    case 7: p.values[rng() % n].shape = {static_cast<int64_t>(rng() % 600)}; break;
    case 8: op.order = op.order == dsl::TreeOrder::kPinned ? dsl::TreeOrder::kFree : dsl::TreeOrder::kPinned; break;
  }
}

TEST(Mutation, CorruptProgramsFailCleanly) {
  std::mt19937 rng(2024);
  std::vector<tile::Program> seeds;
  for (dsl::ReduceOp op : {dsl::ReduceOp::kSum, dsl::ReduceOp::kRmsNorm, dsl::ReduceOp::kSoftmax}) {
    for (dsl::TreeOrder o : {dsl::TreeOrder::kPinned, dsl::TreeOrder::kFree}) {
      seeds.push_back(*dsl::reduce({.op = op, .in_dtype = DType::kF16, .order = o, .strip = 64},
                                   {.warps = 2, .elems_per_thread = 2}));
    }
  }
  int rejected = 0, compiled = 0;
  for (int iter = 0; iter < 600; ++iter) {
    tile::Program p = seeds[iter % seeds.size()];
    for (int k = 0; k <= iter % 3; ++k) mutate(p, rng);
    absl::Status v = tile::validate(p);
    if (!v.ok()) {
      ++rejected;
      EXPECT_NE(v.message().find(' '), absl::string_view::npos) << v;
      continue;
    }
    // Valid after mutation: compile every tenth (LLVM is slow) and accept either outcome.
    if (iter % 10 != 0) continue;
    absl::StatusOr<CompiledKernel> k = compile(p, Target::kNvptxSm90a);
    if (k.ok()) {
      ++compiled;
      EXPECT_NE(k->text.find(".entry"), std::string::npos);
    } else {
      EXPECT_NE(k.status().message().find('#'), absl::string_view::npos) << k.status();
    }
  }
  EXPECT_GT(rejected, 300);
  EXPECT_GT(compiled, 0);
}

}  // namespace
}  // namespace fixbits::codegen
