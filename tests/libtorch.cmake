# The LibTorch backend (tests/libtorch_programs.h builds their programs) against hand-computed values, and against the reference backend.
burnmark_test(test_libtorch test_libtorch.cpp)
target_link_libraries(test_libtorch PRIVATE burnmark_libtorch burnmark_ir ${TORCH_LIBRARIES})
target_include_directories(test_libtorch PRIVATE ${PROJECT_SOURCE_DIR}/src/backends/libtorch)

# Needs the reference backend (src/backends/reference); configured only once it exists.
if(TARGET burnmark_ref AND EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/test_ref_vs_libtorch.cpp)
  burnmark_test(test_ref_vs_libtorch test_ref_vs_libtorch.cpp)
  target_link_libraries(test_ref_vs_libtorch PRIVATE burnmark_ref burnmark_libtorch burnmark_ir)
endif()
