# CMake generated Testfile for 
# Source directory: /work/main/tests/vm
# Build directory: /work/main/build-san/tests/vm
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
