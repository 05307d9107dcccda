// CublasLt: see CublasLt.h. The function table FIXBITS_CUBLASLT_FUNCTIONS
// (CublasLtApi.h) expands into one pointer per cuBLASLt function, resolved by name:
//   X(cublasStatus_t, cublasLtCreate, (cublasLtHandle_t*))
//   -> cublasStatus_t (*cublasLtCreate)(cublasLtHandle_t*);  = dlsym(h, "cublasLtCreate")
// Per shape, one Plan (matmul descriptor, four layouts, the heuristic's first algo) is
// built on first use and kept until the CublasLt is destroyed. Row-major D = A B is
// issued as the column-major D^T = B^T A^T (see the header).
#include "runtime/CublasLt.h"

#include <dlfcn.h>

#include <string_view>
#include <utility>

#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "runtime/CublasLtApi.h"

namespace fixbits::runtime {
namespace {

using namespace cublaslt_api;  // NOLINT: the table's types

// cudaDataType_t of the storage of `t` (tf32 is stored as f32).
cudaDataType_t cuda_type(DType t) {
  switch (t) {
    case DType::kF32: return CUDA_R_32F;
    case DType::kTF32: return CUDA_R_32F;
    case DType::kF16: return CUDA_R_16F;
    case DType::kBF16: return CUDA_R_16BF;
    case DType::kF8E4M3: return CUDA_R_8F_E4M3;
    case DType::kF8E5M2: return CUDA_R_8F_E5M2;
  }
  return CUDA_R_32F;
}

bool is_fp8(DType t) { return t == DType::kF8E4M3 || t == DType::kF8E5M2; }

const char* fallback_status_name(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "an unknown cublasStatus_t";
}

absl::StatusCode classify(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_INVALID_VALUE: return absl::StatusCode::kInvalidArgument;
    case CUBLAS_STATUS_NOT_SUPPORTED:
    case CUBLAS_STATUS_ARCH_MISMATCH: return absl::StatusCode::kUnimplemented;
    case CUBLAS_STATUS_ALLOC_FAILED: return absl::StatusCode::kResourceExhausted;
    case CUBLAS_STATUS_NOT_INITIALIZED: return absl::StatusCode::kFailedPrecondition;
    default: return absl::StatusCode::kInternal;
  }
}

struct Library {
#define FIXBITS_DECLARE(ret, name, params) ret(*name) params = nullptr;
  FIXBITS_CUBLASLT_FUNCTIONS(FIXBITS_DECLARE)
  FIXBITS_CUBLASLT_OPTIONAL_FUNCTIONS(FIXBITS_DECLARE)
#undef FIXBITS_DECLARE
  std::string path;

