// EmbeddedTable: see EmbeddedTable.h. The gzip file is pulled into .rodata by the
// assembler's .incbin (its path comes from profile/CMakeLists.txt as
// FIXBITS_CUBLAS_SM90_GZ, which also makes this file depend on it); zlib inflates it.
#include "profile/EmbeddedTable.h"

#include <zlib.h>

#include "absl/strings/str_format.h"

#ifndef FIXBITS_CUBLAS_SM90_GZ
#error "FIXBITS_CUBLAS_SM90_GZ (the path of profile/data/cublas_sm90.tsv.gz) is not defined"
#endif

__asm__(".pushsection .rodata\n"
        ".balign 16\n"
        ".global fixbits_cublas_sm90_gz\n"
        "fixbits_cublas_sm90_gz:\n"
        ".incbin \"" FIXBITS_CUBLAS_SM90_GZ "\"\n"
        ".global fixbits_cublas_sm90_gz_end\n"
        "fixbits_cublas_sm90_gz_end:\n"
        ".popsection\n");
extern "C" const unsigned char fixbits_cublas_sm90_gz[];
extern "C" const unsigned char fixbits_cublas_sm90_gz_end[];

namespace fixbits::profile {

absl::StatusOr<std::string> gunzip(std::string_view bytes, std::string_view what) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
    return absl::InternalError(absl::StrFormat("zlib could not start inflating %s.", what));
  }
  std::string out;
  char buf[1 << 16];
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  int rc = Z_OK;
  while (true) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof(buf);
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof(buf) - z.avail_out);
    if (rc == Z_STREAM_END) {
      if (z.avail_in == 0) break;
      // Another gzip member follows (gzip -c a b > c): go on with it.
      if (inflateReset(&z) != Z_OK) break;
      continue;
    }
    if (rc != Z_OK) break;
    if (z.avail_in == 0 && z.avail_out != 0) {
      rc = Z_BUF_ERROR;  // the input ended inside a member: truncated
      break;
    }
  }
  inflateEnd(&z);
  if (rc != Z_STREAM_END) {
    return absl::DataLossError(absl::StrFormat(
        "%s is not a complete gzip stream (zlib: %s after %d bytes of output).", what,
        z.msg != nullptr ? z.msg : (rc == Z_BUF_ERROR ? "unexpected end of input" : "error"),
        out.size()));
  }
  return out;
}

absl::StatusOr<std::string> embedded_cublas_sm90_text() {
  const std::string_view bytes(reinterpret_cast<const char*>(fixbits_cublas_sm90_gz),
                               static_cast<size_t>(fixbits_cublas_sm90_gz_end - fixbits_cublas_sm90_gz));
  return gunzip(bytes, "The embedded cuBLAS table for sm_90 (profile/data/cublas_sm90.tsv.gz)");
}

}  // namespace fixbits::profile
