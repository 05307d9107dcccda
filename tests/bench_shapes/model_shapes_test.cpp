// model_shapes_test: bench/ModelShapes.h agrees with docs/shapes.md (every table is
// parsed and compared cell by cell) and with the models' published configs (a few
// dimensions written out by hand, not derived by the header's formulas).
#include "bench/ModelShapes.h"

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"

namespace fixbits::bench {
namespace {

// docs/shapes.md, found from this file's path (tests/bench_shapes/ -> repo root).
std::string read_shapes_md() {
  std::string here = __FILE__;
  const std::string marker = "tests/bench_shapes/";
  const size_t at = here.rfind(marker);
  if (at == std::string::npos) return "";
  std::ifstream in(here.substr(0, at) + "docs/shapes.md");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(' ');
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(' ') - b + 1);
}

// The data rows (cells trimmed) of the first table after the line `heading`; the
// header row and the |---| row are dropped. Empty when the heading is missing.
std::vector<std::vector<std::string>> table_after(const std::string& md, const std::string& heading) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(md);
  std::string line;
  bool found = false, in_table = false;
  int row = 0;
  while (std::getline(in, line)) {
    if (!found) {
      found = line == heading;
      continue;
    }
    if (line.rfind("|", 0) != 0) {
      if (in_table) break;
      if (line.rfind("## ", 0) == 0) break;
      continue;
    }
    in_table = true;
    if (row++ < 2) continue;  // header and separator
    std::vector<std::string> cells;
    std::string cell;
    std::istringstream cs(line.substr(1));
    while (std::getline(cs, cell, '|')) cells.push_back(trim(cell));
    rows.push_back(cells);
  }
  return rows;
}

int64_t num(const std::string& s) {
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  return (end != nullptr && *end == '\0' && !s.empty()) ? v : -1;
}

class ModelShapesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    md_ = read_shapes_md();
    ASSERT_FALSE(md_.empty()) << "docs/shapes.md not found next to " << __FILE__;
  }
  std::string md_;
};

TEST_F(ModelShapesTest, ModelConfigsEqualTheDocsTable) {
  const auto rows = table_after(md_, "## Model configurations");
  ASSERT_EQ(rows.size(), kModels.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), 6u) << "row " << i;
    const ModelConfig& m = kModels[i];
    EXPECT_EQ(rows[i][0], m.name);
    EXPECT_EQ(num(rows[i][1]), m.hidden) << m.name;
    EXPECT_EQ(num(rows[i][2]), m.intermediate) << m.name;
    EXPECT_EQ(num(rows[i][3]), m.heads) << m.name;
    EXPECT_EQ(num(rows[i][4]), m.kv_heads) << m.name;
    EXPECT_EQ(num(rows[i][5]), m.head_dim) << m.name;
  }
}

TEST_F(ModelShapesTest, LayerShapesEqualTheDocsTable) {
  const auto rows = table_after(md_, "## Layer shapes (N x K)");
  const std::vector<LayerShape> shapes = all_layer_shapes();
  ASSERT_EQ(rows.size(), shapes.size());
  ASSERT_EQ(shapes.size(), 20u);
  for (size_t i = 0; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), 4u) << "row " << i;
    EXPECT_EQ(rows[i][0], shapes[i].model) << "row " << i;
    EXPECT_EQ(rows[i][1], layer_name(shapes[i].layer)) << "row " << i;
    EXPECT_EQ(num(rows[i][2]), shapes[i].n) << rows[i][0] << " " << rows[i][1];
    EXPECT_EQ(num(rows[i][3]), shapes[i].k) << rows[i][0] << " " << rows[i][1];
  }
}

TEST_F(ModelShapesTest, DefaultSubsetEqualsTheDocsTable) {
  const auto rows = table_after(md_, "## The default subset (20 shapes)");
  ASSERT_EQ(rows.size(), kDefaultSubset.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), 3u) << "row " << i;
    EXPECT_EQ(rows[i][0], kDefaultSubset[i].model) << "row " << i;
    EXPECT_EQ(rows[i][1], layer_name(kDefaultSubset[i].layer)) << "row " << i;
    EXPECT_EQ(num(rows[i][2]), kDefaultSubset[i].m) << "row " << i;
  }
}

// Dimensions read off the models' config.json files and multiplied out by hand.
TEST(ModelShapes, KnownDimensionsOfThePublishedConfigs) {
  struct Known {
    std::string_view model;
    Layer layer;
    int64_t n, k;
  } known[] = {
      {"llama3-8b", Layer::kQkv, 6144, 4096},     {"llama3-8b", Layer::kDown, 4096, 14336},
      {"llama3-70b", Layer::kQkv, 10240, 8192},   {"llama3-70b", Layer::kGateUp, 57344, 8192},
      {"llama3-70b", Layer::kDown, 8192, 28672},  {"qwen2.5-7b", Layer::kQkv, 4608, 3584},
      {"qwen2.5-7b", Layer::kO, 3584, 3584},      {"qwen2.5-7b", Layer::kGateUp, 37888, 3584},
      {"qwen2.5-72b", Layer::kGateUp, 59136, 8192}, {"qwen2.5-72b", Layer::kDown, 8192, 29568},
      {"mistral-7b", Layer::kGateUp, 28672, 4096},
  };
  for (const Known& w : known) {
    const ModelConfig* m = find_model(w.model);
    ASSERT_NE(m, nullptr) << w.model;
    const LayerShape s = layer_shape(*m, w.layer);
    EXPECT_EQ(s.n, w.n) << w.model << " " << layer_name(w.layer);
    EXPECT_EQ(s.k, w.k) << w.model << " " << layer_name(w.layer);
  }
  for (const ModelConfig& m : kModels) EXPECT_EQ(m.heads * m.head_dim, m.hidden) << m.name;
  EXPECT_EQ(find_model("llama3-13b"), nullptr);
}

TEST(ModelShapes, DistinctShapesDropOnlyRepeatedPairs) {
  const std::vector<LayerShape> d = distinct_layer_shapes();
  ASSERT_EQ(d.size(), 14u);  // mistral-7b = llama3-8b; qwen2.5-72b qkv, o = llama3-70b's
  std::set<std::pair<int64_t, int64_t>> pairs;
  for (const LayerShape& s : d) {
    EXPECT_TRUE(pairs.insert({s.n, s.k}).second) << s.model << " " << layer_name(s.layer);
    EXPECT_NE(s.model, "mistral-7b");
  }
  for (const LayerShape& s : all_layer_shapes()) EXPECT_EQ(pairs.count({s.n, s.k}), 1u);
}

TEST(ModelShapes, DefaultSubsetCoversEveryLayerAndEveryM) {
  std::set<std::tuple<std::string_view, Layer, int64_t>> seen;
  std::set<Layer> layers;
  std::set<int64_t> ms;
  std::set<std::string_view> decode_models;
  for (const GemmCase& c : kDefaultSubset) {
    EXPECT_NE(find_model(c.model), nullptr) << c.model;
    EXPECT_TRUE(seen.insert({c.model, c.layer, c.m}).second) << "duplicate " << c.model;
    layers.insert(c.layer);
    ms.insert(c.m);
    if (c.m == 1) decode_models.insert(c.model);
  }
  EXPECT_EQ(layers.size(), kLayers.size());
  EXPECT_EQ(ms, std::set<int64_t>(kTokenCounts.begin(), kTokenCounts.end()));
  EXPECT_EQ(decode_models.size(), 3u);
}

}  // namespace
}  // namespace fixbits::bench