  absl::Status error(std::string_view call, cublasStatus_t s, std::string_view context) const {
    const char* name = cublasLtGetStatusName ? cublasLtGetStatusName(s) : nullptr;
    const char* text = cublasLtGetStatusString ? cublasLtGetStatusString(s) : nullptr;
    return absl::Status(
        classify(s),
        absl::StrFormat("cuBLASLt call %s failed with %s (%d)%s%s while %s.", call,
                        name ? name : fallback_status_name(s), s, text ? ": " : "",
                        text ? text : "", context));
  }
};

#define FIXBITS_LT(context, fn, ...)                                          \
  do {                                                                        \
    const cublasStatus_t fixbits_lt_status = lib.fn(__VA_ARGS__);            \
    if (fixbits_lt_status != CUBLAS_STATUS_SUCCESS)                           \
      return lib.error(#fn, fixbits_lt_status, context);                      \
  } while (0)

// Opens the first library of `paths` that loads and resolves the table. One Library
// per path for the process, never dlclose'd (cuBLASLt keeps process-wide state).
absl::StatusOr<std::shared_ptr<const Library>> load_library(const std::vector<std::string>& paths) {
  static absl::Mutex mu;
  static auto* loaded = new std::vector<std::shared_ptr<const Library>>();
  absl::MutexLock lock(&mu);
  std::string first_error;
  for (const std::string& path : paths) {
    for (const auto& lib : *loaded) {
      if (lib->path == path) return lib;
    }
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      if (first_error.empty()) first_error = why ? why : "dlopen gave no reason";
      continue;
    }
    auto lib = std::make_shared<Library>();
    lib->path = path;
#define FIXBITS_RESOLVE(ret, name, params)                                              \
  lib->name = reinterpret_cast<ret(*) params>(dlsym(handle, #name));                    \
  if (lib->name == nullptr) {                                                           \
    return absl::UnavailableError(absl::StrFormat(                                      \
        "The cuBLASLt library %s lacks the function %s; it is older than fixbits "      \
        "supports.", path, #name));                                                     \
  }
    FIXBITS_CUBLASLT_FUNCTIONS(FIXBITS_RESOLVE)
#undef FIXBITS_RESOLVE
#define FIXBITS_RESOLVE_OPTIONAL(ret, name, params) \
  lib->name = reinterpret_cast<ret(*) params>(dlsym(handle, #name));
    FIXBITS_CUBLASLT_OPTIONAL_FUNCTIONS(FIXBITS_RESOLVE_OPTIONAL)
#undef FIXBITS_RESOLVE_OPTIONAL
    loaded->push_back(lib);
    return std::shared_ptr<const Library>(lib);
  }
  return absl::UnavailableError(absl::StrFormat(
      "no cuBLASLt found (%s): %s", paths.empty() ? std::string("no path given") : paths[0],
      first_error.empty() ? std::string("no library path was given") : first_error));
}

// Everything one shape needs, built once.
struct Plan {
  GemmShape shape;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a_layout = nullptr;  // cuBLAS "A" = our B
  cublasLtMatrixLayout_t b_layout = nullptr;  // cuBLAS "B" = our A
  cublasLtMatrixLayout_t d_layout = nullptr;  // C and D
  cublasLtMatmulAlgo_t algo{};
  MatmulReport report;
};

void destroy_plan(const Library& lib, Plan& p) {
  if (p.a_layout) (void)lib.cublasLtMatrixLayoutDestroy(p.a_layout);
  if (p.b_layout) (void)lib.cublasLtMatrixLayoutDestroy(p.b_layout);
  if (p.d_layout) (void)lib.cublasLtMatrixLayoutDestroy(p.d_layout);
  if (p.desc) (void)lib.cublasLtMatmulDescDestroy(p.desc);
  p = Plan{};
}

// Reads each attribute at the size cuBLASLt reports for it (a call with size 0
// answers the size; the documented size when it does not), little-endian into a
// zeroed 64-bit word, so a type widened in a later release still reads right.
absl::StatusOr<AlgoConfig> read_config(const Library& lib, const cublasLtMatmulAlgo_t& algo) {
  auto get = [&](cublasLtMatmulAlgoConfigAttributes_t attr, size_t documented_bytes,
                 const char* what) -> absl::StatusOr<uint64_t> {
    size_t needed = 0;
    const cublasStatus_t probe =
        lib.cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, nullptr, 0, &needed);
    if (probe != CUBLAS_STATUS_SUCCESS || needed == 0 || needed > sizeof(uint64_t)) {
      needed = documented_bytes;
    }
    uint64_t value = 0;
    size_t written = 0;
    const cublasStatus_t s =
        lib.cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &value, needed, &written);
    if (s != CUBLAS_STATUS_SUCCESS) {
      return lib.error("cublasLtMatmulAlgoConfigGetAttribute", s,
                       absl::StrFormat("reading the chosen algorithm's %s", what));
    }
    return value;
  };
  // An attribute the library will not report is listed, not fatal: the algorithm
  // still runs, and the report says which fields it could not read.
  AlgoConfig c;
  struct Field {
    cublasLtMatmulAlgoConfigAttributes_t attr;
    size_t bytes;
    const char* what;
    uint64_t* out;
  };
  uint64_t v[9] = {};
  const Field fields[] = {
      {CUBLASLT_ALGO_CONFIG_ID, 4, "ID", &v[0]},
      {CUBLASLT_ALGO_CONFIG_TILE_ID, 4, "TILE_ID", &v[1]},
      {CUBLASLT_ALGO_CONFIG_SPLITK_NUM, 4, "SPLITK_NUM", &v[2]},
      {CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, 4, "REDUCTION_SCHEME", &v[3]},
      {CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, 4, "CTA_SWIZZLING", &v[4]},
      {CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, 4, "CUSTOM_OPTION", &v[5]},
      {CUBLASLT_ALGO_CONFIG_STAGES_ID, 4, "STAGES_ID", &v[6]},
      {CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, 2, "INNER_SHAPE_ID", &v[7]},
      {CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, 2, "CLUSTER_SHAPE_ID", &v[8]},
  };
  for (const Field& f : fields) {
    absl::StatusOr<uint64_t> x = get(f.attr, f.bytes, f.what);
    if (x.ok()) {
      *f.out = *x;
    } else {
      c.unreadable += c.unreadable.empty() ? f.what : std::string(",") + f.what;
    }
  }
  c.id = static_cast<int32_t>(v[0]);
  c.tile_id = static_cast<uint32_t>(v[1]);
  c.splitk_num = static_cast<uint32_t>(v[2]);
  c.reduction_scheme = static_cast<uint32_t>(v[3]);
  c.cta_swizzling = static_cast<uint32_t>(v[4]);
  c.custom_option = static_cast<uint32_t>(v[5]);
  c.stages_id = static_cast<uint32_t>(v[6]);
  c.inner_shape_id = static_cast<uint16_t>(v[7]);
  c.cluster_shape_id = static_cast<uint16_t>(v[8]);
  return c;
}

}  // namespace

std::string to_string(const GemmShape& s) {
  return absl::StrFormat("%dx%dx%d %s*%s->%s %c%c", s.m, s.n, s.k, dtype_name(s.a_dtype),
                         dtype_name(s.b_dtype), dtype_name(s.out_dtype),
                         s.a_row_major ? 'N' : 'T', s.b_row_major ? 'N' : 'T');
}

size_t cublaslt_element_bytes(DType t) {
  switch (t) {
    case DType::kF32:
    case DType::kTF32: return 4;
    case DType::kF16:
    case DType::kBF16: return 2;
    case DType::kF8E4M3:
    case DType::kF8E5M2: return 1;
  }
  return 4;
}

absl::Status validate_for_cublaslt(const GemmShape& s) {
  constexpr int64_t kMaxDim = int64_t{1} << 31;
  if (s.m < 1 || s.m >= kMaxDim) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "GemmShape.m is %d; cuBLASLt needs a dimension in [1, 2^31).", s.m));
  }
  if (s.n < 1 || s.n >= kMaxDim) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "GemmShape.n is %d; cuBLASLt needs a dimension in [1, 2^31).", s.n));
  }
  if (s.k < 1 || s.k >= kMaxDim) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "GemmShape.k is %d; cuBLASLt needs a dimension in [1, 2^31).", s.k));
  }
  const DType a = s.a_dtype, b = s.b_dtype, o = s.out_dtype;
  if (is_fp8(a) || is_fp8(b)) {
    if (!is_fp8(a) || !is_fp8(b)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "GemmShape has a_dtype %s and b_dtype %s; cuBLASLt takes fp8 only with fp8.",
          dtype_name(a), dtype_name(b)));
    }
    if (a == DType::kF8E5M2 && b == DType::kF8E5M2) {
      return absl::InvalidArgumentError(
          "GemmShape has a_dtype and b_dtype both f8e5m2; cuBLASLt has no e5m2 x e5m2 GEMM.");
    }
    if (o != DType::kF16 && o != DType::kBF16 && o != DType::kF32) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "GemmShape.out_dtype is %s; fixbits runs fp8 GEMMs with out f16, bf16 or f32 "
          "(fp8 outputs need scales and amax).", dtype_name(o)));
    }
    if (!s.a_row_major || s.b_row_major) {
      return absl::InvalidArgumentError(
          "An fp8 GemmShape must have A row-major and B column-major "
          "(a_row_major = true, b_row_major = false): cuBLASLt runs fp8 only in the TN layout.");
    }
    return absl::OkStatus();
  }
  if (a != b) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "GemmShape has a_dtype %s and b_dtype %s; cuBLASLt needs equal input types outside fp8.",
        dtype_name(a), dtype_name(b)));
  }
  if (a == DType::kF16 || a == DType::kBF16) {
    if (o != a && o != DType::kF32) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "GemmShape.out_dtype is %s; with %s inputs cuBLASLt writes %s or f32.", dtype_name(o),
          dtype_name(a), dtype_name(a)));
    }
    return absl::OkStatus();
  }
  if (o != DType::kF32) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "GemmShape.out_dtype is %s; with %s inputs cuBLASLt writes f32.", dtype_name(o),
        dtype_name(a)));
  }
  return absl::OkStatus();
}

