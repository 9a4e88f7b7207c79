# Tests of the reference backend (forward values, gradients, conventions, error bounds).
burnmark_test(test_reference test_reference.cpp)
target_link_libraries(test_reference PRIVATE burnmark_ref)
