# Embeds a cuBLAS table (TSV text) into a C++ source as one raw string literal.
# Usage: cmake -DIN=<table.tsv> -DOUT=<file.cpp> -DSYMBOL=<name> -P EmbedTable.cmake
file(READ ${IN} text)
string(FIND "${text}" ")fixbits_table\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains the raw-string delimiter )fixbits_table\"")
endif()
file(WRITE ${OUT}.tmp "// Generated from ${IN} by profile/EmbedTable.cmake; do not edit.\n"
  "namespace fixbits::profile {\n"
  "extern const char ${SYMBOL}[];\n"
  "const char ${SYMBOL}[] = R\"fixbits_table(${text})fixbits_table\";\n"
  "}  // namespace fixbits::profile\n")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.tmp)
