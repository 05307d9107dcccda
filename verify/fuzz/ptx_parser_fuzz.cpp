// ptx_parser_fuzz.cpp — libFuzzer target: any bytes through the PTX reader and the walk.
// Invariant checked: parse_ptx and signature return a value or a Status; never crash or hang.
#include <cstddef>
#include <cstdint>
#include <string>

#include "verify/PtxParser.h"
#include "verify/Signature.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto m = fixbits::verify::parse_ptx(text);
  if (m.ok()) (void)fixbits::verify::signature(text, fixbits::verify::Target::kPtx);
  return 0;
}
