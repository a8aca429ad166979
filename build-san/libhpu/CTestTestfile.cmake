# CMake generated Testfile for 
# Source directory: /work/main/libhpu
# Build directory: /work/main/build-san/libhpu
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
