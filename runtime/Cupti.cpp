// Cupti: see Cupti.h. CUPTI asks for buffers through a request callback and hands
// them back filled through a completion callback, both plain C functions called on
// CUPTI's threads; they append to the one active recorder (a process-wide slot under
// a mutex). A record is parsed right away (the kernel name is copied: CUPTI owns it).
#include "runtime/Cupti.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "runtime/CuptiApi.h"

namespace fixbits::runtime {
namespace {

using namespace cupti_api;  // NOLINT: the table's types

struct Library {
#define FIXBITS_DECLARE(ret, name, params) ret(*name) params = nullptr;
  FIXBITS_CUPTI_FUNCTIONS(FIXBITS_DECLARE)
#undef FIXBITS_DECLARE
  std::string path;

  absl::Status error(const char* call, CUptiResult r) const {
    const char* text = nullptr;
    if (cuptiGetResultString == nullptr || cuptiGetResultString(r, &text) != CUPTI_SUCCESS) {
      text = nullptr;
    }
    return absl::InternalError(absl::StrFormat("CUPTI call %s failed with code %d: %s.", call, r,
                                               text ? text : "CUPTI gave no description"));
  }
};

absl::StatusOr<const Library*> load_library(const std::vector<std::string>& paths) {
  static absl::Mutex mu;
  static Library* loaded = nullptr;
  absl::MutexLock lock(&mu);
  if (loaded != nullptr) return loaded;
  std::string first_error;
  for (const std::string& path : paths) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      if (first_error.empty()) first_error = why ? why : "dlopen gave no reason";
      continue;
    }
    auto* lib = new Library();
    lib->path = path;
#define FIXBITS_RESOLVE(ret, name, params)                                                  \
  lib->name = reinterpret_cast<ret(*) params>(dlsym(handle, #name));                        \
  if (lib->name == nullptr) {                                                               \
    delete lib;                                                                             \
    return absl::UnavailableError(absl::StrFormat(                                          \
        "The CUPTI library %s lacks the function %s; it is older than fixbits supports.",  \
        path, #name));                                                                      \
  }
    FIXBITS_CUPTI_FUNCTIONS(FIXBITS_RESOLVE)
#undef FIXBITS_RESOLVE
    loaded = lib;  // never freed: CUPTI may call back until the process ends
    return loaded;
  }
  return absl::UnavailableError(absl::StrFormat(
      "no CUPTI found (%s): %s", paths.empty() ? std::string("no path given") : paths[0],
      first_error.empty() ? std::string("no library path was given") : first_error));
}

constexpr size_t kBufferBytes = size_t{1} << 20;

template <typename T>
T read_at(const uint8_t* record, size_t offset) {
  T v;
  std::memcpy(&v, record + offset, sizeof(T));
  return v;
}

}  // namespace

struct KernelRecorder::Impl {
  const Library* lib = nullptr;
  bool stopped = false;
};

namespace {

struct Active {
  absl::Mutex mu;
  KernelRecorder::Impl* recorder ABSL_GUARDED_BY(mu) = nullptr;
  LaunchProfile profile ABSL_GUARDED_BY(mu);
  const Library* lib ABSL_GUARDED_BY(mu) = nullptr;
};

Active& active() {
  static Active* a = new Active();
  return *a;
}

void parse_record(const uint8_t* r, LaunchProfile& out) {
  const int32_t kind = read_at<int32_t>(r, 0);
  if (kind == CUPTI_ACTIVITY_KIND_MEMSET) {
    ++out.memsets;
    out.memset_bytes += read_at<uint64_t>(r, kMemsetBytes);
    return;
  }
  if (kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && kind != CUPTI_ACTIVITY_KIND_KERNEL) return;
  KernelRecord k;
  for (int i = 0; i < 3; ++i) {
    k.grid[i] = read_at<int32_t>(r, kKernelGrid + 4 * i);
    k.block[i] = read_at<int32_t>(r, kKernelBlock + 4 * i);
  }
  const char* name = read_at<const char*>(r, kKernelName);
  const bool sane = name != nullptr && k.grid[0] > 0 && k.grid[1] > 0 && k.grid[2] > 0 &&
                    k.block[0] > 0 && k.block[1] > 0 && k.block[2] > 0 &&
                    k.block[0] * k.block[1] * k.block[2] <= 1024;
  if (!sane) {
    ++out.unparsed;
    return;
  }
  k.name = name;
  k.static_shared = read_at<int32_t>(r, kKernelStaticShared);
  k.dynamic_shared = read_at<int32_t>(r, kKernelDynamicShared);
  k.stream_id = read_at<uint32_t>(r, kKernelStreamId);
  const uint64_t start = read_at<uint64_t>(r, kKernelStart), end = read_at<uint64_t>(r, kKernelEnd);
  k.duration_ns = end > start ? end - start : 0;
  out.kernels.push_back(std::move(k));
}

void on_buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;
}

void on_buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  Active& a = active();
  {
    absl::MutexLock lock(&a.mu);
    if (a.recorder != nullptr && a.lib != nullptr && buffer != nullptr) {
      CUpti_Activity* record = nullptr;
      while (a.lib->cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
        parse_record(reinterpret_cast<const uint8_t*>(record), a.profile);
      }
    }
  }
  std::free(buffer);
}

}  // namespace

std::string to_string(const LaunchProfile& p) {
  std::string s;
  for (const KernelRecord& k : p.kernels) {
    s += absl::StrFormat("%s grid=(%d,%d,%d) block=(%d,%d,%d) smem=%d+%d %.1fus\n", k.name,
                         k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1], k.block[2],
                         k.static_shared, k.dynamic_shared, k.duration_ns / 1000.0);
  }
  s += absl::StrFormat("memsets=%d (%d bytes)", p.memsets, p.memset_bytes);
  if (p.unparsed > 0) s += absl::StrFormat(" unparsed_records=%d", p.unparsed);
  return s;
}

