// codegen::compile on dsl::reduce programs: the PTX carries the pinned shuffle
// order (offsets 1,2,4,8,16) or the free one (16,8,4,2,1), correctly rounded adds,
// no fma outside fixbits_exp, barriers exactly where the plan needs shared memory;
// bad programs come back as a Status naming the op. Also AMDGPU gfx942 emission,
// FIXBITS_DUMP, and ReduceConfig.min_blocks_per_sm (.minnctapersm; the same body);
// compiles on several threads at once give the text one thread gives.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "codegen/Compile.h"
#include "dsl/tile/ReduceProgram.h"

namespace fixbits::codegen {
namespace {

using dsl::ReduceDesc;
using dsl::ReduceOp;
using dsl::TreeOrder;

CompiledKernel must_compile(const ReduceDesc& d, const dsl::ReduceConfig& cfg,
                            Target t = Target::kNvptxSm90a) {
  absl::StatusOr<tile::Program> p = dsl::reduce(d, cfg);
  EXPECT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CompiledKernel> k = compile(*p, t);
  EXPECT_TRUE(k.ok()) << k.status();
  return k.ok() ? *k : CompiledKernel{};
}

// Offsets of every shfl.sync.bfly in text order.
std::vector<int> bfly_offsets(const std::string& ptx) {
  std::vector<int> out;
  std::regex re(R"(shfl\.sync\.bfly\.b32\s+%r\d+(?:\|%p\d+)?,\s*%r\d+,\s*(\d+),\s*31,\s*-1;)");
  for (std::sregex_iterator it(ptx.begin(), ptx.end(), re), end; it != end; ++it) {
    out.push_back(std::stoi((*it)[1]));
  }
  return out;
}

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(Compile, PinnedSumHasCountUpShufflesAndRoundedAdds) {
  for (dsl::ReduceConfig cfg : {dsl::ReduceConfig{4, 4}, {8, 2}, {2, 8}, {32, 1}}) {
    CompiledKernel k = must_compile({.strip = 1024}, cfg);
    SCOPED_TRACE(k.entry);
    EXPECT_NE(k.text.find(".target sm_90a"), std::string::npos);
    EXPECT_NE(k.text.find(".entry " + k.entry), std::string::npos);
    EXPECT_EQ(bfly_offsets(k.text), (std::vector<int>{1, 2, 4, 8, 16}));
    EXPECT_GT(count(k.text, "add.rn.f32"), 0);
    EXPECT_EQ(count(k.text, "fma.rn"), 0);
    EXPECT_EQ(count(k.text, "add.f32"), 0);  // every add carries .rn
    EXPECT_EQ(count(k.text, "bar.sync"), 1);  // one per pass: the slots are double-buffered
    EXPECT_EQ(k.block_threads, 32 * cfg.warps);
    ASSERT_EQ(k.params.size(), 3u);
    EXPECT_EQ(k.params[0].kind, ParamKind::kPointer);
    EXPECT_EQ(k.params[2].kind, ParamKind::kI32);
    EXPECT_EQ(k.grid, "rows");
  }
}

TEST(Compile, OneWarpWholeStripNeedsNoBarrier) {
  // strip 1024 = 32 registers x 32 lanes: lanes finish the strip, no shared memory.
  CompiledKernel k = must_compile({.strip = 1024}, {1, 32});
  EXPECT_EQ(bfly_offsets(k.text), (std::vector<int>{1, 2, 4, 8, 16}));
  EXPECT_EQ(count(k.text, "bar.sync"), 0);
}

TEST(Compile, ShortStripsUseFewerLaneLevels) {
  // strip 16 over 4 registers per thread: lane offsets 1, 2 then a chain through smem.
  CompiledKernel k = must_compile({.strip = 16}, {4, 4});
  EXPECT_EQ(bfly_offsets(k.text), (std::vector<int>{1, 2}));
  EXPECT_GT(count(k.text, "bar.sync"), 0);
}

TEST(Compile, FreeSumCountsDown) {
  CompiledKernel k = must_compile({.order = TreeOrder::kFree}, {4, 4});
  EXPECT_EQ(bfly_offsets(k.text), (std::vector<int>{16, 8, 4, 2, 1}));
  EXPECT_EQ(count(k.text, "fma.rn"), 0);
}

TEST(Compile, MaxUsesNanPropagatingMax) {
  CompiledKernel k = must_compile({.op = ReduceOp::kMax, .in_dtype = DType::kF16, .strip = 256}, {4, 4});
  EXPECT_GT(count(k.text, "max.NaN.f32"), 0);
  EXPECT_EQ(bfly_offsets(k.text), (std::vector<int>{1, 2, 4, 8, 16}));
  EXPECT_GT(count(k.text, "cvt.f32.f16"), 0);
}

TEST(Compile, RmsNormAndSoftmax) {
  CompiledKernel r = must_compile({.op = ReduceOp::kRmsNorm, .in_dtype = DType::kBF16,
                                   .out_dtype = DType::kBF16, .strip = 512}, {4, 4});
  EXPECT_GT(count(r.text, "sqrt.rn.f32"), 0);
  EXPECT_GT(count(r.text, "mul.rn.f32"), 0);
  EXPECT_EQ(count(r.text, "fma.rn"), 0);
  EXPECT_EQ(count(r.text, "sqrt.approx"), 0);
  EXPECT_EQ(r.params.size(), 5u);
  EXPECT_EQ(r.params[4].kind, ParamKind::kF32);
  CompiledKernel s = must_compile({.op = ReduceOp::kSoftmax, .strip = 1024}, {4, 4});
  EXPECT_GT(count(s.text, "fma.rn.f32"), 0);  // fixbits_exp's Horner steps
  EXPECT_GT(count(s.text, "add.rn.f32"), 0);  // rint(t) as (t + 1.5 * 2^23) - 1.5 * 2^23
  EXPECT_GT(count(s.text, "0f4B400000"), 0);
  EXPECT_EQ(count(s.text, "cvt.rni"), 0);     // no conversion instruction (codegen/LowerExp.h)
  EXPECT_EQ(count(s.text, "ex2.approx"), 0);
  EXPECT_EQ(count(s.text, "div.approx"), 0);
  EXPECT_EQ(count(s.text, "div.full"), 0);
  // max pass then sum pass, both pinned.
  EXPECT_EQ(bfly_offsets(s.text), (std::vector<int>{1, 2, 4, 8, 16, 1, 2, 4, 8, 16}));
}

TEST(Compile, PinnedColumnReductionIsCoalescedAndShuffleFree) {
  // Block p owns lanes*warps columns; each pass reads whole row segments with
  // 16-byte loads, and SelectLayout's conversion through shared memory puts one
  // column in each thread, so the tree needs no lane exchange at all.
  CompiledKernel k = must_compile({.op = ReduceOp::kSum, .axis = dsl::ReduceAxis::kColumn,
                                   .strip = 256}, {4, 4});
  EXPECT_EQ(k.grid, "cols/128");  // 4 warps x 32 lanes: 128 columns per block
  ASSERT_EQ(k.params.size(), 4u);
  EXPECT_EQ(k.params[2].name, "rows");
  EXPECT_EQ(k.params[3].name, "cols");
  EXPECT_EQ(bfly_offsets(k.text), (std::vector<int>{}));
  EXPECT_EQ(count(k.text, "bar.sync"), 1);
  EXPECT_GE(count(k.text, "ld.global.v4.b32"), 1);
  EXPECT_EQ(count(k.text, "fma.rn"), 0);
}

TEST(Compile, AmdgpuGfx942) {
  // Pinned over a full wave: DPP row_shr 1,2,4,8 then row_bcast 15, 31.
  CompiledKernel k = must_compile({.strip = 1024}, {4, 4, 64}, Target::kAmdgpuGfx942);
  EXPECT_NE(k.text.find("gfx942"), std::string::npos);
  size_t at = 0;
  for (const char* step : {"row_shr:1 ", "row_shr:2 ", "row_shr:4 ", "row_shr:8 ", "row_bcast:15",
                           "row_bcast:31"}) {
    size_t p = k.text.find(step, at);
    ASSERT_NE(p, std::string::npos) << step;
    at = p;
  }
  EXPECT_EQ(count(k.text, "ds_bpermute_b32"), 0);
  EXPECT_EQ(count(k.text, "s_barrier"), 1);  // double-buffered LDS
  EXPECT_EQ(k.block_threads, 256);
  // Free order declines DPP: six shuffle levels counting down.
  CompiledKernel f = must_compile({.order = TreeOrder::kFree}, {4, 4, 64}, Target::kAmdgpuGfx942);
  EXPECT_EQ(count(f.text, "ds_bpermute_b32"), 6);
  EXPECT_EQ(count(f.text, "row_shr"), 0);
}

// min_blocks_per_sm asks ptxas for an occupancy (.minnctapersm N, so registers are
// capped to fit); the kernel body is the same, so are the bits. 0 asks nothing.
TEST(Compile, MinBlocksPerSmIsAnOccupancyRequestOnly) {
  const ReduceDesc d{.op = ReduceOp::kRmsNorm, .in_dtype = DType::kBF16, .out_dtype = DType::kBF16, .strip = 4096};
  const dsl::ReduceConfig plain{.warps = 8, .elems_per_thread = 8, .blocks_per_row = 8, .keep_passes = 4,
                                .cluster_rows = true, .keep_in_shared = true};
  dsl::ReduceConfig asked = plain;
  asked.min_blocks_per_sm = 3;
  auto a = dsl::reduce_phases(d, plain), b = dsl::reduce_phases(d, asked);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  EXPECT_TRUE(b->front().name.ends_with("_k4s_mb3_p8_cluster")) << b->front().name;
  const std::string ta = tile::to_string(a->front()), tb = tile::to_string(b->front());
  EXPECT_EQ(ta.find("min_blocks_per_sm"), std::string::npos);
  EXPECT_NE(tb.find(" min_blocks_per_sm=3 {"), std::string::npos) << tb.substr(0, 300);
  // The same ops after the header line (the name aside).
  EXPECT_EQ(ta.substr(ta.find('\n')), tb.substr(tb.find('\n')));
  auto ka = compile(a->front(), Target::kNvptxSm90a), kb = compile(b->front(), Target::kNvptxSm90a);
  ASSERT_TRUE(ka.ok() && kb.ok());
  EXPECT_EQ(ka->text.find(".minnctapersm"), std::string::npos);
  EXPECT_NE(kb->text.find(".minnctapersm 3"), std::string::npos);
  // Unsplit and on gfx942 too (waves per EU there).
  dsl::ReduceConfig one{.warps = 4, .elems_per_thread = 4, .lanes = 64, .min_blocks_per_sm = 2};
  CompiledKernel g = must_compile(d, one, Target::kAmdgpuGfx942);
  EXPECT_FALSE(g.text.empty());
  one.min_blocks_per_sm = 33;
  auto bad = dsl::reduce(d, one);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("ReduceConfig.min_blocks_per_sm 33 is not in [0, 32]"),
            std::string::npos) << bad.status();
}

TEST(Compile, ErrorsNameTheOp) {
  // A dot whose a and b would not fit the shared-memory staging budget (two f32
  // copies of 64x64 + 64x64 > 48 KiB) is refused by name.
  tile::Builder b("with_dot");
  b.set_num_warps(1);  // (64, 64) tiles: two rows per thread of one warp
  tile::Value x = b.param("x", tile::Type::ptr(DType::kF32));
  tile::Value a = b.reshape(b.load(x, b.arange(4096)), {64, 64});
  tile::Value acc = b.reshape(b.load(x, b.arange(4096)), {64, 64});
  b.dot(a, a, acc);
  absl::StatusOr<tile::Program> p = b.finish();
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CompiledKernel> k = compile(*p, Target::kNvptxSm90a);
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(k.status().message().find("dot #"), std::string::npos) << k.status();

  tile::Builder small("too_small");
  tile::Value y = small.param("y", tile::Type::ptr(DType::kF32));
  small.store(y, small.arange(64), small.cast(small.arange(64), tile::Elem::kF32));
  p = small.finish();
  ASSERT_TRUE(p.ok());
  k = compile(*p, Target::kNvptxSm90a);  // 64 elements over 128 threads
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.status().message().find("arange #0"), std::string::npos) << k.status();

