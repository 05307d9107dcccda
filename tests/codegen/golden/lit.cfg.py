# lit configuration of the golden codegen tests: each *.test runs emit_kernel and
# checks its PTX/AMDGCN with FileCheck. Substitutions: %emit_kernel, FileCheck.
import os
import lit.formats

config.name = "fixbits-codegen-golden"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".test"]
config.test_source_root = os.path.dirname(__file__)
# Scratch files go to the build tree, never next to the tests.
config.test_exec_root = lit_config.params.get("exec_root", "/tmp/fixbits-codegen-golden")
emit = lit_config.params.get("emit_kernel")
filecheck = lit_config.params.get("filecheck", "/usr/lib/llvm-22/bin/FileCheck")
if not emit:
    lit_config.fatal("pass --param emit_kernel=<path to fixbits_emit_kernel>")
config.substitutions.append(("%emit_kernel", emit))
config.substitutions.append(("FileCheck", filecheck))
