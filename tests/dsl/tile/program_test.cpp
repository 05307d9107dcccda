// Tile DSL: builder, canonical text, hash, validation errors naming the op, and
// dsl::reduce's knob validation.
#include <gtest/gtest.h>

#include <functional>

#include "absl/strings/str_format.h"
#include "dsl/tile/Program.h"
#include "dsl/tile/ReduceProgram.h"

namespace fixbits::tile {
namespace {

Program small_sum(int64_t extent) {
  Builder b("row_sum");
  Value x = b.param("x", Type::ptr(DType::kF32));
  Value y = b.param("y", Type::ptr(DType::kF32));
  Value i = b.arange(extent);
  Value v = b.load(x, i);
  Value s = b.reduce(v, 0, Combine::kAdd, dsl::TreeOrder::kPinned);
  b.store(y, b.const_int(Elem::kI32, 0), s);
  return *b.finish();
}

TEST(TileProgram, PrintsCanonicalText) {
  EXPECT_EQ(to_string(small_sum(128)),
            "program row_sum(%0 x: ptr<f32>, %1 y: ptr<f32>) warps=4 grid=rows {\n"
            "  %2 = arange 128 : i32<128>\n"
            "  %3 = load %0[%2] : f32<128>\n"
            "  %4 = reduce %3 axis=0 combine=add order=pinned strip=0 : f32\n"
            "  %5 = const 0 : i32\n"
            "  store %1[%5], %4\n"
            "}\n");
}

TEST(TileProgram, HashIsStableAndSeparatesPrograms) {
  EXPECT_EQ(hash(small_sum(128)), hash(small_sum(128)));
  EXPECT_NE(hash(small_sum(128)), hash(small_sum(256)));
  EXPECT_TRUE(small_sum(64) == small_sum(64));
  EXPECT_FALSE(small_sum(64) == small_sum(128));
  // FNV-1a 64 of the text: recompute independently.
  std::string t = to_string(small_sum(128));
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : t) h = (h ^ c) * 0x100000001b3ull;
  EXPECT_EQ(hash(small_sum(128)), h);
}

TEST(TileProgram, ReduceAxisOutOfRangeNamesTheOp) {
  Builder b("bad");
  Value x = b.param("x", Type::ptr(DType::kF32));
  Value v = b.load(x, b.arange(64));                       // #0 arange, #1 load
  Value t = b.reshape(v, {8, 8});                          // #2
  b.reduce(t, 2, Combine::kAdd, dsl::TreeOrder::kPinned);  // #3
  absl::StatusOr<Program> p = b.finish();
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(), "reduce #3: axis 2 is out of range for a rank-2 tile");
}

TEST(TileProgram, TypeErrorsNameOpAndOperands) {
  {
    Builder b("mix");
    Value i = b.arange(32);
    b.add(i, b.const_f32(1.0f));  // #2: i32 + f32
    EXPECT_EQ(b.finish().status().message(),
              "add #2: operand types i32<32> and f32 differ; cast one first");
  }
  {
    Builder b("strip");
    Value x = b.param("x", Type::ptr(DType::kF32));
    Value v = b.load(x, b.arange(96));
    b.reduce(v, 0, Combine::kAdd, dsl::TreeOrder::kPinned, 64);
    EXPECT_NE(b.finish().status().message().find("reduce #2: strip 64 must be a power of two "
                                                 "dividing the axis extent 96"),
              std::string::npos);
  }
  {
    Builder b("inexact");
    b.const_float(Elem::kF16, 1e-30f);
    EXPECT_EQ(b.finish().status().message(),
              "const #0: value 1e-30 is not exactly representable in f16");
  }
  {
    Builder b("open");
    b.begin_for(b.const_int(Elem::kI32, 0), b.const_int(Elem::kI32, 4),
                b.const_int(Elem::kI32, 1), {});
    EXPECT_EQ(b.finish().status().message(), "for #3: the loop was never closed with end_for");
  }
}

