// elementwise_test.cpp — the rules that make RMSNorm/softmax second passes and narrow max
// trees layout-free (docs/verify.md), each with the cases it must keep apart:
//  - elementwise roots: out[q] = x[q] * s stored by 32 threads x 2 elements and by 64
//    threads x 1 element is one class; a shifted relation (x[q+1]), a store whose element
//    is not the loaded one (out[2t] = x[t]), a lane exchange mixing neighbours, and a
//    thread-varying value (%warpid) all split;
//  - widening: cvt.f32.f16 of a max.NaN.f16 tree under max.NaN.f32 is the f32 tree over the
//    widened leaves (so the f16/f32 cut may move), bf16 included; another inner op (add, min,
//    max without .NaN) or a cvt at the top with no f32 max above it splits;
//  - a packed store (st.global.b32 of {lo, hi}) is the two narrow stores, in order.
#include <string>

#include "gtest/gtest.h"
#include "verify/Signature.h"

namespace fixbits::verify {
namespace {

bool same(const std::string& a, const std::string& b) {
  auto e = equivalent(a, b);
  EXPECT_TRUE(e.ok()) << e.status();
  return e.ok() && e->equivalent;
}

// `threads` threads; thread t computes `per` elements q = per*t + j. out = param1,
// x = param0, s = param2[0]. `value` is PTX computing %f3 from %f1 = x[...] and %f2 = s,
// with %rd5 = &x[q] and %rd6 = &out[q] already set; `load_scale`/`store_scale` are the
// element multipliers of t in the load and store addresses.
std::string elementwise(int threads, int per, const std::string& value, int load_scale = 0,
                        int store_scale = 0, int load_offset = 0) {
  std::string body;
  for (int j = 0; j < per; ++j) {
    const std::string off = std::to_string(4 * j), loff = std::to_string(4 * j + 4 * load_offset);
    body += "\tld.global.b32 %f1, [%rd5+" + loff + "];\n" + value + "\tst.global.b32 [%rd6+" + off + "], %f3;\n";
  }
  const std::string ls = std::to_string(4 * (load_scale ? load_scale : per)),
                    ss = std::to_string(4 * (store_scale ? store_scale : per));
  return R"(.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 k_param_0, .param .u64 k_param_1, .param .u64 k_param_2)
.reqntid )" + std::to_string(threads) + R"(
{
	.reg .b32 %r<10>;
	.reg .b32 %f<10>;
	.reg .b64 %rd<10>;
	ld.param.b64 %rd1, [k_param_0];
	ld.param.b64 %rd2, [k_param_1];
	ld.param.b64 %rd3, [k_param_2];
	ld.global.b32 %f2, [%rd3];
	mov.u32 %r1, %tid.x;
	mul.wide.u32 %rd4, %r1, )" + ls + R"(;
	add.s64 %rd5, %rd1, %rd4;
	mul.wide.u32 %rd7, %r1, )" + ss + R"(;
	add.s64 %rd6, %rd2, %rd7;
)" + body + "\tret;\n}\n";
}

const std::string kScale = "\tmul.rn.f32 %f3, %f1, %f2;\n";

TEST(Elementwise, OneRelationUnderTwoLayoutsIsOneClass) {
  const std::string a = elementwise(32, 2, kScale), b = elementwise(64, 1, kScale);
  EXPECT_TRUE(same(a, b));
  EXPECT_TRUE(same(a, elementwise(16, 4, kScale)));
  // Another rounding is another function.
  std::string rz = b;
  rz.replace(rz.find("mul.rn.f32 %f3"), 10, "mul.rz.f32");
  EXPECT_FALSE(same(a, rz));
}

TEST(Elementwise, ShiftedOrMismatchedElementsSplit) {
  const std::string a = elementwise(32, 2, kScale);
  EXPECT_FALSE(same(a, elementwise(64, 1, kScale, 0, 0, 1)));  // out[q] = x[q+1] * s
  EXPECT_FALSE(same(a, elementwise(64, 1, kScale, 1, 2)));     // out[2t] = x[t] * s
  EXPECT_FALSE(same(elementwise(64, 1, kScale, 1, 2), elementwise(32, 1, kScale, 1, 2)));
}

TEST(Elementwise, ThreadVaryingValuesSplit) {
  // x[q] + x[q of lane ^ 1]: which element is the partner depends on the layout.
  const std::string xchg = "\tshfl.sync.bfly.b32 %f4, %f1, 1, 31, -1;\n\tadd.rn.f32 %f3, %f1, %f4;\n";
  EXPECT_FALSE(same(elementwise(32, 2, xchg), elementwise(64, 1, xchg)));
  // x[q] * warpid: the warp that stores q depends on the layout.
  const std::string warp = "\tmov.u32 %r2, %warpid;\n\tcvt.rn.f32.u32 %f5, %r2;\n\tmul.rn.f32 %f3, %f1, %f5;\n";
  EXPECT_FALSE(same(elementwise(32, 2, warp), elementwise(64, 1, warp)));
}

// One thread: the max of 8 halves at param0 stored as f32 at param1. `tree` computes %f20.
std::string max8(const std::string& tree) {
  std::string loads;
  for (int i = 0; i < 8; ++i) {
    loads += "\tld.global.b16 %rs" + std::to_string(i) + ", [%rd1+" + std::to_string(2 * i) + "];\n";
  }
  return R"(.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 k_param_0, .param .u64 k_param_1)
.reqntid 1
{
	.reg .b16 %rs<30>;
	.reg .b32 %f<30>;
	.reg .b64 %rd<4>;
	ld.param.b64 %rd1, [k_param_0];
	ld.param.b64 %rd2, [k_param_1];
)" + loads + tree + "\tst.global.b32 [%rd2], %f20;\n\tret;\n}\n";
}

