// ModelShapes: the GEMMs of one decoder layer of Llama 3 8B/70B, Qwen2.5 7B/72B and
// Mistral 7B, derived from each model's config, for benchmarks and anything else that
// wants realistic shapes. docs/shapes.md is the written form.
//
// Contract: every shape is D (M x N) = A (M x K) x B (K x N), A row-major
// (activations), B column-major (an nn.Linear weight, N x K row-major): the "TN"
// layout. layer_shape() derives (N, K) from a ModelConfig by the formulas of
// docs/shapes.md; nothing else in this file holds a dimension. The numbers here and
// the tables of docs/shapes.md are kept equal by tests/bench_shapes/model_shapes_test.
// Header-only, no dependencies beyond the standard library.
//
// Example:
//   for (const auto& s : bench::distinct_layer_shapes())      // 14 (N, K) pairs
//     for (int64_t m : bench::kTokenCounts) run(m, s.n, s.k);
//   for (const bench::GemmCase& c : bench::kDefaultSubset)    // 20 (model, layer, M)
//     auto s = bench::layer_shape(*bench::find_model(c.model), c.layer);
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace fixbits::bench {

// The fields of a Hugging Face config.json that decide a decoder layer's GEMMs.
struct ModelConfig {
  std::string_view name;  // "llama3-8b"
  int64_t hidden = 0;        // hidden_size
  int64_t intermediate = 0;  // intermediate_size
  int64_t heads = 0;         // num_attention_heads
  int64_t kv_heads = 0;      // num_key_value_heads
  int64_t head_dim = 0;      // hidden_size / num_attention_heads for all five
};

inline constexpr std::array<ModelConfig, 5> kModels = {{
    {"llama3-8b", 4096, 14336, 32, 8, 128},
    {"llama3-70b", 8192, 28672, 64, 8, 128},
    {"qwen2.5-7b", 3584, 18944, 28, 4, 128},
    {"qwen2.5-72b", 8192, 29568, 64, 8, 128},
    {"mistral-7b", 4096, 14336, 32, 8, 128},
}};

enum class Layer : uint8_t { kQkv, kO, kGateUp, kDown };
inline constexpr std::array<Layer, 4> kLayers = {Layer::kQkv, Layer::kO, Layer::kGateUp,
                                                 Layer::kDown};

// "qkv", "o", "gate_up", "down" (the names docs/shapes.md uses).
constexpr std::string_view layer_name(Layer l) {
  switch (l) {
    case Layer::kQkv: return "qkv";
    case Layer::kO: return "o";
    case Layer::kGateUp: return "gate_up";
    case Layer::kDown: return "down";
  }
  return "?";
}

// The token counts M every layer is run at.
inline constexpr std::array<int64_t, 5> kTokenCounts = {1, 16, 128, 1024, 4096};

struct LayerShape {
  std::string_view model;
  Layer layer = Layer::kQkv;
  int64_t n = 0, k = 0;
};

// (N, K) of one layer of `m`:
//   qkv: N = (heads + 2 kv_heads) head_dim, K = hidden;  o: N = hidden, K = heads head_dim;
//   gate_up: N = 2 intermediate, K = hidden;             down: N = hidden, K = intermediate.
constexpr LayerShape layer_shape(const ModelConfig& m, Layer l) {
  switch (l) {
    case Layer::kQkv: return {m.name, l, (m.heads + 2 * m.kv_heads) * m.head_dim, m.hidden};
    case Layer::kO: return {m.name, l, m.hidden, m.heads * m.head_dim};
    case Layer::kGateUp: return {m.name, l, 2 * m.intermediate, m.hidden};
    case Layer::kDown: return {m.name, l, m.hidden, m.intermediate};
  }
  return {m.name, l, 0, 0};
}

// The model named `name`, or null.
constexpr const ModelConfig* find_model(std::string_view name) {
  for (const ModelConfig& m : kModels) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

// Every (model, layer), models in kModels order, layers in kLayers order (20).
inline std::vector<LayerShape> all_layer_shapes() {
  std::vector<LayerShape> out;
  for (const ModelConfig& m : kModels) {
    for (Layer l : kLayers) out.push_back(layer_shape(m, l));
  }
  return out;
}

// all_layer_shapes() without a shape whose (N, K) an earlier one already has (14):
// the GEMM is the same whatever model it came from.
inline std::vector<LayerShape> distinct_layer_shapes() {
  std::vector<LayerShape> out;
  for (const LayerShape& s : all_layer_shapes()) {
    bool seen = false;
    for (const LayerShape& t : out) seen = seen || (t.n == s.n && t.k == s.k);
    if (!seen) out.push_back(s);
  }
  return out;
}

// One benchmarked GEMM: a model's layer at M tokens.
struct GemmCase {
  std::string_view model;
  Layer layer = Layer::kQkv;
  int64_t m = 0;
};

// The default benchmark subset (docs/shapes.md, "The default subset"): every layer
// kind and every M appear, M = 1 for three model sizes, deep-K down projections.
inline constexpr std::array<GemmCase, 20> kDefaultSubset = {{
    {"llama3-8b", Layer::kQkv, 1},        {"llama3-8b", Layer::kO, 1},
    {"llama3-8b", Layer::kGateUp, 1},     {"llama3-8b", Layer::kDown, 1},
    {"llama3-8b", Layer::kQkv, 16},       {"llama3-8b", Layer::kDown, 16},
    {"llama3-8b", Layer::kO, 128},        {"llama3-8b", Layer::kGateUp, 128},
    {"llama3-8b", Layer::kQkv, 1024},     {"llama3-8b", Layer::kDown, 1024},
    {"llama3-8b", Layer::kO, 4096},       {"llama3-8b", Layer::kGateUp, 4096},
    {"llama3-70b", Layer::kQkv, 1},       {"llama3-70b", Layer::kDown, 1},
    {"llama3-70b", Layer::kO, 16},        {"llama3-70b", Layer::kGateUp, 128},
    {"llama3-70b", Layer::kDown, 4096},   {"qwen2.5-7b", Layer::kGateUp, 1},
    {"qwen2.5-7b", Layer::kDown, 1024},   {"qwen2.5-72b", Layer::kDown, 16},
}};

}  // namespace fixbits::bench
