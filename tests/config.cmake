# The environment knobs: defaults, parsing, one-line errors, mapping onto generator options.
burnmark_test(test_config test_config.cpp)
target_link_libraries(test_config PRIVATE burnmark_config)
target_compile_definitions(test_config PRIVATE BURNMARK_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
