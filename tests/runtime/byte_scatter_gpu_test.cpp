// runtime/ByteScatter on a CUDA device (skips with "[SKIP] <reason>" without one):
//   * a scatter of several blocks' worth of records, with offsets from a base, writes
//     exactly those bytes and no others (the whole buffer read back and compared);
//   * absolute addresses (base 0) cover two buffers in one launch, from a list that
//     sits at an aligned offset inside a larger upload, as CublasBlackBox uses it.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/ByteScatter.h"
#include "tests/runtime/GpuTest.h"

namespace fixbits::runtime {
namespace {

class ByteScatterGpuTest : public testing::GpuTest {};

// `count` distinct offsets in [0, size), random values.
std::vector<ByteWrite> draw_writes(std::mt19937_64& rng, size_t size, size_t count) {
  std::vector<uint64_t> offsets(size);
  std::iota(offsets.begin(), offsets.end(), 0);
  std::shuffle(offsets.begin(), offsets.end(), rng);
  std::vector<ByteWrite> w(count);
  for (size_t i = 0; i < count; ++i) {
    w[i] = {.offset = offsets[i], .value = static_cast<uint8_t>(rng())};
  }
  return w;
}

TEST_F(ByteScatterGpuTest, WritesExactlyTheListedBytes) {
  absl::StatusOr<ByteScatter> scatter = ByteScatter::load(device());
  ASSERT_TRUE(scatter.ok()) << scatter.status();
  std::mt19937_64 rng(11);
  for (size_t count : {size_t{1}, size_t{255}, size_t{256}, size_t{1000}}) {
    const size_t size = 4099, base_offset = 3;
    std::vector<uint8_t> mem(size + base_offset, 0x5a);
    const std::vector<ByteWrite> w = draw_writes(rng, size, count);
    std::vector<uint8_t> list;
    encode_byte_scatter_list(w, list);
    absl::StatusOr<Buffer> dm = device().alloc(mem.size()), dl = device().alloc(list.size());
    ASSERT_TRUE(dm.ok() && dl.ok());
    ASSERT_TRUE(dm->copy_from_host(mem.data(), mem.size()).ok());
    ASSERT_TRUE(dl->copy_from_host(list.data(), list.size()).ok());
    ASSERT_TRUE(scatter->run(dm->address() + base_offset, dl->address(), count).ok());
    std::vector<uint8_t> got(mem.size());
    ASSERT_TRUE(dm->copy_to_host(got.data(), got.size()).ok());
    for (const ByteWrite& x : w) mem[base_offset + x.offset] = x.value;
    EXPECT_EQ(std::memcmp(got.data(), mem.data(), mem.size()), 0) << count << " records";
  }
}

TEST_F(ByteScatterGpuTest, AbsoluteAddressesCoverTwoBuffersFromAListInsideAnUpload) {
  absl::StatusOr<ByteScatter> scatter = ByteScatter::load(device());
  ASSERT_TRUE(scatter.ok()) << scatter.status();
  std::mt19937_64 rng(23);
  std::vector<uint8_t> a(300, 0x11), b(700, 0x22);
  absl::StatusOr<Buffer> da = device().alloc(a.size()), db = device().alloc(b.size());
  ASSERT_TRUE(da.ok() && db.ok());
  ASSERT_TRUE(da->copy_from_host(a.data(), a.size()).ok());
  ASSERT_TRUE(db->copy_from_host(b.data(), b.size()).ok());
  std::vector<ByteWrite> w;
  for (ByteWrite x : draw_writes(rng, a.size(), 40)) {
    a[x.offset] = x.value;
    w.push_back({.offset = da->address() + x.offset, .value = x.value});
  }
  for (ByteWrite x : draw_writes(rng, b.size(), 333)) {
    b[x.offset] = x.value;
    w.push_back({.offset = db->address() + x.offset, .value = x.value});
  }
  // A decoy list first (never launched), then ours at the next 8-byte boundary.
  const std::vector<ByteWrite> decoy = {{.offset = da->address(), .value = 0xff}};
  std::vector<uint8_t> upload;
  encode_byte_scatter_list(decoy, upload, 0);
  const size_t at = (upload.size() + 7) / 8 * 8;
  encode_byte_scatter_list(w, upload, at);
  absl::StatusOr<Buffer> dl = device().alloc(upload.size());
  ASSERT_TRUE(dl.ok());
  ASSERT_TRUE(dl->copy_from_host(upload.data(), upload.size()).ok());
  ASSERT_TRUE(scatter->run(0, dl->address() + at, w.size()).ok());
  std::vector<uint8_t> got_a(a.size()), got_b(b.size());
  ASSERT_TRUE(da->copy_to_host(got_a.data(), got_a.size()).ok());
  ASSERT_TRUE(db->copy_to_host(got_b.data(), got_b.size()).ok());
  EXPECT_EQ(std::memcmp(got_a.data(), a.data(), a.size()), 0);
  EXPECT_EQ(std::memcmp(got_b.data(), b.data(), b.size()), 0);
}

}  // namespace
}  // namespace fixbits::runtime
