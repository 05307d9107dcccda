// wgmma_probe: measurement tool, not built by CMake. One wgmma m64n8k16 (f16) and
// m64n8k32 (e4m3) per tile, A from registers, B from shared memory (K-major, no
// swizzle), f32 accumulator preloaded with c. Writes <dir>/{wg_f16,wg_e4m3}.bin:
// int32 tiles, then per tile-set A bits (64 x K row-major), B bits (8 x K, n-major),
// C f32 (64 x 8), D f32 (64 x 8). Mode-3 tiles are small integers (exact in any model)
// and check the fragment layouts.
//   nvcc -O2 -gencode=arch=compute_90a,code=sm_90a wgmma_probe.cu -o wg && ./wg DIR
#include <cuda_fp16.h>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <vector>

static uint64_t s = 0x243f6a8885a308d3ull;
static uint32_t rnd() { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return (uint32_t)(s >> 11); }
static float mk(int emin, int emax, int mbits, float pzero) {
  if ((rnd() % 1000) < pzero * 1000) return 0.0f;
  int e = emin + (int)(rnd() % (uint32_t)(emax - emin + 1));
  float m = 1.0f + (float)(rnd() & ((1u << mbits) - 1)) / (float)(1u << mbits);
  float v = ldexpf(m, e);
  return (rnd() & 1) ? -v : v;
}

__device__ uint64_t desc_of(const void* p) {
  uint32_t addr = (uint32_t)__cvta_generic_to_shared(p);
  uint64_t d = 0;
  d |= (uint64_t)((addr & 0x3FFFF) >> 4);
  d |= (uint64_t)(128 >> 4) << 16;  // leading byte offset: next core matrix along K
  d |= (uint64_t)(256 >> 4) << 32;  // stride byte offset (one core matrix along N)
  return d;
}

// ESZ: bytes per element; K = 32 / ESZ. B core matrices: 8 rows (n) x 16 bytes.
template <int ESZ>
__global__ void k_wg(const uint8_t* A, const uint8_t* B, const float* C, float* D) {
  constexpr int K = 32 / ESZ;
  __shared__ __align__(128) uint8_t sB[256];
  int t = blockIdx.x, tid = threadIdx.x, w = tid / 32, lane = tid % 32, g = lane >> 2, q = lane & 3;
  const uint8_t* a = A + (size_t)t * 64 * K * ESZ;
  const uint8_t* b = B + (size_t)t * 8 * K * ESZ;
  // core matrix j (bytes [128j, 128j+128)): row n holds k bytes [16j, 16j+16).
  for (int i = tid; i < 256; i += 128) { int j = i / 128, n = (i % 128) / 16, byte = i % 16; sB[i] = b[n * 32 + j * 16 + byte]; }
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  auto reg = [&](int row, int kbyte) { uint32_t v = 0; for (int i = 0; i < 4; ++i) v |= (uint32_t)a[(16 * w + row) * 32 + kbyte + i] << (8 * i); return v; };
  // Per warp, 16 rows; 4-byte registers: rows g / g+8, k bytes q*4 and q*4+16.
  uint32_t a0 = reg(g, q * 4), a1 = reg(g + 8, q * 4), a2 = reg(g, q * 4 + 16), a3 = reg(g + 8, q * 4 + 16);
  const float* c = C + (size_t)t * 512;
  int r0 = 16 * w + g, r1 = r0 + 8, c0 = q * 2;
  float d0 = c[r0 * 8 + c0], d1 = c[r0 * 8 + c0 + 1], d2 = c[r1 * 8 + c0], d3 = c[r1 * 8 + c0 + 1];
  uint64_t db = desc_of(sB);
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  if (ESZ == 2) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0,%1,%2,%3}, {%4,%5,%6,%7}, %8, p, 1, 1, 0;\n}\n"
                 : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(db));
  } else {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3 {%0,%1,%2,%3}, {%4,%5,%6,%7}, %8, p, 1, 1;\n}\n"
                 : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(db));
  }
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  float* d = D + (size_t)t * 512;
  d[r0 * 8 + c0] = d0; d[r0 * 8 + c0 + 1] = d1; d[r1 * 8 + c0] = d2; d[r1 * 8 + c0 + 1] = d3;
}

