// Pipeline: compile() as a script of passes. After each pass the IR is written to
// $FIXBITS_DUMP/<entry>.<n>-<pass>.<ext> when FIXBITS_DUMP names a directory, and
// each pass's wall time goes to <entry>.timings.txt there.
//   validate -> lower (tile -> LLVM IR) -> verify -> optimize (O3, strict FP) -> emit
#include <chrono>
#include <cstdlib>
#include <fstream>

#include "absl/strings/str_format.h"
#include "codegen/Compile.h"
#include "codegen/Emit.h"
#include "codegen/Lowering.h"
#include "codegen/TargetInfo.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

namespace fixbits::codegen {

std::string target_name(Target t) {
  return t == Target::kNvptxSm90a ? "nvptx-sm_90a" : "amdgpu-gfx942";
}

namespace {

// Writes pass outputs and timings under $FIXBITS_DUMP (nothing when unset).
class Dumper {
 public:
  explicit Dumper(std::string entry) : entry_(std::move(entry)) {
    const char* d = std::getenv("FIXBITS_DUMP");
    if (d && *d) dir_ = d;
  }
  bool on() const { return !dir_.empty(); }
  void write(const std::string& pass, const std::string& ext, const std::string& text) {
    if (!on()) return;
    std::ofstream(absl::StrFormat("%s/%s.%d-%s.%s", dir_, entry_, step_++, pass, ext)) << text;
  }
  void time(const std::string& pass, std::chrono::steady_clock::time_point t0) {
    if (!on()) return;
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    timings_ += absl::StrFormat("%-10s %9.3f ms\n", pass, ms);
  }
  ~Dumper() {
    if (on()) std::ofstream(absl::StrFormat("%s/%s.timings.txt", dir_, entry_)) << timings_;
  }

 private:
  std::string entry_, dir_, timings_;
  int step_ = 0;
};

using Clock = std::chrono::steady_clock;

}  // namespace

absl::StatusOr<CompiledKernel> compile(const tile::Program& program, Target target,
                                       const CompileOptions& options) {
  Dumper dump(program.name);
  auto t0 = Clock::now();
  if (absl::Status s = tile::validate(program); !s.ok()) return s;
  dump.time("validate", t0);
  dump.write("tile", "txt", tile::to_string(program));

  std::unique_ptr<TargetInfo> info =
      target == Target::kNvptxSm90a ? make_nvptx_target_info() : make_amdgpu_target_info();
  if (info->warp_size() * program.num_warps > 1024) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "program %s: num_warps %d gives %d threads per block on %s; the limit is 1024.",
        program.name, program.num_warps, info->warp_size() * program.num_warps, target_name(target)));
  }
  absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> tm = make_target_machine(*info);
  if (!tm.ok()) return tm.status();

  llvm::LLVMContext context;
  llvm::Module module(program.name, context);
  configure_module(module, **tm);

  t0 = Clock::now();
  absl::StatusOr<int64_t> dynamic_shared = lower_program(program, *info, module);
  if (!dynamic_shared.ok()) return dynamic_shared.status();
  dump.time("lower", t0);
  if (dump.on()) dump.write("lowered", "ll", module_text(module));

  if (absl::Status s = verify_module(module); !s.ok()) return s;

  t0 = Clock::now();
  optimize_module(module, **tm);
  dump.time("optimize", t0);
  if (dump.on()) dump.write("optimized", "ll", module_text(module));
  if (absl::Status s = verify_module(module); !s.ok()) return s;

  t0 = Clock::now();
  absl::StatusOr<std::string> text =
      emit_assembly(module, **tm, options.strength_reduction_limit);
  if (!text.ok()) return text.status();
  dump.time("emit", t0);
  dump.write("kernel", target == Target::kNvptxSm90a ? "ptx" : "s", *text);

  CompiledKernel k;
  k.target = target;
  k.entry = program.name;
  k.text = *std::move(text);
  k.block_threads = info->warp_size() * program.num_warps;
  k.dynamic_shared_bytes = static_cast<int>(*dynamic_shared);
  k.grid = program.grid;
  k.program_hash = tile::hash(program);
  for (const tile::Param& p : program.params) {
    KernelParam kp;
    kp.name = p.name;
    switch (p.type.elem) {
      case tile::Elem::kPtr: kp.kind = ParamKind::kPointer; kp.pointee = p.type.pointee; kp.size_bytes = 8; break;
      case tile::Elem::kI32: kp.kind = ParamKind::kI32; kp.size_bytes = 4; break;
      case tile::Elem::kI64: kp.kind = ParamKind::kI64; kp.size_bytes = 8; break;
      default: kp.kind = ParamKind::kF32; kp.size_bytes = 4; break;
    }
    k.params.push_back(kp);
  }
  return k;
}

}  // namespace fixbits::codegen
