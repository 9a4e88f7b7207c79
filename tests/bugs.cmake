# The minimal programs of bugs.md (corpus/bugs/*.txt) replayed on the backends they name.
burnmark_test(test_bugs test_bugs.cpp)
target_link_libraries(test_bugs PRIVATE burnmark_registry burnmark_oracle burnmark_ir fmt::fmt)
target_compile_definitions(test_bugs PRIVATE BURNMARK_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
foreach(plugin onednn eigen)
  if(TARGET burnmark_plugin_${plugin})
    add_dependencies(test_bugs burnmark_plugin_${plugin})
  endif()
endforeach()
