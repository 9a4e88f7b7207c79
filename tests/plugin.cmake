# Tests of the plugin ABI, the loader and the in-tree plugins.

# plugin.h must stay valid C11 (no extensions): compiled on its own, pedantically.
add_library(burnmark_plugin_header_c OBJECT plugin_header_c.c)
target_include_directories(burnmark_plugin_header_c PRIVATE ${PROJECT_SOURCE_DIR}/include)
set_target_properties(burnmark_plugin_header_c PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
target_compile_options(burnmark_plugin_header_c PRIVATE -pedantic-errors)

# Shared objects the loader must reject (or, for bad_result, whose results it must reject; and
# misbehaving, which crashes, exits or hangs for the child-backend tests).
set(BURNMARK_PLUGIN_FIXTURE_DIR ${CMAKE_CURRENT_BINARY_DIR}/plugin_fixtures)
set(burnmark_plugin_fixtures)
foreach(fixture no_entry wrong_version v3_plugin layout_probe null_entry bad_result misbehaving)
  add_library(burnmark_fixture_${fixture} MODULE plugin_fixtures/${fixture}.c)
  target_include_directories(burnmark_fixture_${fixture} PRIVATE ${PROJECT_SOURCE_DIR}/include)
  set_target_properties(burnmark_fixture_${fixture} PROPERTIES
    PREFIX "" OUTPUT_NAME burnmark_${fixture} LIBRARY_OUTPUT_DIRECTORY ${BURNMARK_PLUGIN_FIXTURE_DIR}
    C_STANDARD 11 C_EXTENSIONS OFF)
  list(APPEND burnmark_plugin_fixtures burnmark_fixture_${fixture})
endforeach()

burnmark_test(test_plugin test_plugin.cpp $<TARGET_OBJECTS:burnmark_plugin_header_c>)
target_link_libraries(test_plugin PRIVATE burnmark_plugin_loader burnmark_ir fmt::fmt ${CMAKE_DL_LIBS})
target_compile_definitions(test_plugin PRIVATE
  BURNMARK_TEST_FIXTURE_DIR="${BURNMARK_PLUGIN_FIXTURE_DIR}"
  BURNMARK_TEST_PLUGIN_DIR="${PROJECT_BINARY_DIR}/plugins")
add_dependencies(test_plugin ${burnmark_plugin_fixtures})
if(TARGET burnmark_plugin_example)
  add_dependencies(test_plugin burnmark_plugin_example)
  target_compile_definitions(test_plugin PRIVATE BURNMARK_TEST_HAVE_EXAMPLE=1)
endif()
# The bit-for-bit test needs both forms of the reference.
if(TARGET burnmark_plugin_ref)
  add_dependencies(test_plugin burnmark_plugin_ref)
  target_link_libraries(test_plugin PRIVATE burnmark_ref)
  target_compile_definitions(test_plugin PRIVATE BURNMARK_TEST_HAVE_REF=1)
endif()
if(TARGET burnmark_gen)
  target_link_libraries(test_plugin PRIVATE burnmark_gen)
  target_compile_definitions(test_plugin PRIVATE BURNMARK_TEST_HAVE_GEN=1)
endif()
# A plugin's op list driving the generator, and the example plugin at IEEE special values.
if(TARGET burnmark_plugin_example AND TARGET burnmark_plugin_ref)
  burnmark_test(test_plugin_ops test_plugin_ops.cpp)
  target_link_libraries(test_plugin_ops PRIVATE burnmark_plugin_loader burnmark_config burnmark_ref
                                                burnmark_gen burnmark_ir fmt::fmt)
  add_dependencies(test_plugin_ops burnmark_plugin_example burnmark_plugin_ref)
endif()

# The planted-fault fixtures of tools/bench.sh against the real reference (plugins/planted).
if(TARGET burnmark_planted)
  burnmark_test(test_planted test_planted.cpp)
  target_link_libraries(test_planted PRIVATE burnmark_plugin_loader burnmark_ref burnmark_gen
                                             burnmark_oracle burnmark_ir fmt::fmt)
  add_dependencies(test_planted burnmark_planted)
endif()

# ABI v4: dtypes, strided leaves, per-op declarations, forward mode and H·v, against the real
# reference and the example and reference plugins.
if(TARGET burnmark_plugin_example AND TARGET burnmark_plugin_ref AND TARGET burnmark_gen)
  burnmark_test(test_plugin_v4 test_plugin_v4.cpp)
  target_link_libraries(test_plugin_v4 PRIVATE burnmark_plugin_loader burnmark_ref burnmark_gen
                                               burnmark_ir fmt::fmt ${CMAKE_DL_LIBS})
  target_compile_definitions(test_plugin_v4 PRIVATE
    BURNMARK_TEST_FIXTURE_DIR="${BURNMARK_PLUGIN_FIXTURE_DIR}")
  add_dependencies(test_plugin_v4 burnmark_plugin_example burnmark_plugin_ref
                   ${burnmark_plugin_fixtures})
endif()

# Plugins get the program's declared leaf layouts (issue 33): what the probe fixture receives,
# and the reference and example plugins bit-identical in every layout kind and dtype.
if(TARGET burnmark_plugin_example AND TARGET burnmark_plugin_ref AND TARGET burnmark_gen)
  burnmark_test(test_plugin_program_layouts test_plugin_program_layouts.cpp)
  target_link_libraries(test_plugin_program_layouts PRIVATE burnmark_plugin_loader burnmark_ref
                                                            burnmark_gen burnmark_ir fmt::fmt)
  target_compile_definitions(test_plugin_program_layouts PRIVATE
    BURNMARK_TEST_FIXTURE_DIR="${BURNMARK_PLUGIN_FIXTURE_DIR}")
  add_dependencies(test_plugin_program_layouts burnmark_plugin_example burnmark_plugin_ref
                   ${burnmark_plugin_fixtures})
endif()
