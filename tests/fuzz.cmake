# The libFuzzer targets as processes: clean runs over the seed corpus, a panic-mode finding that
# leaves a crash artifact, continuous mode going on, and a bad knob stopping at start-up.
burnmark_test(test_fuzz test_fuzz.cpp)
target_link_libraries(test_fuzz PRIVATE burnmark_cli_common burnmark_ir)
add_dependencies(test_fuzz fuzz_autograd fuzz_tensor_ops burnmark)
target_compile_definitions(test_fuzz PRIVATE
  BURNMARK_FUZZ_AUTOGRAD="$<TARGET_FILE:fuzz_autograd>"
  BURNMARK_FUZZ_TENSOR_OPS="$<TARGET_FILE:fuzz_tensor_ops>"
  BURNMARK_CLI_PATH="$<TARGET_FILE:burnmark>"
  BURNMARK_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
function(burnmark_fuzz_use_bad_plugin)
  if(TARGET burnmark_fixture_bad_result)
    add_dependencies(test_fuzz burnmark_fixture_bad_result burnmark_fixture_misbehaving)
    target_compile_definitions(test_fuzz PRIVATE
      BURNMARK_TEST_BAD_PLUGIN="$<TARGET_FILE:burnmark_fixture_bad_result>"
      BURNMARK_TEST_MISBEHAVING_PLUGIN="$<TARGET_FILE:burnmark_fixture_misbehaving>")
  endif()
endfunction()
cmake_language(DEFER CALL burnmark_fuzz_use_bad_plugin)
function(burnmark_fuzz_use_example_plugin)
  if(TARGET burnmark_plugin_example)
    add_dependencies(test_fuzz burnmark_plugin_example)
    target_compile_definitions(test_fuzz PRIVATE
      BURNMARK_TEST_EXAMPLE_PLUGIN="$<TARGET_FILE:burnmark_plugin_example>")
  endif()
endfunction()
cmake_language(DEFER CALL burnmark_fuzz_use_example_plugin)

# The input-handling target under AddressSanitizer and UBSan (fuzz/CMakeLists.txt): a fixed
# number of inputs from a fixed seed, starting from every text program in the repository; new
# inputs go to a scratch directory, never into the source tree.
add_test(NAME FuzzText.ParserGeneratorAndEncoderUnderSanitizers
         COMMAND sh -c "rm -rf fuzz_text_corpus && mkdir fuzz_text_corpus && \"$0\" -runs=5000 -seed=1 -max_len=4096 fuzz_text_corpus \"$1\" \"$2\""
                 $<TARGET_FILE:fuzz_text> ${PROJECT_SOURCE_DIR}/corpus/programs ${PROJECT_SOURCE_DIR}/corpus/bugs
         WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})

# The semantic features the fuzz targets hand libFuzzer (fuzz/semantic_features.h), as a pure
# function of a program and the real reference's outcome on it.
burnmark_test(test_semantic_features test_semantic_features.cpp)
target_link_libraries(test_semantic_features PRIVATE burnmark_fuzz_semantic burnmark_ref burnmark_ir)
