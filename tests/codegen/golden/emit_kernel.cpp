// emit_kernel: prints the tile program, or the PTX/AMDGCN, that fixbits generates
// for one ReduceDesc or GemmDesc and knob setting — the tool the golden FileCheck
// tests run.
// Usage: emit_kernel '<reduce desc text>' [--warps N] [--ept N] [--lanes 32|64]
//                    [--target nvptx|amdgpu]
//                    [--emit asm|tile] [--blocks-per-row P] [--keep N]
//                    [--cluster-rows 0|1] [--alternate-row-order 0|1] [--keep-in-shared 0|1]
//                    [--whole-strips 0|1]
//                    [--min-blocks N] [--divide-by-reciprocal 0|1] [--stage-exp 0|1]
//                    [--rows-per-block R]
//        emit_kernel '<gemm desc text>' [--warps N] [--rows N] [--block-n N]
//                    [--warp-m-tiles N] [--warp-n-tiles N] [--emit asm|tile]
//        emit_kernel --program dot:MxKxN:f32|f16|bf16 [--warps N] [--target nvptx|amdgpu]
//                    [--emit asm|tile] [--k-loop 0|1]
// --program prints a hand-built tile program (tests/codegen/DotProgram.h: masked
// loads of (M,K) a, (K,N) b and acc, dot, masked store; --k-loop 1: a loop of such
// dots over K tiles of K, chaining the carried acc).
// With --blocks-per-row P > 1 every kernel of dsl::reduce_phases is printed, in
// launch order; a split_k GEMM prints its parts kernel, then its merge kernel.
// Exit status 1 with the Status on stderr for bad input.
#include <cstdio>
#include <cstdlib>
#include <string>

#include <vector>

#include "codegen/Compile.h"
#include "dsl/GemmDesc.h"
#include "dsl/ReduceDesc.h"
#include "dsl/tile/GemmProgram.h"
#include "dsl/tile/ReduceProgram.h"
#include "tests/codegen/DotProgram.h"

