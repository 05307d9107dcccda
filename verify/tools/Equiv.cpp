// fixbits-equiv A B — are two compiled kernels (PTX or AMDGCN) bitwise equivalent?
// Exit 0: equivalent. Exit 1: they differ; the first differing node is printed.
// Exit 2: usage or input error, with the reason on stderr.
#include <cstdio>
#include <string>

#include "verify/Signature.h"
#include "verify/tools/ReadFile.h"

int main(int argc, char** argv) {
  using namespace fixbits::verify;
  if (argc != 3) {
    std::fprintf(stderr, "usage: fixbits-equiv A.ptx|A.s B.ptx|B.s\n");
    return 2;
  }
  auto a = read_file(argv[1]);
  auto b = read_file(argv[2]);
  if (!a.ok() || !b.ok()) {
    std::fprintf(stderr, "fixbits-equiv: %s\n", std::string((!a.ok() ? a.status() : b.status()).message()).c_str());
    return 2;
  }
  auto e = equivalent(*a, *b);
  if (!e.ok()) {
    std::fprintf(stderr, "fixbits-equiv: %s\n", std::string(e.status().message()).c_str());
    return 2;
  }
  if (e->equivalent) {
    std::printf("equivalent %s\n", e->signature_a.c_str());
    return 0;
  }
  std::printf("differs %s %s\n%s\n", e->signature_a.c_str(), e->signature_b.c_str(), e->explanation.c_str());
  return 1;
}
