# CMake generated Testfile for 
# Source directory: /work/main
# Build directory: /work/main/build-san
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
subdirs("libhpu")
subdirs("tools/hpu-smi")
subdirs("tests/unit")
subdirs("tests/vm")
subdirs("tests/unit/emu")
