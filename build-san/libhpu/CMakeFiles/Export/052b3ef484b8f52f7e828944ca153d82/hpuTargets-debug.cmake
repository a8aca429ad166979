#----------------------------------------------------------------
# Generated CMake target import file for configuration "Debug".
#----------------------------------------------------------------

# Commands may need to know the format version.
set(CMAKE_IMPORT_FILE_VERSION 1)

# Import target "hpu::hpu" for configuration "Debug"
set_property(TARGET hpu::hpu APPEND PROPERTY IMPORTED_CONFIGURATIONS DEBUG)
set_target_properties(hpu::hpu PROPERTIES
  IMPORTED_LOCATION_DEBUG "${_IMPORT_PREFIX}/lib/libhpu.so.1.0.0"
  IMPORTED_SONAME_DEBUG "libhpu.so.1"
  )

list(APPEND _cmake_import_check_targets hpu::hpu )
list(APPEND _cmake_import_check_files_for_hpu::hpu "${_IMPORT_PREFIX}/lib/libhpu.so.1.0.0" )

# Commands beyond this point should not need to know the version.
set(CMAKE_IMPORT_FILE_VERSION)