CublasCall cublas_call_for(const GemmShape& s) {
  CublasCall c;
  c.m = s.n;
  c.n = s.m;
  c.k = s.k;
  const uint64_t m = static_cast<uint64_t>(s.m), n = static_cast<uint64_t>(s.n),
                 k = static_cast<uint64_t>(s.k);
  // cuBLAS "A" (m' x k after op) is our B. Row-major B (k x n, ld n) read column-major
  // is n x k with ld n: op N. Column-major B (ld k) is k x n: op T.
  if (s.b_row_major) {
    c.op_a = CUBLAS_OP_N;
    c.a_rows = n, c.a_cols = k, c.a_ld = s.n;
  } else {
    c.op_a = CUBLAS_OP_T;
    c.a_rows = k, c.a_cols = n, c.a_ld = s.k;
  }
  // cuBLAS "B" (k x n' after op) is our A. Row-major A (m x k, ld k) read column-major
  // is k x m with ld k: op N. Column-major A (ld m) is m x k: op T.
  if (s.a_row_major) {
    c.op_b = CUBLAS_OP_N;
    c.b_rows = k, c.b_cols = m, c.b_ld = s.k;
  } else {
    c.op_b = CUBLAS_OP_T;
    c.b_rows = m, c.b_cols = k, c.b_ld = s.m;
  }
  // D^T: column-major n x m with ld n, the bytes of row-major D.
  c.d_rows = n, c.d_cols = m, c.d_ld = s.n;
  return c;
}

