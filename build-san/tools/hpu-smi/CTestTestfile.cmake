# CMake generated Testfile for 
# Source directory: /work/main/tools/hpu-smi
# Build directory: /work/main/build-san/tools/hpu-smi
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
