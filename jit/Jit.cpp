// Jit.cpp: compile-or-fetch, then load. Before/after:
//   tile::Program "reduce{...}"  ->  CacheKey{text, "sm_90a", "fixbits 0.1.0 / LLVM 22.1.8"}
//   -> CacheEntry{ptx, entry, "block=256;smem=0;grid=rows"} -> runtime::Kernel
#include "jit/Jit.h"

#include <cstdlib>
#include <memory>
#include <vector>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "jit/SourceDigest.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace fixbits::jit {
namespace {

std::string encode_metadata(const codegen::CompiledKernel& k) {
  return absl::StrFormat("block=%d;smem=%d;grid=%s", k.block_threads, k.dynamic_shared_bytes,
                         k.grid);
}

absl::Status decode_metadata(const std::string& text, JitKernel& out) {
  bool have_block = false, have_smem = false, have_grid = false;
  for (const std::string& field : std::vector<std::string>(absl::StrSplit(text, ';'))) {
    const size_t eq = field.find('=');
    if (eq == std::string::npos) continue;
    const std::string name = field.substr(0, eq), value = field.substr(eq + 1);
    if (name == "block") {
      have_block = absl::SimpleAtoi(value, &out.block_threads) && out.block_threads > 0;
    } else if (name == "smem") {
      have_smem = absl::SimpleAtoi(value, &out.dynamic_shared_bytes);
    } else if (name == "grid") {
      out.grid = value;
      have_grid = !out.grid.empty();
    }
  }
  if (!have_block || !have_smem || !have_grid) {
    return absl::DataLossError(absl::StrCat(
        "the kernel cache entry's launch metadata \"", text,
        "\" lacks block, smem or grid; delete the cache directory or set FIXBITS_CACHE=off"));
  }
  return absl::OkStatus();
}

// Kernels loaded in this process, per (device, target, key). Guarded by its mutex.
struct LoadedTable {
  absl::Mutex mu;
  absl::flat_hash_map<std::pair<const runtime::Device*, std::string>,
                      std::shared_ptr<const JitKernel>>
      kernels ABSL_GUARDED_BY(mu);
};

LoadedTable& loaded_table() {
  static LoadedTable* table = new LoadedTable;  // never destroyed: kernels outlive main's callers
  return *table;
}

absl::StatusOr<std::shared_ptr<const JitKernel>> load_uncached(const runtime::Device& device, const std::string& key_text,
                                        ProgramBuilder build_program, codegen::Target target,
                                        runtime::KernelCache* cache) {
  runtime::KernelCache& c = cache ? *cache : runtime::KernelCache::global();
  const runtime::CacheKey key(key_text, runtime_target(target), compiler_version());
  auto build = [&]() -> absl::StatusOr<runtime::CacheEntry> {
    absl::StatusOr<tile::Program> program = build_program();
    if (!program.ok()) return program.status();
    absl::StatusOr<codegen::CompiledKernel> k = codegen::compile(*program, target);
    if (!k.ok()) return k.status();
    runtime::CacheEntry e;
    e.text = std::move(k->text);
    e.entry_name = k->entry;
    e.metadata = encode_metadata(*k);
    return e;
  };
  absl::StatusOr<runtime::LoadedKernel> loaded = runtime::load_kernel(device, c, key, build);
  if (!loaded.ok()) return loaded.status();
  auto out = std::make_shared<JitKernel>(JitKernel{.loaded = *std::move(loaded), .block_threads = 0, .dynamic_shared_bytes = 0, .grid = {}});
  if (absl::Status s = decode_metadata(out->loaded.entry->metadata, *out); !s.ok()) return s;
  return std::shared_ptr<const JitKernel>(std::move(out));
}

}  // namespace

std::string compiler_version() {
  return runtime::default_compiler_version() + " / src " + FIXBITS_SOURCE_DIGEST;
}

void forget_loaded_kernels() {
  LoadedTable& t = loaded_table();
  absl::MutexLock lock(&t.mu);
  t.kernels.clear();
}

absl::StatusOr<std::shared_ptr<const JitKernel>> load_keyed(const runtime::Device& device, const std::string& key,
                                     ProgramBuilder build, codegen::Target target,
                                     runtime::KernelCache* cache) {
  LoadedTable& t = loaded_table();
  const std::string table_key = runtime_target(target) + "|" + key;
  if (cache == nullptr) {  // the table fronts the global cache only
    absl::MutexLock lock(&t.mu);
    auto it = t.kernels.find(std::make_pair(&device, table_key));
    if (it != t.kernels.end()) return it->second;
  }
  absl::StatusOr<std::shared_ptr<const JitKernel>> k = load_uncached(device, key, build, target, cache);
  if (!k.ok() || cache != nullptr || !runtime::KernelCache::global().options().enabled) return k;
  absl::MutexLock lock(&t.mu);
  t.kernels.try_emplace(std::make_pair(&device, table_key), *k);
  return k;
}

std::string runtime_target(codegen::Target t) {
  return t == codegen::Target::kNvptxSm90a ? "sm_90a" : "gfx942";
}

absl::StatusOr<std::shared_ptr<const JitKernel>> load(const runtime::Device& device, const tile::Program& program,
                               codegen::Target target, runtime::KernelCache* cache) {
  return load_keyed(device, tile::to_string(program),
                    [&]() -> absl::StatusOr<tile::Program> { return program; }, target, cache);
}

}  // namespace fixbits::jit
