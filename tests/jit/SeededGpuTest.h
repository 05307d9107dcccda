// SeededGpuTest: the fixture of GPU-vs-reference tests in tests/jit: a GpuTest (CUDA
// device 0, or the test skipped with "[SKIP] no CUDA device: <reason>") with a fresh
// random seed per test.
// Invariant: inside a test body device_ is a working device and rng_ was seeded with
// seed_, which a failure message prints (FIXBITS_SEED=<seed> replays the draw).
#pragma once

#include <cstdint>
#include <memory>
#include <random>

#include "tests/jit/RandomInputs.h"
#include "tests/runtime/GpuTest.h"

namespace fixbits::testing {

class SeededGpuTest : public runtime::testing::GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    device_ = shared_device();
    seed_ = fresh_seed();
    rng_.seed(seed_);
  }

  std::shared_ptr<runtime::Device> device_;
  uint64_t seed_ = 0;
  std::mt19937_64 rng_;
};

}  // namespace fixbits::testing
