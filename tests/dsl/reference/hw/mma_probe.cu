// mma_probe: measurement tool, not built by CMake (CMake compiles *.cpp only).
// Runs f16 and bf16 wmma 16x16x16 (mma.sync m16n8k16) and e4m3 mma.sync m16n8k32
// on seeded random inputs and writes <dir>/{f16,bf16,e4m3}.bin: int32 tile count,
// then A bits, B bits (n-major), C f32, D f32 per tile. The CPU side reads them and
// compares every output with MmaModel (how MmaModel.cpp's "Measured" note and
// tests/dsl/reference/mma_model_measured_test.cpp were made).
//   nvcc -O2 -gencode=arch=compute_90,code=sm_90 mma_probe.cu -o probe && ./probe DIR
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>
using namespace nvcuda;

static uint64_t s = 0x9e3779b97f4a7c15ull;
static uint32_t rnd() { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return (uint32_t)(s >> 11); }
static float mk(int emin, int emax, int mbits, float pzero) {
  if ((rnd() % 1000) < pzero * 1000) return 0.0f;
  int e = emin + (int)(rnd() % (uint32_t)(emax - emin + 1));
  float m = 1.0f + (float)(rnd() & ((1u << mbits) - 1)) / (float)(1u << mbits);
  float v = ldexpf(m, e);
  return (rnd() & 1) ? -v : v;
}

template <typename T>
__global__ void k16(const T* A, const T* B, const float* C, float* D) {
  int t = blockIdx.x;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::load_matrix_sync(fa, A + t * 256, 16);
  wmma::load_matrix_sync(fb, B + t * 256, 16);
  wmma::load_matrix_sync(fc, C + t * 256, 16, wmma::mem_row_major);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(D + t * 256, fc, 16, wmma::mem_row_major);
}

__global__ void k_e4m3(const uint8_t* A, const uint8_t* B, const float* C, float* D) {
  int t = blockIdx.x, lane = threadIdx.x, g = lane >> 2, q = lane & 3;
  const uint8_t* a = A + t * 512; const uint8_t* b = B + t * 256;
  const float* c = C + t * 128; float* d = D + t * 128;
  auto pa = [&](int row, int col) { uint32_t v = 0; for (int i = 0; i < 4; ++i) v |= (uint32_t)a[row * 32 + col + i] << (8 * i); return v; };
  auto pb = [&](int k, int n) { uint32_t v = 0; for (int i = 0; i < 4; ++i) v |= (uint32_t)b[n * 32 + k + i] << (8 * i); return v; };
  uint32_t a0 = pa(g, q * 4), a1 = pa(g + 8, q * 4), a2 = pa(g, q * 4 + 16), a3 = pa(g + 8, q * 4 + 16);
  uint32_t b0 = pb(q * 4, g), b1 = pb(q * 4 + 16, g);
  float c0 = c[g * 8 + q * 2], c1 = c[g * 8 + q * 2 + 1], c2 = c[(g + 8) * 8 + q * 2], c3 = c[(g + 8) * 8 + q * 2 + 1];
  float d0, d1, d2, d3;
  asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
               : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c0), "f"(c1), "f"(c2), "f"(c3));
  d[g * 8 + q * 2] = d0; d[g * 8 + q * 2 + 1] = d1; d[(g + 8) * 8 + q * 2] = d2; d[(g + 8) * 8 + q * 2 + 1] = d3;
}