// reduce_group: K tiles, K scalar results in consecutive ids, printed with its tiles,
// strip, chaining and init; the type rules name the bad operand.
TEST(TileProgram, ReduceGroupPrintsAndChecksItsTiles) {
  {
    Builder b("group");
    Value x = b.param("x", Type::ptr(DType::kF32));
    Value i = b.arange(64);
    Value t0 = b.load(x, i);
    Value t1 = b.load(x, i);
    std::vector<Value> r = b.reduce_group({t0, t1}, Combine::kMax, 32, b.const_f32(0.0f), true);
    ASSERT_EQ(r.size(), 2u);
    b.store(x, b.const_int(Elem::kI32, 0), r[1]);
    absl::StatusOr<Program> p = b.finish();
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_NE(to_string(*p).find("  %5, %6 = reduce_group %2, %3 combine=max strip=32 chained init=%4 : f32, f32\n"),
              std::string::npos) << to_string(*p);
    EXPECT_EQ(r[0].id, 5);
    EXPECT_EQ(r[1].id, 6);
  }
  const auto error_of = [](const std::function<void(Builder&, Value)>& body) {
    Builder b("bad");
    Value x = b.param("x", Type::ptr(DType::kF32));
    body(b, x);
    return std::string(b.finish().status().message());
  };
  EXPECT_EQ(error_of([](Builder& b, Value x) {
              Value v = b.load(x, b.arange(64));
              b.reduce_group({v}, Combine::kAdd, 0, std::nullopt, false);  // #2
            }),
            "reduce_group #2: groups at least 2 tiles, got 1");
  EXPECT_EQ(error_of([](Builder& b, Value x) {
              Value v = b.load(x, b.arange(64));
              Value w = b.load(x, b.arange(32));
              b.reduce_group({v, w}, Combine::kAdd, 0, std::nullopt, false);  // #4
            }),
            "reduce_group #4: tile 1 has type f32<32>, tile 0 f32<64>");
  EXPECT_NE(error_of([](Builder& b, Value x) {
              Value v = b.load(x, b.arange(96));
              b.reduce_group({v, v}, Combine::kAdd, 64, std::nullopt, false);
            }).find("strip 64 must be a power of two dividing the axis extent 96"),
            std::string::npos);
  EXPECT_EQ(error_of([](Builder& b, Value x) {
              Value v = b.load(x, b.arange(64));
              b.reduce_group({v, v}, Combine::kAdd, 0, b.cast(b.const_f32(1.0f), Elem::kF16), false);
            }),
            "reduce_group #4: init has type f16, the results are f32");
  EXPECT_EQ(error_of([](Builder& b, Value x) {
              Value v = b.reshape(b.load(x, b.arange(64)), {8, 8});
              b.reduce_group({v, v}, Combine::kAdd, 0, std::nullopt, false);  // #3
            }),
            "reduce_group #3: the tiles must be rank-1 f32, got f32<8x8>");
}

TEST(TileProgram, ValidateCatchesHandEditedPrograms) {
  Program p = small_sum(128);
  p.values[3] = Type::tile(Elem::kF16, {128});  // the load's recorded type is wrong
  EXPECT_EQ(validate(p).message(),
            "load #1: value %3 is recorded as f16<128> but the op gives f32<128>");
  p = small_sum(128);
  p.body[1].args[1] = 9;  // operand not yet defined
  EXPECT_EQ(validate(p).message(), "load #1: operand %9 is used before it is defined");
  p = small_sum(128);
  p.num_warps = 3;
  EXPECT_FALSE(validate(p).ok());
}

// fp8 elements are storage: loads, exact constants, selects and wgmma operands; no
// arithmetic, comparison or cast, each refused with a message naming the op.
TEST(TileProgram, Fp8IsStorageOnly) {
  {
    Builder b("fp8_load");
    Value x = b.param("x", Type::ptr(DType::kF8E4M3));
    Value i = b.arange(64);
    Value v = b.load(x, i, b.compare(CompareOp::kLt, i, b.const_int(Elem::kI32, 40)),
                     b.const_float(Elem::kE4M3, -0.0f));
    Value w = b.select(b.compare(CompareOp::kLt, i, b.const_int(Elem::kI32, 3)), v,
                       b.splat(b.const_float(Elem::kE4M3, 448.0f), {64}));
    b.store(x, i, w);
    absl::StatusOr<Program> p = b.finish();
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(p->values[v.id], Type::tile(Elem::kE4M3, {64}));
    EXPECT_NE(to_string(*p).find("e4m3<64>"), std::string::npos) << to_string(*p);
  }
  auto fails = [](const std::function<void(Builder&, Value)>& body, const std::string& want) {
    Builder b("fp8_bad");
    Value x = b.param("x", Type::ptr(DType::kF8E5M2));
    body(b, b.load(x, b.arange(32)));
    absl::StatusOr<Program> p = b.finish();
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.status().message().find(want), std::string::npos) << p.status();
  };
  fails([](Builder& b, Value v) { b.cast(v, Elem::kF32); }, "cannot cast e5m2<32> to f32");
  fails([](Builder& b, Value v) { b.add(v, v); }, "fp8 is storage only");
  fails([](Builder& b, Value v) { b.compare(CompareOp::kLt, v, v); }, "cannot compare e5m2<32>");
  fails([](Builder& b, Value) { b.const_float(Elem::kE5M2, 0.3f); },
        "not exactly representable in e5m2");
}

TEST(TileProgram, LoopsCarryTypedValues) {
  Builder b("loop");
  Value x = b.param("x", Type::ptr(DType::kF32));
  Value n = b.param("n", Type::scalar(Elem::kI32));
  std::vector<Value> l = b.begin_for(b.const_int(Elem::kI32, 0), n, b.const_int(Elem::kI32, 32),
                                     {b.const_f32(-0.0f)});
  Value v = b.load(x, b.add(b.arange(32), l[0]));
  Value r = b.reduce(v, 0, Combine::kMax, dsl::TreeOrder::kPinned, 8, l[1]);
  std::vector<Value> out = b.end_for({r});
  absl::StatusOr<Program> p = b.finish();
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->values[out[0].id], Type::scalar(Elem::kF32));
  EXPECT_NE(to_string(*p).find("init=%"), std::string::npos);
}

