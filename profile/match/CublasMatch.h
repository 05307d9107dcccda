// CublasMatch: one shape of the cuBLAS bit-match experiment (reference §7.2): the same
// random inputs go through cuBLASLt and through the kernel fixbits generates for the
// descriptor the arch profile gives the shape, and the two outputs are compared byte
// for byte. Used by samples/cublas_match and tests/profile/cublas_match_gpu_test.
//
// Contract of CublasMatcher::match(shape, seed):
//   * desc = lookup(table, shape); no descriptor -> verdict kNoDesc with the lookup's
//     message. The variant and split count cuBLASLt's heuristic really picks for the
//     shape are compared with the map's (map_hit), so a miss of the map and a wrong
//     descriptor are told apart.
//   * Inputs: every element +-(1 + f/64) * 2^e, e in [-3, 3], about 1% -0.0 and 1% a
//     subnormal of the input format, from `seed`; the same bytes go to both sides.
//   * path "kernel": jit::GemmRunner for desc, every output compared; where the code
//     generator has no wgmma kernel, an f16/bf16 wgmma descriptor runs as mma_sync
//     (the sm_90 MMA model and the H200 measurements give them the same bits). When
//     no kernel can be generated (or the compile budget is spent) path "reference":
//     reference::gemm(desc) at up to
//     options.ref_rows x options.ref_cols outputs spread over D (first and last in).
//   * A difference is checked once more: with A's row 0 and B's column 0 zero except
//     a[0][K-1] = b[K-1][0] = 1, cuBLAS must return 1 at D[0][0]; when it does not, the
//     library dropped the tail of the sum (reference §7.2's cuBLAS defect) and the
//     verdict is kTailDropped instead of kDiffer.
//   * The answer lookup: the descriptor of cuBLASLt's own answer for the shape
//     (lookup_answer, no map) is judged the same way into answer_verdict; when it
//     equals the map's descriptor the verdict is copied, not run again. So the two
//     verdicts show what the descriptors give with the map and without its misses.
//   * A shape cuBLASLt's heuristic refuses is kRefused (nothing to match).
//   * Device or library failures are returned as errors naming the shape.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/GemmDesc.h"
#include "dsl/reference/Reference.h"
#include "jit/GemmRunner.h"
#include "profile/CublasTable.h"
#include "runtime/CublasLt.h"
#include "runtime/Device.h"

namespace fixbits::profile {

struct MatchOptions {
  int ref_rows = 4, ref_cols = 4;  // outputs the reference path checks
  double compile_budget_s = 120;   // kernels compiled after this take the reference path
  dsl::GemmConfig config;          // speed knobs of the generated kernels
};

enum class Verdict : uint8_t { kIdentical, kDiffer, kTailDropped, kNoDesc, kRefused };
const char* verdict_name(Verdict v);

struct MatchResult {
  Verdict verdict = Verdict::kNoDesc;
  std::string family;  // "<problem family> <GemmDesc family>", e.g. "f16:f16:nn split_k"
  std::string path;    // "kernel", "reference" or "" (no descriptor)
  bool map_hit = false;  // the map's variant and split count are cuBLASLt's own
  std::string detail;    // first differing element, or why there is no descriptor
  // The same for the descriptor of cuBLASLt's own answer (lookup_answer).
  Verdict answer_verdict = Verdict::kNoDesc;
  std::string answer_detail;
  std::string answer_algo;  // cuBLASLt's answer, runtime::to_string(algo); "" if refused
  int answer_class = -1;    // the table class of that answer (class_of_answer), -1 if none
};

class CublasMatcher {
 public:
  CublasMatcher(std::shared_ptr<runtime::Device> device, std::shared_ptr<runtime::CublasLt> lt,
                const CublasTable* table, MatchOptions options = {});
  absl::StatusOr<MatchResult> match(const runtime::GemmShape& shape, uint64_t seed);

  int compiled() const { return static_cast<int>(runners_.size()); }
  double compile_seconds() const { return compile_s_; }

 private:
  absl::StatusOr<jit::GemmRunner*> runner_for(const dsl::GemmDesc& desc);
  absl::StatusOr<jit::GemmRunner*> compiled_runner(const dsl::GemmDesc& kernel);
  // "" when desc's output equals `theirs` (cuBLAS's bytes of p), else the first
  // differing element; *path says which path compared ("kernel" or "reference").
  absl::StatusOr<std::string> first_difference(const dsl::GemmDesc& desc,
                                               const runtime::GemmShape& s,
                                               const dsl::reference::GemmProblem& p,
                                               const std::vector<uint8_t>& theirs,
                                               std::string* path);

  std::shared_ptr<runtime::Device> device_;
  std::shared_ptr<runtime::CublasLt> lt_;
  const CublasTable* table_;
  MatchOptions options_;
  std::map<std::string, std::unique_ptr<jit::GemmRunner>> runners_;  // by desc text
  std::map<std::string, absl::Status> refused_;                      // by desc text
  double compile_s_ = 0;
};

}  // namespace fixbits::profile