template <typename T, typename F>
static void run16(const char* path, int tiles, F conv, int emin, int emax, int mb, int cemin, int cemax) {
  std::vector<T> A(tiles * 256), B(tiles * 256);
  std::vector<float> C(tiles * 256), D(tiles * 256);
  for (int t = 0; t < tiles; ++t) {
    int mode = t % 4;  // 0: narrow range, 1: wide range, 2: wide + big c, 3: integers
    for (int i = 0; i < 256; ++i) {
      float av, bv, cv;
      if (mode == 3) { av = (float)((int)(rnd() % 9) - 4); bv = (float)((int)(rnd() % 9) - 4); cv = (float)((int)(rnd() % 17) - 8); }
      else {
        int lo = mode == 0 ? -3 : emin, hi = mode == 0 ? 3 : emax;
        av = mk(lo, hi, mb, 0.1f); bv = mk(lo, hi, mb, 0.1f);
        cv = (rnd() % 4 == 0) ? 0.0f : mk(mode == 2 ? cemax - 4 : cemin, mode == 2 ? cemax : cemin + 8, 23, 0.0f);
      }
      A[t * 256 + i] = conv(av); B[t * 256 + i] = conv(bv); C[t * 256 + i] = cv;
    }
  }
  T *dA, *dB; float *dC, *dD;
  cudaMalloc(&dA, A.size() * sizeof(T)); cudaMalloc(&dB, B.size() * sizeof(T));
  cudaMalloc(&dC, C.size() * 4); cudaMalloc(&dD, D.size() * 4);
  cudaMemcpy(dA, A.data(), A.size() * sizeof(T), cudaMemcpyHostToDevice);
  cudaMemcpy(dB, B.data(), B.size() * sizeof(T), cudaMemcpyHostToDevice);
  cudaMemcpy(dC, C.data(), C.size() * 4, cudaMemcpyHostToDevice);
  k16<T><<<tiles, 32>>>(dA, dB, dC, dD);
  cudaError_t err = cudaMemcpy(D.data(), dD, D.size() * 4, cudaMemcpyDeviceToHost);
  printf("%s: %s\n", path, cudaGetErrorString(err));
  FILE* f = fopen(path, "wb");
  fwrite(&tiles, 4, 1, f); fwrite(A.data(), sizeof(T), A.size(), f); fwrite(B.data(), sizeof(T), B.size(), f);
  fwrite(C.data(), 4, C.size(), f); fwrite(D.data(), 4, D.size(), f); fclose(f);
}

int main(int argc, char** argv) {
  char p[512];
  int tiles = 4000;
  snprintf(p, sizeof p, "%s/f16.bin", argv[1]);
  run16<__half>(p, tiles, [](float v) { return __float2half_rn(v); }, -20, 7, 10, -10, 14);
  snprintf(p, sizeof p, "%s/bf16.bin", argv[1]);
  run16<__nv_bfloat16>(p, tiles, [](float v) { return __float2bfloat16_rn(v); }, -30, 30, 7, -20, 40);
  // e4m3: random non-NaN bytes, A 16x32 row-major, B n-major 8x32, C/D 16x8.
  std::vector<uint8_t> A(tiles * 512), B(tiles * 256);
  std::vector<float> C(tiles * 128), D(tiles * 128);
  for (auto& x : A) { do x = rnd() & 0xff; while ((x & 0x7f) == 0x7f); }
  for (auto& x : B) { do x = rnd() & 0xff; while ((x & 0x7f) == 0x7f); }
  for (auto& x : C) x = (rnd() % 4 == 0) ? 0.0f : mk(-12, 16, 23, 0.0f);
  uint8_t *dA, *dB; float *dC, *dD;
  cudaMalloc(&dA, A.size()); cudaMalloc(&dB, B.size()); cudaMalloc(&dC, C.size() * 4); cudaMalloc(&dD, D.size() * 4);
  cudaMemcpy(dA, A.data(), A.size(), cudaMemcpyHostToDevice); cudaMemcpy(dB, B.data(), B.size(), cudaMemcpyHostToDevice);
  cudaMemcpy(dC, C.data(), C.size() * 4, cudaMemcpyHostToDevice);
  k_e4m3<<<tiles, 32>>>(dA, dB, dC, dD);
  cudaError_t err = cudaMemcpy(D.data(), dD, D.size() * 4, cudaMemcpyDeviceToHost);
  snprintf(p, sizeof p, "%s/e4m3.bin", argv[1]);
  printf("%s: %s\n", p, cudaGetErrorString(err));
  FILE* f = fopen(p, "wb");
  fwrite(&tiles, 4, 1, f); fwrite(A.data(), 1, A.size(), f); fwrite(B.data(), 1, B.size(), f);
  fwrite(C.data(), 4, C.size(), f); fwrite(D.data(), 4, D.size(), f); fclose(f);
  return 0;
}
