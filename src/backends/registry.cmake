# The backend registry: BACKENDS spec -> backends (built-ins, dlopen'd plugins, and any of them in
# a child process; the child's server loop lives here too, since it builds its backend from a
# BACKENDS entry).
add_library(burnmark_registry STATIC ${CMAKE_CURRENT_LIST_DIR}/registry.cpp
                                     ${CMAKE_CURRENT_LIST_DIR}/process/child_backend.cpp
                                     ${CMAKE_CURRENT_LIST_DIR}/process/serve.cpp
                                     ${CMAKE_CURRENT_LIST_DIR}/process/wire.cpp
                                     ${CMAKE_CURRENT_LIST_DIR}/python/python_backend.cpp
                                     ${CMAKE_CURRENT_LIST_DIR}/python/torch_source.cpp)
target_include_directories(burnmark_registry PUBLIC ${PROJECT_SOURCE_DIR}/include)
target_link_libraries(burnmark_registry PUBLIC burnmark_ref burnmark_libtorch burnmark_plugin_loader burnmark_oracle
                                        PRIVATE burnmark_config burnmark_repro burnmark_python_source fmt::fmt)
# Where `libtorch@RELEASE` looks for a burnmark built against RELEASE when no BURNMARK_LIBTORCH_*
# names one: the presets' build trees of this source tree.
target_compile_definitions(burnmark_registry PRIVATE BURNMARK_BUILD_ROOT="${PROJECT_SOURCE_DIR}/build")
# The Python backends (src/backends/python): their server script in this source tree (an install
# has it under share/burnmark/python), and the checkout's venvs their interpreters default to.
target_compile_definitions(burnmark_registry PRIVATE
                           BURNMARK_PYTHON_DIR="${CMAKE_CURRENT_LIST_DIR}/python"
                           BURNMARK_DEPS_DIR="${PROJECT_SOURCE_DIR}/.deps")
