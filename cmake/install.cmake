# What `cmake --install <build> --prefix P` puts under P (docs/install.md):
#   bin/                        burnmark and the libFuzzer targets
#   lib/burnmark/plugins/       the plugins built here (plugins/CMakeLists.txt installs them)
#   include/burnmark/           the plugin headers, self-contained: plugin.h, plugin_walk.h and
#                               the ops.def they include, nothing of the host's internals
#   share/burnmark/             the data files, laid out as in corpus/: known_bugs.txt,
#                               patches.txt and the fuzz targets' seed corpora
#   lib/cmake/BurnMark/         the CMake package: find_package(BurnMark) gives BurnMark::plugin,
#                               burnmark_add_plugin() and the installed programs' paths
include(CMakePackageConfigHelpers)

foreach(program burnmark fuzz_autograd fuzz_tensor_ops)
  if(TARGET ${program})
    install(TARGETS ${program} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()

# The headers a plugin includes, and what they include in turn; the out-of-tree build of the
# example plugin (tests/install.cmake) fails if this list misses one.
install(FILES include/burnmark/plugin/plugin.h include/burnmark/plugin/plugin_walk.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/burnmark/plugin)
install(FILES include/burnmark/ir/ops.def DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/burnmark/ir)

install(FILES corpus/known_bugs.txt corpus/patches.txt DESTINATION ${BURNMARK_INSTALL_DATADIR})
# The Python backends' server and runners (src/backends/python), found beside bin/ at run time.
install(FILES src/backends/python/burnmark_child.py src/backends/python/runner_common.py
              src/backends/python/runner_torch.py src/backends/python/runner_jax.py
        DESTINATION ${BURNMARK_INSTALL_DATADIR}/python)
install(DIRECTORY corpus/fuzz_autograd corpus/fuzz_autograd_bf16 corpus/fuzz_autograd_f16
                  corpus/fuzz_autograd_f64 corpus/fuzz_tensor_ops
        DESTINATION ${BURNMARK_INSTALL_DATADIR})

# The package. Relative install paths only, so a prefix chosen at install time (--prefix)
# works: BurnMarkConfig.cmake finds everything from its own location.
set(BURNMARK_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/BurnMark)
install(TARGETS burnmark_plugin_api EXPORT BurnMarkTargets)
install(EXPORT BurnMarkTargets NAMESPACE BurnMark:: DESTINATION ${BURNMARK_CMAKEDIR})
configure_package_config_file(cmake/BurnMarkConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/BurnMarkConfig.cmake
                              INSTALL_DESTINATION ${BURNMARK_CMAKEDIR}
                              PATH_VARS CMAKE_INSTALL_BINDIR BURNMARK_INSTALL_PLUGINDIR
                                        BURNMARK_INSTALL_DATADIR CMAKE_INSTALL_INCLUDEDIR)
# A plugin speaks the ABI of the plugin.h it was built against, and the loader refuses another
# (BURNMARK_PLUGIN_ABI_VERSION); the ABI may change between minor releases, so find_package asking
# for 0.1 accepts 0.1.x only.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/BurnMarkConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/BurnMarkConfig.cmake
              ${PROJECT_BINARY_DIR}/BurnMarkConfigVersion.cmake cmake/BurnMarkPlugin.cmake
        DESTINATION ${BURNMARK_CMAKEDIR})
