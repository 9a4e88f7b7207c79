# Tests of the reference backend (forward values, gradients, conventions, error bounds), and of
# each op family's scalar formulas (src/backends/reference/approx_<family>.h) on their own.
# One executable over the op families' files (tests/reference_test_builder.h builds their programs).
burnmark_test(test_reference test_reference_elementwise.cpp test_reference_shape_ops.cpp
              test_reference_matmul.cpp test_reference_indexing.cpp test_reference_bounds.cpp
              test_reference_tape.cpp)
target_link_libraries(test_reference PRIVATE burnmark_ref)
# The shape views and bmm against values derived from their definitions.
burnmark_test(test_reference_views test_reference_views.cpp)
target_link_libraries(test_reference_views PRIVATE burnmark_ref burnmark_ir)
target_include_directories(test_reference_views PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
foreach(family transcendental elementary activation binary reductions)
  burnmark_test(test_reference_${family} test_reference_${family}.cpp)
  target_link_libraries(test_reference_${family} PRIVATE burnmark_ir)
  target_include_directories(test_reference_${family} PRIVATE
                             ${PROJECT_SOURCE_DIR}/src/backends/reference)
endforeach()

# Registered conventions (include/burnmark/backends/conventions.def) and their judge.
burnmark_test(test_conventions test_conventions.cpp)
target_link_libraries(test_conventions PRIVATE burnmark_ref burnmark_triage)

# det, slogdet, inv through the whole reference (programs), and the oracle's error outcomes.
burnmark_test(test_reference_linalg test_reference_linalg.cpp)
target_link_libraries(test_reference_linalg PRIVATE burnmark_ref burnmark_oracle burnmark_ir)
target_include_directories(test_reference_linalg PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})

# What the reference's tape keeps between programs (bounded whatever programs it has met).
burnmark_test(test_reference_memory test_reference_memory.cpp)
target_link_libraries(test_reference_memory PRIVATE burnmark_ref burnmark_ir)
target_include_directories(test_reference_memory PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}
                           ${PROJECT_SOURCE_DIR}/src/backends/reference)

# The ftz-daz convention's other side (the reference flushing subnormals, as JAX documents) on
# hand-derived values, and its scope: the same flush by a library that does not document it.
burnmark_test(test_ftz test_ftz.cpp)
target_link_libraries(test_ftz PRIVATE burnmark_ref burnmark_triage)

# The scans' gradients at infinite elements (cumprod, logcumsumexp): limits by hand.
burnmark_test(test_reference_scan_inf test_reference_scan_inf.cpp)
target_link_libraries(test_reference_scan_inf PRIVATE burnmark_ref burnmark_ir)