template <int ESZ>
static void run(const char* path, int tiles) {
  constexpr int K = 32 / ESZ;
  std::vector<uint8_t> A((size_t)tiles * 64 * 32), B((size_t)tiles * 8 * 32);
  std::vector<float> C((size_t)tiles * 512), D((size_t)tiles * 512);
  auto put = [&](std::vector<uint8_t>& v, size_t idx, float x, int mode) {
    if (ESZ == 2) { __half h = __float2half_rn(x); uint16_t u; memcpy(&u, &h, 2); v[2 * idx] = u & 0xff; v[2 * idx + 1] = u >> 8; }
    else { uint8_t u; if (mode == 3) { int iv = (int)x; u = iv == 0 ? 0 : (uint8_t)((iv < 0 ? 0x80 : 0) | ((7 + (31 - __builtin_clz(abs(iv)))) << 3)); }  // +-2^e only
           else { do u = rnd() & 0xff; while ((u & 0x7f) == 0x7f); } v[idx] = u; }
  };
  for (int t = 0; t < tiles; ++t) {
    int mode = t % 4;
    for (int i = 0; i < 64 * K; ++i) {
      float av = mode == 3 ? (float)((int)(rnd() % 9) - 4) : mk(mode == 0 ? -3 : -20, mode == 0 ? 3 : 7, 10, 0.1f);
      if (mode == 3 && ESZ == 1) av = (float)((rnd() & 1 ? 1 : -1) * (1 << (rnd() % 3)));
      put(A, (size_t)t * 64 * K + i, av, mode);
    }
    for (int i = 0; i < 8 * K; ++i) {
      float bv = mode == 3 ? (float)((int)(rnd() % 9) - 4) : mk(mode == 0 ? -3 : -20, mode == 0 ? 3 : 7, 10, 0.1f);
      if (mode == 3 && ESZ == 1) bv = (float)((rnd() & 1 ? 1 : -1) * (1 << (rnd() % 3)));
      put(B, (size_t)t * 8 * K + i, bv, mode);
    }
    for (int i = 0; i < 512; ++i)
      C[(size_t)t * 512 + i] = mode == 3 ? (float)((int)(rnd() % 17) - 8) : ((rnd() % 4 == 0) ? 0.0f : mk(mode == 2 ? 10 : -10, mode == 2 ? 16 : 0, 23, 0.0f));
  }
  uint8_t *dA, *dB; float *dC, *dD;
  cudaMalloc(&dA, A.size()); cudaMalloc(&dB, B.size()); cudaMalloc(&dC, C.size() * 4); cudaMalloc(&dD, D.size() * 4);
  cudaMemcpy(dA, A.data(), A.size(), cudaMemcpyHostToDevice); cudaMemcpy(dB, B.data(), B.size(), cudaMemcpyHostToDevice);
  cudaMemcpy(dC, C.data(), C.size() * 4, cudaMemcpyHostToDevice);
  k_wg<ESZ><<<tiles, 128>>>(dA, dB, dC, dD);
  cudaError_t err = cudaMemcpy(D.data(), dD, D.size() * 4, cudaMemcpyDeviceToHost);
  printf("%s: %s\n", path, cudaGetErrorString(err));
  FILE* f = fopen(path, "wb");
  fwrite(&tiles, 4, 1, f); fwrite(A.data(), 1, A.size(), f); fwrite(B.data(), 1, B.size(), f);
  fwrite(C.data(), 4, C.size(), f); fwrite(D.data(), 4, D.size(), f); fclose(f);
}

int main(int argc, char** argv) {
  char p[512];
  snprintf(p, sizeof p, "%s/wg_f16.bin", argv[1]); run<2>(p, 2000);
  snprintf(p, sizeof p, "%s/wg_e4m3.bin", argv[1]); run<1>(p, 2000);
  return 0;
}
