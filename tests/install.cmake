# The installation end to end (tests/install_test.sh): `cmake --install` to a scratch prefix, the
# example plugin built out of the tree against find_package(BurnMark) with this build's compiler,
# then the installed burnmark and fuzz_autograd run with that plugin. It installs what the build
# holds, so it runs after a full build (the default target), as the rest of the suite does.
if(TARGET burnmark AND TARGET fuzz_autograd AND TARGET burnmark_plugin_example)
  add_test(NAME Install.OutOfTreePluginAgainstTheInstalledPackage
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/install_test.sh ${CMAKE_COMMAND}
                   ${CMAKE_GENERATOR} ${CMAKE_CXX_COMPILER} ${PROJECT_BINARY_DIR}
                   ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/install_test)
  set_tests_properties(Install.OutOfTreePluginAgainstTheInstalledPackage PROPERTIES
                       LABELS "install;plugin" TIMEOUT 600)
endif()