std::string reduction_scheme_name(uint32_t scheme) {
  switch (scheme) {
    case CUBLASLT_REDUCTION_SCHEME_NONE: return "none";
    case CUBLASLT_REDUCTION_SCHEME_INPLACE: return "inplace";
    case CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE: return "compute_type";
    case CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE: return "output_type";
  }
  return absl::StrFormat("%u", scheme);
}

std::string to_string(const AlgoConfig& a) {
  return absl::StrFormat(
      "algo{id=%d tile=%u splitk=%u reduction=%s swizzle=%u custom=%u stages=%u inner=%u "
      "cluster=%u%s%s}",
      a.id, a.tile_id, a.splitk_num, reduction_scheme_name(a.reduction_scheme), a.cta_swizzling,
      a.custom_option, a.stages_id, a.inner_shape_id, a.cluster_shape_id,
      a.unreadable.empty() ? "" : " unreadable=", a.unreadable);
}

struct CublasLt::Impl {
  std::shared_ptr<const Library> lib;
  std::shared_ptr<Device> device;
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulPreference_t preference = nullptr;
  Buffer workspace;
  size_t workspace_bytes = 0;
  absl::Mutex mu;
  std::vector<Plan> plans ABSL_GUARDED_BY(mu);

  ~Impl() {
    for (Plan& p : plans) destroy_plan(*lib, p);
    if (preference) (void)lib->cublasLtMatmulPreferenceDestroy(preference);
    if (handle) (void)lib->cublasLtDestroy(handle);
  }

  absl::StatusOr<Plan*> plan_for(const GemmShape& s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    for (Plan& p : plans) {
      if (p.shape == s) return &p;
    }
    Plan p;
    if (absl::Status st = build_plan(s, p); !st.ok()) return st;
    plans.push_back(p);
    return &plans.back();
  }

