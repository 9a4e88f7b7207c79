# The `burnmark` binary end to end (invoked as a process) and the BACKENDS registry.
burnmark_test(test_cli test_cli.cpp)
target_link_libraries(test_cli PRIVATE burnmark_cli_common burnmark_registry burnmark_gen burnmark_ir fmt::fmt)
add_dependencies(test_cli burnmark)
target_compile_definitions(test_cli PRIVATE BURNMARK_CLI_PATH="$<TARGET_FILE:burnmark>"
                                            BURNMARK_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
                                            BURNMARK_TEST_PROJECT_VERSION="${PROJECT_VERSION}")
# A plugin that returns malformed results gives `run` a real divergence to report. The fixture
# is declared by plugin.cmake, which is included after this file: look for it once the whole
# directory has been read.
function(burnmark_cli_use_bad_plugin)
  if(TARGET burnmark_fixture_bad_result)
    add_dependencies(test_cli burnmark_fixture_bad_result)
    target_compile_definitions(test_cli PRIVATE
      BURNMARK_TEST_BAD_PLUGIN="$<TARGET_FILE:burnmark_fixture_bad_result>")
  endif()
  if(TARGET burnmark_fixture_misbehaving)
    add_dependencies(test_cli burnmark_fixture_misbehaving)
    target_compile_definitions(test_cli PRIVATE
      BURNMARK_TEST_MISBEHAVING_PLUGIN="$<TARGET_FILE:burnmark_fixture_misbehaving>")
  endif()
endfunction()
cmake_language(DEFER CALL burnmark_cli_use_bad_plugin)
function(burnmark_cli_use_example_plugin)
  if(TARGET burnmark_plugin_example)
    add_dependencies(test_cli burnmark_plugin_example)
    target_compile_definitions(test_cli PRIVATE
      BURNMARK_TEST_EXAMPLE_PLUGIN="$<TARGET_FILE:burnmark_plugin_example>")
  endif()
endfunction()
cmake_language(DEFER CALL burnmark_cli_use_example_plugin)
