// fixbits-partition DIR — partitions the kernel files in DIR into equivalence classes.
// Prints "<signature> <file name>" per file (sorted by name) on stdout and a summary of the
// classes on stderr. Files that fail to read or parse print "error <file name>: <reason>"
// on stderr and count as their own class. Exit 0 on success, 2 when DIR cannot be listed.
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "verify/Signature.h"
#include "verify/tools/ReadFile.h"

int main(int argc, char** argv) {
  using namespace fixbits::verify;
  namespace fs = std::filesystem;
  if (argc != 2) {
    std::fprintf(stderr, "usage: fixbits-partition DIR\n");
    return 2;
  }
  std::error_code ec;
  std::vector<fs::path> files;
  for (fs::directory_iterator it(argv[1], ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    auto ext = it->path().extension().string();
    if (ext == ".ptx" || ext == ".s" || ext == ".gcn" || ext == ".amdgcn") files.push_back(it->path());
  }
  if (ec) {
    std::fprintf(stderr, "fixbits-partition: cannot list directory '%s': %s\n", argv[1], ec.message().c_str());
    return 2;
  }
  std::sort(files.begin(), files.end());
  std::map<std::string, std::vector<std::string>> classes;
  int errors = 0;
  for (const auto& p : files) {
    auto text = read_file(p.string());
    absl::StatusOr<Signature> s = text.ok() ? signature(*text) : absl::StatusOr<Signature>(text.status());
    if (!s.ok()) {
      std::fprintf(stderr, "error %s: %s\n", p.filename().c_str(), std::string(s.status().message()).c_str());
      ++errors;
      continue;
    }
    std::printf("%s %s\n", s->hex.c_str(), p.filename().c_str());
    classes[s->hex].push_back(p.filename().string());
  }
  std::fprintf(stderr, "%zu kernel files, %zu classes, %d unreadable\n", files.size(), classes.size(), errors);
  for (const auto& [sig, names] : classes) {
    std::fprintf(stderr, "  class %s: %zu file(s)\n", sig.c_str(), names.size());
  }
  return 0;
}