  // Builds the descriptor, layouts and the heuristic's first algorithm for `s` into
  // `p`; on failure destroys what was made (p is left empty).
  absl::Status build_plan(const GemmShape& s, Plan& p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (absl::Status v = validate_for_cublaslt(s); !v.ok()) return v;
    const Library& lib = *this->lib;
    const std::string context = absl::StrFormat("planning the GEMM %s", to_string(s));
    p = Plan{};
    p.shape = s;
    // Build into `p`; on any failure destroy what was made.
    absl::Status st = [&]() -> absl::Status {
      const bool tf32 = s.a_dtype == DType::kTF32;
      FIXBITS_LT(context, cublasLtMatmulDescCreate, &p.desc,
                 tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUDA_R_32F);
      const CublasCall c = cublas_call_for(s);
      const cublasOperation_t op_a = c.op_a, op_b = c.op_b;
      FIXBITS_LT(context, cublasLtMatmulDescSetAttribute, p.desc, CUBLASLT_MATMUL_DESC_TRANSA,
                 &op_a, sizeof(op_a));
      FIXBITS_LT(context, cublasLtMatmulDescSetAttribute, p.desc, CUBLASLT_MATMUL_DESC_TRANSB,
                 &op_b, sizeof(op_b));
      FIXBITS_LT(context, cublasLtMatrixLayoutCreate, &p.a_layout, cuda_type(s.b_dtype),
                 c.a_rows, c.a_cols, c.a_ld);
      FIXBITS_LT(context, cublasLtMatrixLayoutCreate, &p.b_layout, cuda_type(s.a_dtype),
                 c.b_rows, c.b_cols, c.b_ld);
      FIXBITS_LT(context, cublasLtMatrixLayoutCreate, &p.d_layout, cuda_type(s.out_dtype),
                 c.d_rows, c.d_cols, c.d_ld);
      cublasLtMatmulHeuristicResult_t result{};
      int returned = 0;
      FIXBITS_LT(context, cublasLtMatmulAlgoGetHeuristic, handle, p.desc, p.a_layout, p.b_layout,
                 p.d_layout, p.d_layout, preference, 1, &result, &returned);
      if (returned < 1) {
        return absl::UnimplementedError(absl::StrFormat(
            "cuBLASLt's heuristic returned no algorithm for the GEMM %s with a %d-byte "
            "workspace.", to_string(s), workspace_bytes));
      }
      if (result.state != CUBLAS_STATUS_SUCCESS) {
        return lib.error("cublasLtMatmulAlgoGetHeuristic (result state)", result.state, context);
      }
      p.algo = result.algo;
      absl::StatusOr<AlgoConfig> config = read_config(lib, p.algo);
      if (!config.ok()) return config.status();
      p.report.algo = *config;
      p.report.workspace_bytes = result.workspaceSize;
      p.report.waves_count = result.wavesCount;
      p.report.heuristic_answers = returned;
      return absl::OkStatus();
    }();
    if (!st.ok()) destroy_plan(lib, p);
    return st;
  }
};

CublasLt::CublasLt(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CublasLt::~CublasLt() = default;

absl::StatusOr<std::shared_ptr<CublasLt>> CublasLt::open(std::shared_ptr<Device> device,
                                                         const CublasLtOptions& options) {
  if (device == nullptr) {
    return absl::InvalidArgumentError("CublasLt::open was given a null device.");
  }
  if (device->info().platform != Platform::kCuda) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "CublasLt::open was given a %s device; cuBLASLt runs on CUDA devices only.",
        platform_name(device->info().platform)));
  }
  if (options.workspace_bytes == 0) {
    return absl::InvalidArgumentError(
        "CublasLtOptions.workspace_bytes is 0; give cuBLASLt a workspace (32 MiB on Hopper).");
  }
  std::vector<std::string> paths = options.library_paths;
  if (paths.empty()) {
    paths = {"libcublasLt.so.13", "/usr/local/cuda/lib64/libcublasLt.so.13",
             "libcublasLt.so.12", "/usr/local/cuda/lib64/libcublasLt.so.12"};
  }
  absl::StatusOr<std::shared_ptr<const Library>> lib = load_library(paths);
  if (!lib.ok()) return lib.status();
  auto impl = std::make_unique<Impl>();
  impl->lib = *lib;
  impl->device = std::move(device);
  impl->workspace_bytes = options.workspace_bytes;
  absl::StatusOr<Buffer> ws = impl->device->alloc(options.workspace_bytes);
  if (!ws.ok()) return ws.status();
  impl->workspace = *std::move(ws);
  const Library& l = **lib;
  // cuBLASLt's runtime uses the device's primary context, which runtime::cuda() holds
  // and makes current on this thread with every driver call (the alloc above).
  {
    const cublasStatus_t s = l.cublasLtCreate(&impl->handle);
    if (s != CUBLAS_STATUS_SUCCESS) return l.error("cublasLtCreate", s, "opening cuBLASLt");
  }
  {
    const cublasStatus_t s = l.cublasLtMatmulPreferenceCreate(&impl->preference);
    if (s != CUBLAS_STATUS_SUCCESS) {
      return l.error("cublasLtMatmulPreferenceCreate", s, "opening cuBLASLt");
    }
  }
  const uint64_t ws_bytes = options.workspace_bytes;
  {
    const cublasStatus_t s = l.cublasLtMatmulPreferenceSetAttribute(
        impl->preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof(ws_bytes));
    if (s != CUBLAS_STATUS_SUCCESS) {
      return l.error("cublasLtMatmulPreferenceSetAttribute", s,
                     "setting the workspace limit of the heuristic");
    }
  }
  return std::shared_ptr<CublasLt>(new CublasLt(std::move(impl)));
}

