# lit configuration of the .mlir tests of our own MLIR passes (ctest: mlir_pass_tests).
# Each test's RUN lines run build/tools/lt-opt and check its output with LLVM 22's FileCheck.
import os

import lit.formats

config.name = "lazytensor-mlir-passes"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = lit_config.params["exec_root"]
config.environment["PATH"] = os.pathsep.join(
    [lit_config.params["tools_dir"], lit_config.params["llvm_bin"], config.environment["PATH"]])
for name in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
    if name in os.environ:
        config.environment[name] = os.environ[name]
