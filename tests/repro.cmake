# The reproducer emitters: text checks, and the emitted C++ and Python really built and run
# against the installed LibTorch / PyTorch (a LibTorch compile: hence the long timeout).
add_executable(test_repro test_repro.cpp)
target_link_libraries(test_repro PRIVATE burnmark_repro burnmark_ir GTest::gtest_main)
target_include_directories(test_repro PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_definitions(test_repro PRIVATE BURNMARK_REPRO_CXX="${CMAKE_CXX_COMPILER}")
gtest_discover_tests(test_repro DISCOVERY_TIMEOUT 120
  PROPERTIES TIMEOUT 1200
             ENVIRONMENT "BURNMARK_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
# With the reference backend, the emitted reproducers of an all-ops program are also run
# against the reference's values.
if(TARGET burnmark_ref)
  target_link_libraries(test_repro PRIVATE burnmark_ref)
  target_compile_definitions(test_repro PRIVATE BURNMARK_HAVE_REF)
endif()
# The torch.compile reproducer, its emitted script run with the torch venv's Python (skipped when
# the venv lacks torch); Inductor compiles for a minute on a busy machine.
burnmark_test(test_compile_repro test_compile_repro.cpp)
target_link_libraries(test_compile_repro PRIVATE burnmark_repro burnmark_ir fmt::fmt)
target_compile_definitions(test_compile_repro PRIVATE
  BURNMARK_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
# Reproducers of programs with laid-out leaves (as_laid_out), the Python one run with PyTorch.
burnmark_test(test_repro_layout test_repro_layout.cpp)
target_link_libraries(test_repro_layout PRIVATE burnmark_repro burnmark_ir)
# The in-place path (libtorch-inplace's reproducer): its calls, and its scripts run with each
# Python here that has torch (pip's 2.15, Debian's 1.13.1, where the masked_scatter_ finding
# reproduces).
burnmark_test(test_repro_inplace test_repro_inplace.cpp)
target_link_libraries(test_repro_inplace PRIVATE burnmark_repro burnmark_ir)
