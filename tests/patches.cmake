# Fix-and-continue patches (docs/patches.md): the patch table, BURNMARK_PATCHES, the loader's
# set_patches handshake, the Eigen plugin's patches and `burnmark patches check` for real.
burnmark_test(test_patches test_patches.cpp)
target_link_libraries(test_patches PRIVATE burnmark_patch_gate burnmark_config burnmark_registry
                                           burnmark_oracle burnmark_ir fmt::fmt)
target_include_directories(test_patches PRIVATE ${PROJECT_SOURCE_DIR}/tests)
add_dependencies(test_patches burnmark)
target_compile_definitions(test_patches PRIVATE BURNMARK_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
                                                BURNMARK_CLI_PATH="$<TARGET_FILE:burnmark>")
foreach(plugin eigen onednn example)
  if(TARGET burnmark_plugin_${plugin})
    add_dependencies(test_patches burnmark_plugin_${plugin})
  endif()
endforeach()
if(TARGET burnmark_plugin_eigen)
  target_compile_definitions(test_patches PRIVATE BURNMARK_TEST_HAVE_EIGEN=1)
endif()
if(TARGET burnmark_plugin_onednn)
  target_compile_definitions(test_patches PRIVATE BURNMARK_TEST_HAVE_ONEDNN=1)
endif()
if(TARGET burnmark_plugin_example)
  target_compile_definitions(test_patches PRIVATE BURNMARK_TEST_HAVE_EXAMPLE=1)
endif()

# CI runs the gate (issue 14): `burnmark patches check` over the whole table, as a user runs it,
# and no patch may fail. "Off diverges" is asked for where the bug program's seen-on header names
# this processor's platform, so a library fixed upstream (or a patch that never did anything)
# turns the suite red there; a row seen on some ISAs only (onednn-log-one,
# onednn-addmm-alpha-zero-overflow, ...) is `not-here` on the others, not a failure. "On agrees"
# is asked for everywhere. Every patch so far is a plugin's, so it needs the plugins it patches
# (Eigen's and oneDNN's).
if(TARGET burnmark_plugin_eigen AND TARGET burnmark_plugin_onednn)
  add_test(NAME patches_gate
           COMMAND env -u BACKENDS -u BURNMARK_PATCHES -u BURNMARK_TOLERANCE
                   $<TARGET_FILE:burnmark> patches check)
  set_tests_properties(patches_gate PROPERTIES
    ENVIRONMENT "BURNMARK_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
    FAIL_REGULAR_EXPRESSION "PATCH [^ ]+ [^ ]+ (fail|error):")
endif()
