# Backends in a child process (include/burnmark/backends/process.h): the burnmark CLI is the
# child's server, the misbehaving fixture plugin (plugin.cmake) crashes and hangs on request.
burnmark_test(test_child_backend test_child_backend.cpp)
target_link_libraries(test_child_backend PRIVATE burnmark_registry burnmark_oracle burnmark_ir fmt::fmt)
add_dependencies(test_child_backend burnmark burnmark_fixture_misbehaving)
target_compile_definitions(test_child_backend PRIVATE
  BURNMARK_CLI_PATH="$<TARGET_FILE:burnmark>"
  BURNMARK_TEST_MISBEHAVING_PLUGIN="$<TARGET_FILE:burnmark_fixture_misbehaving>"
  BURNMARK_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")

# Version-differential runs: the other LibTorch release's burnmark is looked for at its preset's
# default path only (no build dependency on another tree: absent, those tests skip).
burnmark_test(test_version_diff test_version_diff.cpp)
target_link_libraries(test_version_diff PRIVATE burnmark_registry burnmark_oracle burnmark_ir fmt::fmt)
add_dependencies(test_version_diff burnmark)
target_compile_definitions(test_version_diff PRIVATE
  BURNMARK_CLI_PATH="$<TARGET_FILE:burnmark>"
  BURNMARK_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
