// runtime/ByteScatter on the CPU: the list layout the header documents (worked
// example, every byte of an element, lists placed after others), the launch
// arithmetic and argument checks on a fake driver, and the PTX's declarations. The
// kernel itself runs in byte_scatter_gpu_test (and, in the black box, in
// cublaslt_fake_test's host driver).
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/ByteScatter.h"
#include "tests/runtime/FakeDriver.h"

namespace fixbits::runtime {
namespace {

TEST(ByteScatterListTest, EncodesTheHeadersExample) {
  const std::vector<ByteWrite> w = {{.offset = 0x1000, .value = 0xaa},
                                    {.offset = 0x2001, .value = 0xbb}};
  std::vector<uint8_t> out;
  encode_byte_scatter_list(w, out);
  const std::vector<uint8_t> want = {0x00, 0x10, 0, 0, 0, 0, 0, 0,  // offset 0x1000
                                     0x01, 0x20, 0, 0, 0, 0, 0, 0,  // offset 0x2001
                                     0xaa, 0xbb};
  EXPECT_EQ(out, want);
  EXPECT_EQ(byte_scatter_list_bytes(2), want.size());
}

TEST(ByteScatterListTest, FullWidthOffsetsAndAListAfterAnother) {
  const std::vector<ByteWrite> first = {{.offset = 1, .value = 2}};
  const std::vector<ByteWrite> second = {{.offset = 0x0123456789abcdefull, .value = 0x7f},
                                         {.offset = 0xffffffffffffffffull, .value = 0}};
  std::vector<uint8_t> out(3, 0xee);
  encode_byte_scatter_list(first, out, 0);  // overwrites the head, grows to 9
  encode_byte_scatter_list(second, out, 16);
  ASSERT_EQ(out.size(), 16 + byte_scatter_list_bytes(2));
  uint64_t o = 0;
  std::memcpy(&o, out.data(), 8);
  EXPECT_EQ(o, 1u);
  EXPECT_EQ(out[8], 2);
  std::memcpy(&o, out.data() + 16, 8);
  EXPECT_EQ(o, 0x0123456789abcdefull);
  std::memcpy(&o, out.data() + 24, 8);
  EXPECT_EQ(o, 0xffffffffffffffffull);
  EXPECT_EQ(out[32], 0x7f);
  EXPECT_EQ(out[33], 0);
  encode_byte_scatter_list({}, out, 40);  // an empty list adds nothing
  EXPECT_EQ(out.size(), 34u);
}

TEST(ByteScatterListTest, AnElementIsItsBytesLittleEndian) {
  std::vector<ByteWrite> w;
  append_element_writes(w, 100, 0x3c, 1);            // fp8
  append_element_writes(w, 200, 0x3c00, 2);          // f16 one
  append_element_writes(w, 300, 0x3f800000u, 4);     // f32 one
  const std::vector<ByteWrite> want = {
      {100, 0x3c}, {200, 0x00}, {201, 0x3c}, {300, 0x00}, {301, 0x00}, {302, 0x80}, {303, 0x3f}};
  EXPECT_EQ(w, want);
  // The writes put back the element's bytes in memory, on this (little-endian) host.
  std::vector<uint8_t> mem(4, 0);
  for (size_t i = 3; i < w.size(); ++i) mem[w[i].offset - 300] = w[i].value;
  uint32_t bits = 0;
  std::memcpy(&bits, mem.data(), 4);
  EXPECT_EQ(bits, 0x3f800000u);
}

TEST(ByteScatterTest, LaunchArithmeticOnAFakeDriver) {
  auto driver = std::make_shared<testing::FakeDriver>();
  driver->expected_args = 3;
  Device device(driver);
  absl::StatusOr<ByteScatter> scatter = ByteScatter::load(device);
  ASSERT_TRUE(scatter.ok()) << scatter.status();
  // 1000 records = 4 blocks of 256.
  ASSERT_TRUE(scatter->run(0, 0x9000, 1000).ok());
  ASSERT_EQ(driver->launches.size(), 1u);
  const auto& l = driver->launches[0];
  EXPECT_EQ(l.kernel, "fixbits_byte_scatter");
  EXPECT_EQ(l.grid[0], 4u);
  EXPECT_EQ(l.block[0], 256u);
  EXPECT_EQ(l.first_words, (std::vector<uint64_t>{0, 0x9000, 1000}));
  ASSERT_TRUE(scatter->run(0x2000, 0x9008, 256).ok());  // exactly one block
  EXPECT_EQ(driver->launches.back().grid[0], 1u);
  EXPECT_EQ(driver->launches.back().first_words, (std::vector<uint64_t>{0x2000, 0x9008, 256}));

  absl::Status st = scatter->run(0, 0x9004, 10);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("not 8-byte aligned"), std::string::npos) << st;
  EXPECT_EQ(scatter->run(0, 0, 10).code(), absl::StatusCode::kInvalidArgument);
  st = scatter->run(0, 0x9000, uint64_t{1} << 40);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("more than one launch"), std::string::npos) << st;
  EXPECT_TRUE(scatter->run(0, 0, 0).ok());  // nothing to write
  EXPECT_EQ(driver->launches.size(), 2u);
}

TEST(ByteScatterTest, PtxDeclaresTheTargetAndTheEntry) {
  const std::string ptx = byte_scatter_ptx();
  EXPECT_NE(ptx.find(".version 8.0"), std::string::npos);
  EXPECT_NE(ptx.find(".target sm_90"), std::string::npos);
  EXPECT_NE(ptx.find(".address_size 64"), std::string::npos);
  EXPECT_NE(ptx.find(".visible .entry fixbits_byte_scatter("), std::string::npos);
  EXPECT_NE(ptx.find("st.global.u8"), std::string::npos);
}

}  // namespace
}  // namespace fixbits::runtime