// Halves paired in f16 up to `narrow_levels` levels, widened, then f32 to the top.
std::string max_tree(int narrow_levels, const std::string& narrow_op = "max.NaN.f16",
                     const std::string& wide_op = "max.NaN.f32", const std::string& cvt = "cvt.f32.f16") {
  std::string s;
  int width = 8, next = 8;
  std::vector<std::string> cur;
  for (int i = 0; i < 8; ++i) cur.push_back("%rs" + std::to_string(i));
  for (int l = 0; l < narrow_levels; ++l) {
    std::vector<std::string> up;
    for (int i = 0; i + 1 < width; i += 2) {
      const std::string r = "%rs" + std::to_string(next++);
      s += "\t" + narrow_op + " " + r + ", " + cur[i] + ", " + cur[i + 1] + ";\n";
      up.push_back(r);
    }
    cur = up;
    width /= 2;
  }
  int f = 0;
  for (std::string& c : cur) {
    const std::string r = "%f" + std::to_string(f++);
    s += "\t" + cvt + " " + r + ", " + c + ";\n";
    c = r;
  }
  while (cur.size() > 1) {
    std::vector<std::string> up;
    for (size_t i = 0; i + 1 < cur.size(); i += 2) {
      const std::string r = cur.size() == 2 ? std::string("%f20") : "%f" + std::to_string(f++);
      s += "\t" + wide_op + " " + r + ", " + cur[i] + ", " + cur[i + 1] + ";\n";
      up.push_back(r);
    }
    cur = up;
  }
  return max8(s);
}

TEST(Widening, TheCutBetweenNarrowAndWideMaxMayMove) {
  EXPECT_TRUE(same(max_tree(0), max_tree(1)));
  EXPECT_TRUE(same(max_tree(0), max_tree(2)));
  EXPECT_TRUE(same(max_tree(1, "min.NaN.f16", "min.NaN.f32"), max_tree(2, "min.NaN.f16", "min.NaN.f32")));
  EXPECT_TRUE(same(max_tree(0, "max.NaN.bf16", "max.NaN.f32", "cvt.f32.bf16"),
                   max_tree(2, "max.NaN.bf16", "max.NaN.f32", "cvt.f32.bf16")));
}

TEST(Widening, OtherInnerOpsSplit) {
  EXPECT_FALSE(same(max_tree(0), max_tree(1, "add.rn.f16")));
  EXPECT_FALSE(same(max_tree(0), max_tree(1, "min.NaN.f16")));
  EXPECT_FALSE(same(max_tree(0), max_tree(1, "max.f16")));  // NaN handling differs
  EXPECT_FALSE(same(max_tree(0), max_tree(0, "max.NaN.f16", "max.f32")));
  // All three levels in f16 and one cvt on top: no f32 max above it to give its NaN.
  EXPECT_FALSE(same(max_tree(0), max_tree(3)));
  // The bf16 max is read as a float op (it used to be an opaque integer op).
  EXPECT_FALSE(same(max_tree(1, "max.NaN.bf16", "max.NaN.f32", "cvt.f32.bf16"),
                    max_tree(1, "min.NaN.bf16", "max.NaN.f32", "cvt.f32.bf16")));
}

std::string two_halves(const std::string& stores) {
  return R"(.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 k_param_0, .param .u64 k_param_1)
.reqntid 1
{
	.reg .b16 %rs<4>;
	.reg .b32 %r<4>;
	.reg .b32 %f<4>;
	.reg .b64 %rd<4>;
	ld.param.b64 %rd1, [k_param_0];
	ld.param.b64 %rd2, [k_param_1];
	ld.global.b32 %f1, [%rd1];
	ld.global.b32 %f2, [%rd1+4];
	cvt.rn.f16.f32 %rs1, %f1;
	cvt.rn.f16.f32 %rs2, %f2;
)" + stores + "\tret;\n}\n";
}

TEST(PackedStore, IsTheNarrowStoresInOrder) {
  const std::string narrow = two_halves("\tst.global.b16 [%rd2], %rs1;\n\tst.global.b16 [%rd2+2], %rs2;\n");
  const std::string packed = two_halves("\tmov.b32 %r1, {%rs1, %rs2};\n\tst.global.b32 [%rd2], %r1;\n");
  const std::string swapped = two_halves("\tmov.b32 %r1, {%rs2, %rs1};\n\tst.global.b32 [%rd2], %r1;\n");
  EXPECT_TRUE(same(narrow, packed));
  EXPECT_FALSE(same(narrow, swapped));
}

}  // namespace
}  // namespace fixbits::verify
