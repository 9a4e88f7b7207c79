# The Python backends (src/backends/python): torch-eager-py against the in-process libtorch
# backend, bit for bit, and a Python child's missing interpreter or crash as an outcome. Needs the
# torch venv (BURNMARK_TORCH_PYTHON=1 tools/install-deps.sh, which tools/test.sh runs).
burnmark_test(test_python_backend test_python_backend.cpp)
target_link_libraries(test_python_backend PRIVATE burnmark_registry burnmark_programs_per_op
                                                  burnmark_ir burnmark_gen
                                                  burnmark_gen_mutate burnmark_config fmt::fmt)
target_include_directories(test_python_backend PRIVATE ${PROJECT_SOURCE_DIR}/src/backends/python)
target_compile_definitions(test_python_backend PRIVATE
  BURNMARK_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
