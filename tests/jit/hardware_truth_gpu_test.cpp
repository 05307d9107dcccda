// hardware_truth_gpu_test (label gpu): records the hardware's bits for the corpus of
// our reduction kernels, so the checker's verdicts can be graded against a GPU.
// Every (descriptor, config) of ReduceSweep.h is compiled, loaded and run on CUDA
// device 0 over the three fixed-seed draws; each output is hashed (FNV-1a 64 of its
// bytes) and one line per kernel is written:
//     <descriptor|config key>\t<hash draw 0>\t<hash draw 1>\t<hash draw 2>
// to $FIXBITS_TRUTH_OUT, else $OUT/hardware_truth.tsv, else a temp file (path printed).
// Every output is also compared with the CPU reference (pinned: the descriptor's
// tree; free: its FreeLayout), so the file is known to hold the reference's bits.
// hardware_truth_soundness_test reads the file back (committed as
// tests/verify/data/hardware_truth_reductions.tsv). Without a device: [SKIP] <reason>.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "dsl/reference/Reference.h"
#include "gtest/gtest.h"
#include "jit/ReduceRunner.h"
#include "runtime/Runtime.h"
#include "tests/jit/ReduceSweep.h"

namespace fixbits {
namespace {

using dsl::ReduceConfig;
using dsl::ReduceDesc;
using dsl::TreeOrder;

std::string truth_path() {
  if (const char* p = std::getenv("FIXBITS_TRUTH_OUT"); p != nullptr && *p != '\0') return p;
  if (const char* out = std::getenv("OUT"); out != nullptr && *out != '\0') {
    return std::string(out) + "/hardware_truth.tsv";
  }
  return ::testing::TempDir() + "hardware_truth.tsv";
}

// Runs one kernel over every draw; the hashes of its outputs, or the first error.
absl::StatusOr<std::vector<uint64_t>> run_draws(
    const std::shared_ptr<runtime::Device>& dev, const ReduceDesc& d, const ReduceConfig& c,
    const std::vector<dsl::reference::ReduceProblem>& problems) {
  absl::StatusOr<jit::ReduceRunner> runner = jit::ReduceRunner::create(dev, d, c);
  if (!runner.ok()) return runner.status();
  std::vector<uint64_t> out;
  for (const dsl::reference::ReduceProblem& p : problems) {
    if (absl::Status s = runner->upload(p); !s.ok()) return s;
    if (absl::Status s = runner->launch(); !s.ok()) return s;
    absl::StatusOr<std::vector<uint32_t>> bits = runner->download();
    if (!bits.ok()) return bits.status();
    out.push_back(testing::output_hash(*bits));
  }
  return out;
}

TEST(HardwareTruthGpu, RecordsEveryKernelOfTheReductionSweep) {
  auto dev = runtime::cuda(0);
  if (!dev.ok()) GTEST_SKIP() << "[SKIP] no CUDA device: " << dev.status().message();
  const auto start = std::chrono::steady_clock::now();
  const std::string path = truth_path();
  std::ofstream out(path, std::ios::trunc);
  ASSERT_TRUE(out.good()) << "cannot write the hardware truth file " << path;
  out << "# fixbits hardware truth of the reduction sweep (tests/jit/ReduceSweep.h)\n"
      << "# device: " << (*dev)->info().name << " (" << (*dev)->info().arch << ")\n"
      << "# key\tfnv1a64(draw 0)\tfnv1a64(draw 1)\tfnv1a64(draw 2)\n";

  int kernels = 0, mismatches = 0, failed = 0;
  for (const testing::SweepFamily& f : testing::sweep_families()) {
    for (TreeOrder order : {TreeOrder::kPinned, TreeOrder::kFree}) {
      const ReduceDesc d = testing::sweep_desc(f, order);
      std::vector<dsl::reference::ReduceProblem> problems;
      for (int draw = 0; draw < testing::kDraws; ++draw) problems.push_back(testing::sweep_problem(d, draw));
      // The CPU reference's hashes, computed in parallel while the GPU runs (pinned:
      // once, the layout does not enter; free: per config).
      std::vector<std::future<std::vector<uint64_t>>> refs;
      for (const ReduceConfig& c : testing::sweep_configs()) {
        if (order == TreeOrder::kPinned && !refs.empty()) break;
        refs.push_back(std::async(std::launch::async, [&problems, d, c] {
          std::vector<uint64_t> h;
          for (const auto& p : problems) {
            absl::StatusOr<std::vector<uint32_t>> r = dsl::reference::reduce(d, p, dsl::free_layout(c));
            h.push_back(r.ok() ? testing::output_hash(*r) : 0);  // 0: never an output's hash here
          }
          return h;
        }));
      }
      std::vector<std::vector<uint64_t>> ref_hashes(refs.size());
      size_t ci = 0;
      for (const ReduceConfig& c : testing::sweep_configs()) {
        const size_t ri = order == TreeOrder::kPinned ? 0 : ci++;
        const std::string key = testing::sweep_key(d, c);
        SCOPED_TRACE(key);
        // A kernel that fails is reported and left out of the file; the others are
        // still recorded (the grader then reports the missing key).
        absl::StatusOr<std::vector<uint64_t>> hashes = run_draws(*dev, d, c, problems);
        if (!hashes.ok()) {
          ++failed;
          ADD_FAILURE() << hashes.status();
          continue;
        }
        if (ref_hashes[ri].empty()) ref_hashes[ri] = refs[ri].get();
        std::string line = key;
        for (int draw = 0; draw < testing::kDraws; ++draw) {
          absl::StrAppendFormat(&line, "\t%016x", (*hashes)[draw]);
          if ((*hashes)[draw] != ref_hashes[ri][draw]) {
            ++mismatches;
            ADD_FAILURE() << "draw " << draw << ": the device's bits differ from the CPU reference";
          }
        }
        out << line << "\n";
        ++kernels;
      }
    }
  }
  out.close();
  ASSERT_TRUE(out.good()) << "writing " << path << " failed";
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("[hardware truth] %d kernels x %d draws -> %s in %.1f s (%d reference mismatches, "
              "%d kernels failed)\n",
              kernels, testing::kDraws, path.c_str(), seconds, mismatches, failed);
  EXPECT_EQ(kernels, static_cast<int>(testing::sweep_families().size() * 2 *
                                      testing::sweep_configs().size()));
}

}  // namespace
}  // namespace fixbits
