# CMake generated Testfile for 
# Source directory: /work/main/tests/unit
# Build directory: /work/main/build-san/tests/unit
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
include("/work/main/build-san/tests/unit/test_libhpu-b12d07c_include.cmake")
include("/work/main/build-san/tests/unit/test_hpu_smi-b12d07c_include.cmake")
add_test([=[hpu-smi-no-devices]=] "sh" "-c" "err=\$(\"\$0\" 2>&1 >/dev/null); rc=\$?; echo \"\$err\"; test \$rc -eq 6 && printf '%s\\n' \"\$err\" | grep -qx 'No HPU devices were found'" "/work/main/build-san/tools/hpu-smi/hpu-smi")
set_tests_properties([=[hpu-smi-no-devices]=] PROPERTIES  _BACKTRACE_TRIPLES "/work/main/tests/unit/CMakeLists.txt;18;add_test;/work/main/tests/unit/CMakeLists.txt;0;")