  tile::Program bad = *dsl::reduce({}, {});
  bad.num_warps = 5;
  EXPECT_EQ(compile(bad, Target::kNvptxSm90a).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(Compile, DumpWritesEveryStage) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "fixbits_dump_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  setenv("FIXBITS_DUMP", dir.c_str(), 1);
  CompiledKernel k = must_compile({.strip = 256}, {2, 2});
  unsetenv("FIXBITS_DUMP");
  for (const char* suffix : {".0-tile.txt", ".1-lowered.ll", ".2-optimized.ll", ".3-kernel.ptx",
                             ".timings.txt"}) {
    EXPECT_TRUE(std::filesystem::exists(dir / (k.entry + suffix))) << suffix;
  }
  std::filesystem::remove_all(dir);
}

// codegen::compile from several threads at once (a server building kernels for
// concurrent requests; reduce_bench builds its candidates on every core): each thread,
// walking the programs in its own order, gets exactly the text one thread gets, for
// both targets. LLVM's targets are set up once (call_once); each compile has its own
// LLVMContext.
TEST(Compile, ThreadsCompileTheTextOneThreadDoes) {
  std::vector<tile::Program> programs;
  for (const ReduceOp op : {ReduceOp::kSoftmax, ReduceOp::kRmsNorm, ReduceOp::kSum}) {
    const ReduceDesc d{.op = op, .in_dtype = DType::kBF16, .out_dtype = DType::kBF16, .strip = 1024};
    absl::StatusOr<tile::Program> p = dsl::reduce(d, {.warps = 4, .elems_per_thread = 4});
    ASSERT_TRUE(p.ok()) << p.status();
    programs.push_back(*std::move(p));
  }
  const Target targets[] = {Target::kNvptxSm90a, Target::kAmdgpuGfx942};
  const size_t n = programs.size() * 2;
  std::vector<std::string> want(n);
  for (size_t i = 0; i < n; ++i) {
    absl::StatusOr<CompiledKernel> k = compile(programs[i / 2], targets[i % 2]);
    ASSERT_TRUE(k.ok()) << k.status();
    want[i] = k->text;
  }
  constexpr int kThreads = 3;
  std::vector<std::vector<std::string>> got(kThreads, std::vector<std::string>(n));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (size_t j = 0; j < n; ++j) {
        const size_t i = (j + static_cast<size_t>(t) * 2) % n;  // each thread its own order
        absl::StatusOr<CompiledKernel> k = compile(programs[i / 2], targets[i % 2]);
        got[t][i] = k.ok() ? k->text : "error: " + std::string(k.status().message());
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    for (size_t i = 0; i < n; ++i) {
      EXPECT_EQ(got[t][i], want[i]) << "thread " << t << ", program " << i / 2 << ", target " << i % 2;
    }
  }
}

}  // namespace
}  // namespace fixbits::codegen