size_t CublasLt::version() const { return impl_->lib->cublasLtGetVersion(); }
const std::string& CublasLt::library_path() const { return impl_->lib->path; }
const std::shared_ptr<Device>& CublasLt::device() const { return impl_->device; }

absl::StatusOr<MatmulReport> CublasLt::heuristic(const GemmShape& shape) {
  absl::MutexLock lock(&impl_->mu);
  absl::StatusOr<Plan*> plan = impl_->plan_for(shape);
  if (!plan.ok()) return plan.status();
  return (*plan)->report;
}

absl::StatusOr<MatmulReport> CublasLt::heuristic_uncached(const GemmShape& shape) {
  absl::MutexLock lock(&impl_->mu);
  for (const Plan& p : impl_->plans) {
    if (p.shape == shape) return p.report;
  }
  Plan p;
  if (absl::Status st = impl_->build_plan(shape, p); !st.ok()) return st;
  MatmulReport report = p.report;
  destroy_plan(*impl_->lib, p);
  return report;
}

absl::StatusOr<MatmulReport> CublasLt::matmul(const GemmShape& shape, const Buffer& a,
                                              const Buffer& b, Buffer& d, Stream* stream) {
  if (absl::Status v = validate_for_cublaslt(shape); !v.ok()) return v;
  struct Need {
    const char* name;
    const Buffer* buf;
    uint64_t elems;
    DType t;
  };
  const Need needs[] = {
      {"a", &a, static_cast<uint64_t>(shape.m) * static_cast<uint64_t>(shape.k), shape.a_dtype},
      {"b", &b, static_cast<uint64_t>(shape.k) * static_cast<uint64_t>(shape.n), shape.b_dtype},
      {"d", &d, static_cast<uint64_t>(shape.m) * static_cast<uint64_t>(shape.n), shape.out_dtype},
  };
  for (const Need& n : needs) {
    const uint64_t bytes = n.elems * cublaslt_element_bytes(n.t);
    if (n.buf->address() == 0 || n.buf->size() < bytes) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "CublasLt::matmul: buffer %s holds %d bytes; the GEMM %s needs %d.", n.name,
          n.buf->size(), to_string(shape), bytes));
    }
  }
  return matmul_at(shape, a.address(), b.address(), d.address(), stream);
}

absl::StatusOr<MatmulReport> CublasLt::matmul_at(const GemmShape& shape, uint64_t a, uint64_t b,
                                                 uint64_t d, Stream* stream) {
  absl::MutexLock lock(&impl_->mu);
  absl::StatusOr<Plan*> plan_or = impl_->plan_for(shape);
  if (!plan_or.ok()) return plan_or.status();
  const Plan& p = **plan_or;
  const Library& lib = *impl_->lib;
  const float alpha = 1.0f, beta = 0.0f;
  const std::string context = absl::StrFormat("running the GEMM %s", to_string(shape));
  // cuBLAS "A" is our B, cuBLAS "B" is our A; C = D (beta = 0, never read).
  FIXBITS_LT(context, cublasLtMatmul, impl_->handle, p.desc, &alpha,
             reinterpret_cast<const void*>(b), p.a_layout, reinterpret_cast<const void*>(a),
             p.b_layout, &beta, reinterpret_cast<const void*>(d), p.d_layout,
             reinterpret_cast<void*>(d), p.d_layout, &p.algo,
             reinterpret_cast<void*>(impl_->workspace.address()), impl_->workspace_bytes,
             static_cast<cudaStream_t>(stream ? stream->handle() : nullptr));
  return p.report;
}

}  // namespace fixbits::runtime