TEST(TileProgram, LoopBodyValuesAreScopedToTheBody) {
  Builder b("scope");
  Value x = b.param("x", Type::ptr(DType::kF32));
  std::vector<Value> l = b.begin_for(b.const_int(Elem::kI32, 0), b.const_int(Elem::kI32, 64),
                                     b.const_int(Elem::kI32, 32), {});  // #0..#2, for #3
  Value inner = b.load(x, b.add(b.arange(32), l[0]));                 // #4 arange, #5 add, #6 load
  b.end_for({});
  b.reduce(inner, 0, Combine::kAdd, dsl::TreeOrder::kPinned);          // #7
  EXPECT_EQ(b.finish().status().message(),
            absl::StrFormat("reduce #7: operand %%%d was defined inside a loop body and is not "
                            "visible after it; carry it out of the loop instead", inner.id));
}

TEST(ReduceProgram, ValidatesKnobsNamingTheField) {
  dsl::ReduceDesc d;
  EXPECT_EQ(dsl::reduce(d, {.warps = 3}).status().message(),
            "ReduceConfig.warps 3 is not a power of two in [1, 32].");
  EXPECT_EQ(dsl::reduce(d, {.warps = 4, .elems_per_thread = 128}).status().message(),
            "ReduceConfig.elems_per_thread 128 is not a power of two in [1, 64].");
  d.strip = 65536;
  EXPECT_NE(dsl::reduce(d, {.warps = 4}).status().message().find("raise ReduceConfig.warps to at least 32"),
            std::string::npos);
  EXPECT_TRUE(dsl::reduce(d, {.warps = 32}).ok());
  d.strip = 1024;
  d.axis = dsl::ReduceAxis::kColumn;
  absl::StatusOr<Program> col = dsl::reduce(d);
  ASSERT_TRUE(col.ok()) << col.status();
  EXPECT_EQ(col->grid, "cols/128");  // default 4 warps x 32 lanes: 128 columns per block
  EXPECT_EQ(*dsl::grid_blocks(col->grid, 7, 1, 1), 1);
  EXPECT_EQ(*dsl::grid_blocks(col->grid, 7, 128, 1), 1);
  EXPECT_EQ(*dsl::grid_blocks(col->grid, 7, 129, 1), 2);
  EXPECT_EQ(*dsl::grid_blocks("rows", 7, 129, 1), 7);
  EXPECT_EQ(*dsl::grid_blocks("row_blocks", 7, 129, 3), 21);
  EXPECT_EQ(*dsl::grid_blocks("rows/3", 7, 129, 1), 3);
  EXPECT_EQ(dsl::grid_blocks("cols/0", 7, 129, 1).status().message(),
            "Program.grid \"cols/0\" is not rows, cols, row_blocks, rows/<R>, cols/<C> or col_blocks/<C>.");
  EXPECT_EQ(dsl::grid_blocks("rows/0", 7, 129, 1).status().message(),
            "Program.grid \"rows/0\" is not rows, cols, row_blocks, rows/<R>, cols/<C> or col_blocks/<C>.");
  ASSERT_EQ(col->params.size(), 4u);
  EXPECT_EQ(col->params[2].name, "rows");
  EXPECT_EQ(col->params[3].name, "cols");
  EXPECT_EQ(dsl::reduce(d, {.warps = 4, .elems_per_thread = 4, .lanes = 48}).status().message(),
            "ReduceConfig.lanes 48 is not 32 (NVIDIA) or 64 (AMD wave64).");
}

TEST(ReduceProgram, BuildsEveryOpAndOrder) {
  for (dsl::ReduceOp op : {dsl::ReduceOp::kSum, dsl::ReduceOp::kMax, dsl::ReduceOp::kMin,
                           dsl::ReduceOp::kRmsNorm, dsl::ReduceOp::kSoftmax}) {
    for (dsl::TreeOrder o : {dsl::TreeOrder::kPinned, dsl::TreeOrder::kFree}) {
      dsl::ReduceDesc d{.op = op, .in_dtype = DType::kBF16, .out_dtype = DType::kF16, .order = o,
                        .strip = 256};
      absl::StatusOr<Program> p = dsl::reduce(d, {.warps = 2, .elems_per_thread = 8});
      ASSERT_TRUE(p.ok()) << p.status();
      EXPECT_TRUE(validate(*p).ok());
      EXPECT_EQ(p->num_warps, 2);
    }
  }
  EXPECT_EQ(dsl::pass_extent({.strip = 4096}, {.warps = 4, .elems_per_thread = 4}), 4096);
  EXPECT_EQ(dsl::pass_extent({.strip = 16}, {.warps = 4, .elems_per_thread = 4}), 512);
}

}  // namespace
}  // namespace fixbits::tile
