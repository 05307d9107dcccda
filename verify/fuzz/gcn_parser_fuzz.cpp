// gcn_parser_fuzz.cpp — libFuzzer target: any bytes through the AMDGCN reader and the walk.
// Invariant checked: parse_gcn and signature return a value or a Status; never crash or hang.
#include <cstddef>
#include <cstdint>
#include <string>

#include "verify/GcnParser.h"
#include "verify/Signature.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto m = fixbits::verify::parse_gcn(text);
  if (m.ok()) (void)fixbits::verify::signature(text, fixbits::verify::Target::kGcn);
  return 0;
}
