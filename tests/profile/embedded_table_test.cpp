// EmbeddedTable: the linked table inflates and parses, and gunzip reports a damaged
// stream as DataLoss naming its input.
#include "profile/EmbeddedTable.h"

#include <zlib.h>

#include <gtest/gtest.h>

#include "profile/CublasProfile.h"
#include "profile/CublasTable.h"

namespace fixbits::profile {
namespace {

std::string gzip(const std::string& text) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, text.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

TEST(EmbeddedTable, GunzipRoundTripsAndReadsSeveralMembers) {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "line " + std::to_string(i * 7919 % 1000) + "\n";
  absl::StatusOr<std::string> back = gunzip(gzip(text), "the test stream");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, text);
  absl::StatusOr<std::string> two = gunzip(gzip("ab") + gzip("cd"), "two members");
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(*two, "abcd");
  absl::StatusOr<std::string> empty = gunzip(gzip(""), "an empty member");
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(*empty, "");
}

TEST(EmbeddedTable, ADamagedStreamIsDataLossNamingItsInput) {
  const std::string gz = gzip(std::string(100000, 'x') + "tail");
  for (size_t cut : {size_t{0}, size_t{5}, gz.size() / 2, gz.size() - 1}) {
    absl::StatusOr<std::string> t = gunzip(std::string_view(gz).substr(0, cut), "the cut stream");
    ASSERT_FALSE(t.ok()) << "cut at " << cut;
    EXPECT_EQ(t.status().code(), absl::StatusCode::kDataLoss) << t.status();
    EXPECT_NE(t.status().message().find("the cut stream"), std::string_view::npos) << t.status();
  }
  std::string flipped = gz;
  flipped[gz.size() / 2] ^= 0x5a;
  EXPECT_FALSE(gunzip(flipped, "the flipped stream").ok());
  EXPECT_FALSE(gunzip("not gzip at all", "plain text").ok());
}

// The committed table: it inflates, parses, carries the three families' maps, and
// answers a shape of a validated class with a descriptor.
TEST(EmbeddedTable, TheCommittedTableIsAScanWithDescriptors) {
  absl::StatusOr<std::string> text = embedded_cublas_sm90_text();
  ASSERT_TRUE(text.ok()) << text.status();
  absl::StatusOr<CublasTable> t = parse_table(*text);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->arch, "sm_90");
  EXPECT_EQ(t->maps.size(), 3u);
  int with_desc = 0;
  for (const TableClass& c : t->classes) with_desc += c.desc.has_value();
  EXPECT_GT(with_desc, 100);
  // fp8's answer path matched cuBLAS on every compared shape (session 9); its table
  // has 8 classes with a descriptor covering 889 of 1,000 random shapes.
  absl::StatusOr<const CublasTable*> embedded = cublas_table(sm90);
  ASSERT_TRUE(embedded.ok()) << embedded.status();
  EXPECT_EQ((*embedded)->classes.size(), t->classes.size());
  absl::StatusOr<dsl::GemmDesc> d = cublas_map(sm90, {128, 4096, 4096}, DType::kF16);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->a_dtype, DType::kF16);
  EXPECT_EQ(d->out_dtype, DType::kF16);
}

}  // namespace
}  // namespace fixbits::profile
