// cvt_probe: measurement tool, not built by CMake. Converts 1M binary32 values with
// the GPU's cvt instructions so FloatFormat can be checked against them. Writes
// <dir>/cvt.bin: int32 count, then per value: f32 bits (u32), cvt.rn.f16.f32 (u16),
// cvt.rn.bf16.f32 (u16), cvt.rn.satfinite.e4m3x2.f32 (u8), cvt.rn.satfinite.e5m2x2.f32
// (u8), cvt.rn.tf32.f32 (u32), as six arrays.
//   nvcc -O2 -gencode=arch=compute_90,code=sm_90 cvt_probe.cu -o cvt && ./cvt DIR
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

static uint64_t s = 0x13198a2e03707344ull;
static uint32_t rnd() { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return (uint32_t)(s >> 11) ^ (uint32_t)(s << 21); }

__global__ void k_cvt(const uint32_t* in, uint16_t* h, uint16_t* bf, uint8_t* e4, uint8_t* e5, uint32_t* tf, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = __uint_as_float(in[i]);
  uint16_t rh, rb, p4, p5; uint32_t rt;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(rh) : "f"(x));
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(rb) : "f"(x));
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(p4) : "f"(0.0f), "f"(x));
  asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(p5) : "f"(0.0f), "f"(x));
  asm("cvt.rn.tf32.f32 %0, %1;" : "=r"(rt) : "f"(x));
  h[i] = rh; bf[i] = rb; e4[i] = p4 & 0xff; e5[i] = p5 & 0xff; tf[i] = rt;
}

int main(int argc, char** argv) {
  const int n = 1 << 20;
  std::vector<uint32_t> in(n);
  for (int i = 0; i < n; ++i) {
    if (i < 4096) { in[i] = (uint32_t)i << 19 | (i & 1 ? 0x40000 : 0); continue; }  // exponent/sign sweep incl. ties
    uint32_t r = rnd();
    switch (i % 4) {
      case 0: in[i] = r; break;  // any pattern (NaN, inf, subnormal included)
      case 1: in[i] = (r & 0x80000000u) | ((uint32_t)(127 - 30 + (rnd() % 50)) << 23) | (r & 0x7fffff); break;
      case 2: in[i] = (r & 0x80000000u) | ((uint32_t)(127 - 30 + (rnd() % 50)) << 23) | (r & 0x7fe000) | 0x1000; break;  // ties for tf32 etc.
      default: in[i] = (r & 0x80000000u) | ((uint32_t)(127 - 30 + (rnd() % 50)) << 23) | ((r & 0x7f) << 16) | ((rnd() % 3) << 15); break;
    }
  }
  uint32_t *din, *dtf; uint16_t *dh, *db; uint8_t *d4, *d5;
  cudaMalloc(&din, n * 4); cudaMalloc(&dtf, n * 4); cudaMalloc(&dh, n * 2); cudaMalloc(&db, n * 2); cudaMalloc(&d4, n); cudaMalloc(&d5, n);
  cudaMemcpy(din, in.data(), n * 4, cudaMemcpyHostToDevice);
  k_cvt<<<(n + 255) / 256, 256>>>(din, dh, db, d4, d5, dtf, n);
  std::vector<uint16_t> h(n), bf(n); std::vector<uint8_t> e4(n), e5(n); std::vector<uint32_t> tf(n);
  cudaMemcpy(h.data(), dh, n * 2, cudaMemcpyDeviceToHost); cudaMemcpy(bf.data(), db, n * 2, cudaMemcpyDeviceToHost);
  cudaMemcpy(e4.data(), d4, n, cudaMemcpyDeviceToHost); cudaMemcpy(e5.data(), d5, n, cudaMemcpyDeviceToHost);
  cudaError_t err = cudaMemcpy(tf.data(), dtf, n * 4, cudaMemcpyDeviceToHost);
  char p[512]; snprintf(p, sizeof p, "%s/cvt.bin", argv[1]);
  printf("%s: %s\n", p, cudaGetErrorString(err));
  FILE* f = fopen(p, "wb");
  fwrite(&n, 4, 1, f); fwrite(in.data(), 4, n, f); fwrite(h.data(), 2, n, f); fwrite(bf.data(), 2, n, f);
  fwrite(e4.data(), 1, n, f); fwrite(e5.data(), 1, n, f); fwrite(tf.data(), 4, n, f); fclose(f);
  return 0;
}
