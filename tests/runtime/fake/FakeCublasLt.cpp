// FakeCublasLt: a CPU stand-in for libcublasLt.so, built as a shared library so
// runtime_cublaslt_fake_test can drive runtime/CublasLt and CublasBlackBox end to end
// without a GPU (its buffers come from a host-memory Driver, so device addresses are
// host pointers).
//
// Contract: the functions of runtime/CublasLtApi.h with cuBLAS's documented
// column-major semantics, D = op(A) op(B) with op N: X(r, c) = x[r + c * ld] and
// op T: X(r, c) = x[c + r * ld], and C == D (beta = 0). Storage f16 or f32; the sum
// is a sequential f32 fma chain over k in order, rounded once to D's type. Anything
// outside that (other compute or data types, mismatched extents) returns
// CUBLAS_STATUS_INVALID_VALUE (7) or NOT_SUPPORTED (15), as the real library would
// refuse it. The heuristic answers one algorithm, id 42, whose config attributes
// read back as 100 + attribute (SPLITK_NUM as 1), 4 bytes each, 2 for INNER_SHAPE_ID
// and CLUSTER_SHAPE_ID, with the size-0 size query the real library answers.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace {

constexpr int kSuccess = 0, kInvalid = 7, kNotSupported = 15;
constexpr int kR32F = 0, kR16F = 2;

struct Desc {
  int transa = 0, transb = 0;
};
struct Layout {
  int type;
  uint64_t rows, cols;
  int64_t ld;
};
struct Pref {
  uint64_t workspace = 0;
};
struct Algo {
  uint64_t data[8];
};
struct Heuristic {
  Algo algo;
  size_t workspace;
  int state;
  float waves;
  int reserved[4];
};

float load(const void* p, int type, size_t i) {
  if (type == kR32F) return static_cast<const float*>(p)[i];
  _Float16 h;
  std::memcpy(&h, static_cast<const char*>(p) + 2 * i, 2);
  return static_cast<float>(h);
}

void store(void* p, int type, size_t i, float v) {
  if (type == kR32F) {
    static_cast<float*>(p)[i] = v;
    return;
  }
  const _Float16 h = static_cast<_Float16>(v);  // round to nearest even
  std::memcpy(static_cast<char*>(p) + 2 * i, &h, 2);
}

}  // namespace

extern "C" {

size_t cublasLtGetVersion() { return 424242; }
int cublasLtCreate(void** handle) {
  *handle = reinterpret_cast<void*>(0x1);
  return kSuccess;
}
int cublasLtDestroy(void*) { return kSuccess; }

int cublasLtMatmulDescCreate(Desc** desc, int compute, int scale) {
  if (compute != 68 || scale != kR32F) return kNotSupported;
  *desc = new Desc;
  return kSuccess;
}
int cublasLtMatmulDescDestroy(Desc* desc) {
  delete desc;
  return kSuccess;
}
int cublasLtMatmulDescSetAttribute(Desc* desc, int attr, const void* buf, size_t bytes) {
  if (bytes != 4) return kInvalid;
  int v;
  std::memcpy(&v, buf, 4);
  if (v != 0 && v != 1) return kInvalid;
  if (attr == 3) {
    desc->transa = v;
  } else if (attr == 4) {
    desc->transb = v;
  } else {
    return kInvalid;
  }
  return kSuccess;
}

int cublasLtMatrixLayoutCreate(Layout** layout, int type, uint64_t rows, uint64_t cols,
                               int64_t ld) {
  if ((type != kR32F && type != kR16F) || ld < static_cast<int64_t>(rows)) return kInvalid;
  *layout = new Layout{type, rows, cols, ld};
  return kSuccess;
}
int cublasLtMatrixLayoutDestroy(Layout* layout) {
  delete layout;
  return kSuccess;
}

int cublasLtMatmulPreferenceCreate(Pref** pref) {
  *pref = new Pref;
  return kSuccess;
}
int cublasLtMatmulPreferenceDestroy(Pref* pref) {
  delete pref;
  return kSuccess;
}
int cublasLtMatmulPreferenceSetAttribute(Pref* pref, int attr, const void* buf, size_t bytes) {
  if (attr != 1 || bytes != 8) return kInvalid;
  std::memcpy(&pref->workspace, buf, 8);
  return kSuccess;
}

int cublasLtMatmulAlgoGetHeuristic(void*, Desc*, Layout*, Layout*, Layout* c, Layout* d, Pref*,
                                   int requested, Heuristic* out, int* returned) {
  if (requested < 1 || c != d) return kInvalid;
  std::memset(out, 0, sizeof(Heuristic));
  out->algo.data[0] = 42;
  out->waves = 1.5f;
  *returned = 1;
  return kSuccess;
}

int cublasLtMatmulAlgoConfigGetAttribute(const Algo* algo, int attr, void* buf, size_t bytes,
                                         size_t* written) {
  if (attr < 0 || attr > 8) return kInvalid;
  const size_t need = attr >= 7 ? 2 : 4;
  if (bytes == 0) {
    if (written) *written = need;
    return kSuccess;
  }
  if (bytes != need) return kInvalid;
  const uint64_t v = attr == 0 ? algo->data[0] : attr == 2 ? 1 : 100 + attr;
  std::memcpy(buf, &v, need);
  if (written) *written = need;
  return kSuccess;
}

int cublasLtMatmul(void*, Desc* desc, const void* alpha, const void* a, Layout* la, const void* b,
                   Layout* lb, const void* beta, const void* c, Layout* lc, void* d, Layout* ld,
                   const Algo* algo, void*, size_t, void*) {
  float al, be;
  std::memcpy(&al, alpha, 4);
  std::memcpy(&be, beta, 4);
  if (al != 1.0f || be != 0.0f || c != d || lc != ld || algo->data[0] != 42) return kInvalid;
  const int64_t m = static_cast<int64_t>(ld->rows), n = static_cast<int64_t>(ld->cols);
  const int64_t k = static_cast<int64_t>(desc->transa == 0 ? la->cols : la->rows);
  if (static_cast<int64_t>(desc->transa == 0 ? la->rows : la->cols) != m) return kInvalid;
  if (static_cast<int64_t>(desc->transb == 0 ? lb->rows : lb->cols) != k) return kInvalid;
  if (static_cast<int64_t>(desc->transb == 0 ? lb->cols : lb->rows) != n) return kInvalid;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int64_t l = 0; l < k; ++l) {
        const float x = load(a, la->type, desc->transa == 0 ? i + l * la->ld : l + i * la->ld);
        const float y = load(b, lb->type, desc->transb == 0 ? l + j * lb->ld : j + l * lb->ld);
        acc = std::fma(x, y, acc);
      }
      store(d, ld->type, i + j * ld->ld, acc);
    }
  }
  return kSuccess;
}

}  // extern "C"