KernelRecorder::KernelRecorder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

KernelRecorder::~KernelRecorder() {
  if (impl_ && !impl_->stopped) (void)stop();
}

absl::StatusOr<std::unique_ptr<KernelRecorder>> KernelRecorder::start(
    const std::vector<std::string>& library_paths) {
  std::vector<std::string> paths = library_paths;
  if (paths.empty()) {
    paths = {"libcupti.so.13", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
             "/usr/local/cuda/lib64/libcupti.so.13", "libcupti.so.12",
             "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.12"};
  }
  absl::StatusOr<const Library*> lib = load_library(paths);
  if (!lib.ok()) return lib.status();
  auto impl = std::make_unique<Impl>();
  impl->lib = *lib;
  Active& a = active();
  {
    absl::MutexLock lock(&a.mu);
    if (a.recorder != nullptr) {
      return absl::FailedPreconditionError(
          "KernelRecorder::start was called while another recorder is running; CUPTI's "
          "activity callbacks are process-wide, so stop() the first one.");
    }
    a.recorder = impl.get();
    a.profile = LaunchProfile{};
    a.lib = *lib;
  }
  const Library& l = **lib;
  auto fail = [&](const char* call, CUptiResult r) {
    absl::MutexLock lock(&a.mu);
    a.recorder = nullptr;
    return l.error(call, r);
  };
  static bool registered = false;  // once per process; guarded by the one-recorder rule
  if (!registered) {
    if (CUptiResult r = l.cuptiActivityRegisterCallbacks(on_buffer_requested, on_buffer_completed);
        r != CUPTI_SUCCESS) {
      return fail("cuptiActivityRegisterCallbacks", r);
    }
    registered = true;
  }
  if (CUptiResult r = l.cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
      r != CUPTI_SUCCESS) {
    return fail("cuptiActivityEnable(CONCURRENT_KERNEL)", r);
  }
  if (CUptiResult r = l.cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET); r != CUPTI_SUCCESS) {
    (void)l.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    return fail("cuptiActivityEnable(MEMSET)", r);
  }
  return std::unique_ptr<KernelRecorder>(new KernelRecorder(std::move(impl)));
}

absl::StatusOr<LaunchProfile> KernelRecorder::stop() {
  if (impl_->stopped) {
    return absl::FailedPreconditionError("KernelRecorder::stop was called twice.");
  }
  impl_->stopped = true;
  const Library& l = *impl_->lib;
  // Flush first (the callbacks still see this recorder; forced, so buffers that are
  // not full are delivered too), then disable and detach.
  CUptiResult flushed = l.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (flushed != CUPTI_SUCCESS) flushed = l.cuptiActivityFlushAll(0);  // completed buffers
  (void)l.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  (void)l.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMSET);
  Active& a = active();
  absl::MutexLock lock(&a.mu);
  a.recorder = nullptr;
  if (flushed != CUPTI_SUCCESS) return l.error("cuptiActivityFlushAll", flushed);
  return std::move(a.profile);
}

}  // namespace fixbits::runtime
