# CMake generated Testfile for 
# Source directory: /work/main/tests/unit/emu
# Build directory: /work/main/build-san/tests/unit/emu
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
include("/work/main/build-san/tests/unit/emu/emu-core-tests-b12d07c_include.cmake")
add_test([=[emu-qtest]=] "/root/.pyenv/shims/python3" "/work/main/tests/unit/emu/qtest_hpu.py")
set_tests_properties([=[emu-qtest]=] PROPERTIES  SKIP_RETURN_CODE "77" TIMEOUT "120" _BACKTRACE_TRIPLES "/work/main/tests/unit/emu/CMakeLists.txt;35;add_test;/work/main/tests/unit/emu/CMakeLists.txt;0;")
