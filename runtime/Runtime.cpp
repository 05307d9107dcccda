// Runtime: see Runtime.h. One table per platform, (ordinal -> opened result), behind
// one mutex; leaked on purpose so no driver call runs during static destruction.
#include "runtime/Runtime.h"

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "runtime/CudaDriver.h"
#include "runtime/HipDriver.h"

namespace fixbits::runtime {
namespace {

// What opening one ordinal gave: a device, or the error (device null).
struct Opened {
  std::shared_ptr<Device> device;
  absl::Status status;
};

struct Registry {
  absl::Mutex mu;
  absl::flat_hash_map<int, Opened> cuda ABSL_GUARDED_BY(mu);
  absl::flat_hash_map<int, Opened> hip ABSL_GUARDED_BY(mu);
};

Registry& registry() {
  static Registry* r = new Registry();
  return *r;
}

template <typename Open>
absl::StatusOr<std::shared_ptr<Device>> open_cached(absl::flat_hash_map<int, Opened>& table,
                                                    absl::Mutex& mu, int ordinal, Open open)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
  auto it = table.find(ordinal);
  if (it == table.end()) {
    Opened opened;
    absl::StatusOr<std::shared_ptr<Driver>> driver = open(ordinal);
    if (driver.ok()) {
      opened.device = std::make_shared<Device>(*std::move(driver));
    } else {
      opened.status = driver.status();
    }
    it = table.emplace(ordinal, std::move(opened)).first;
  }
  if (it->second.device == nullptr) return it->second.status;
  return it->second.device;
}

}  // namespace

absl::StatusOr<std::shared_ptr<Device>> cuda(int ordinal) {
  Registry& r = registry();
  absl::MutexLock lock(&r.mu);
  return open_cached(r.cuda, r.mu, ordinal, [](int o) { return open_cuda_driver(o); });
}

absl::StatusOr<std::shared_ptr<Device>> hip(int ordinal) {
  Registry& r = registry();
  absl::MutexLock lock(&r.mu);
  return open_cached(r.hip, r.mu, ordinal, [](int o) { return open_hip_driver(o); });
}

}  // namespace fixbits::runtime