namespace {

// Prints each program as tile text or as the target's assembly; 1 on error.
int print_programs(const std::vector<fixbits::tile::Program>& programs,
                   fixbits::codegen::Target target, bool tile_only) {
  using namespace fixbits;
  for (const tile::Program& p : programs) {
    if (tile_only) {
      std::printf("%s", tile::to_string(p).c_str());
      continue;
    }
    absl::StatusOr<codegen::CompiledKernel> k = codegen::compile(p, target);
    if (!k.ok()) {
      std::fprintf(stderr, "%s\n", std::string(k.status().message()).c_str());
      return 1;
    }
    std::printf("%s", k->text.c_str());
  }
  return 0;
}

// The GEMM form: knobs --warps, --rows, --block-n, --warp-m-tiles, --warp-n-tiles;
// NVIDIA only.
int emit_gemm(int argc, char** argv) {
  using namespace fixbits;
  absl::StatusOr<dsl::GemmDesc> desc = dsl::parse_gemm_desc(argv[1]);
  if (!desc.ok()) {
    std::fprintf(stderr, "%s\n", std::string(desc.status().message()).c_str());
    return 1;
  }
  dsl::GemmConfig cfg;
  bool tile_only = false;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--warps") cfg.warps = std::atoi(value.c_str());
    else if (flag == "--rows") cfg.rows_per_thread = std::atoi(value.c_str());
    else if (flag == "--block-n") cfg.block_n = std::atoi(value.c_str());
    else if (flag == "--warp-m-tiles") cfg.warp_m_tiles = std::atoi(value.c_str());
    else if (flag == "--warp-n-tiles") cfg.warp_n_tiles = std::atoi(value.c_str());
    else if (flag == "--emit") tile_only = value == "tile";
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  absl::StatusOr<dsl::GemmPrograms> p = dsl::gemm(*desc, cfg);
  if (!p.ok()) {
    std::fprintf(stderr, "%s\n", std::string(p.status().message()).c_str());
    return 1;
  }
  std::vector<tile::Program> programs = {p->main};
  if (p->merge) programs.push_back(*p->merge);
  return print_programs(programs, codegen::Target::kNvptxSm90a, tile_only);
}

// The --program form: dot:MxKxN:dtype with knobs --warps, --target, --emit, --k-loop.
int emit_program(int argc, char** argv) {
  using namespace fixbits;
  if (argc < 3) {
    std::fprintf(stderr, "--program needs dot:MxKxN:f32|f16|bf16\n");
    return 2;
  }
  const std::string spec = argv[2];
  long long m = 0, k = 0, n = 0;
  char dtype[8] = {0};
  if (std::sscanf(spec.c_str(), "dot:%lldx%lldx%lld:%7s", &m, &k, &n, dtype) != 4) {
    std::fprintf(stderr, "--program %s is not dot:MxKxN:f32|f16|bf16\n", spec.c_str());
    return 2;
  }
  const std::string d = dtype;
  if (d != "f32" && d != "f16" && d != "bf16") {
    std::fprintf(stderr, "--program %s: the input type must be f32, f16 or bf16\n", spec.c_str());
    return 2;
  }
  const tile::Elem e = d == "f16" ? tile::Elem::kF16 : d == "bf16" ? tile::Elem::kBF16 : tile::Elem::kF32;
  int warps = 4;
  codegen::Target target = codegen::Target::kNvptxSm90a;
  bool tile_only = false, k_loop = false;
  for (int i = 3; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--warps") warps = std::atoi(value.c_str());
    else if (flag == "--k-loop") k_loop = value == "1";
    else if (flag == "--target") target = value == "amdgpu" ? codegen::Target::kAmdgpuGfx942 : codegen::Target::kNvptxSm90a;
    else if (flag == "--emit") tile_only = value == "tile";
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  testing::DotShape s{m, k, n, m, k, n};
  absl::StatusOr<tile::Program> p = testing::dot_program(s, e, warps, k_loop);
  if (!p.ok()) {
    std::fprintf(stderr, "%s\n", std::string(p.status().message()).c_str());
    return 1;
  }
  return print_programs({*p}, target, tile_only);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace fixbits;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s '<reduce desc>' [--warps N] [--ept N] [--target nvptx|amdgpu] "
                         "[--emit asm|tile]\n", argv[0]);
    return 2;
  }
  if (std::string(argv[1]) == "--program") return emit_program(argc, argv);
  if (std::string(argv[1]).rfind("gemm{", 0) == 0) return emit_gemm(argc, argv);
  absl::StatusOr<dsl::ReduceDesc> desc = dsl::parse_reduce_desc(argv[1]);
  if (!desc.ok()) {
    std::fprintf(stderr, "%s\n", std::string(desc.status().message()).c_str());
    return 1;
  }
  dsl::ReduceConfig cfg;
  codegen::Target target = codegen::Target::kNvptxSm90a;
  bool tile_only = false;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--warps") cfg.warps = std::atoi(value.c_str());
    else if (flag == "--ept") cfg.elems_per_thread = std::atoi(value.c_str());
    else if (flag == "--lanes") cfg.lanes = std::atoi(value.c_str());
    else if (flag == "--target") target = value == "amdgpu" ? codegen::Target::kAmdgpuGfx942 : codegen::Target::kNvptxSm90a;
    else if (flag == "--emit") tile_only = value == "tile";
    else if (flag == "--blocks-per-row") cfg.blocks_per_row = std::atoi(value.c_str());
    else if (flag == "--keep") cfg.keep_passes = std::atoi(value.c_str());
    else if (flag == "--cluster-rows") cfg.cluster_rows = value == "1";
    else if (flag == "--keep-in-shared") cfg.keep_in_shared = value == "1";
    else if (flag == "--whole-strips") cfg.whole_strips = value == "1";
    else if (flag == "--min-blocks") cfg.min_blocks_per_sm = std::atoi(value.c_str());
    else if (flag == "--alternate-row-order") cfg.alternate_row_order = value == "1";
    else if (flag == "--divide-by-reciprocal") cfg.divide_by_reciprocal = value == "1";
    else if (flag == "--stage-exp") cfg.stage_exp = value == "1";
    else if (flag == "--rows-per-block") cfg.rows_per_block = std::atoi(value.c_str());
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  absl::StatusOr<std::vector<tile::Program>> phases = dsl::reduce_phases(*desc, cfg);
  if (!phases.ok()) {
    std::fprintf(stderr, "%s\n", std::string(phases.status().message()).c_str());
    return 1;
  }
  return print_programs(*phases, target, tile_only);
}
