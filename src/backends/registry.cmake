# The backend registry: BACKENDS spec -> backends (built-ins, dlopen'd plugins, and any of them in
# a child process; the child's server loop lives here too, since it builds its backend from a
# BACKENDS entry).
add_library(burnmark_registry STATIC ${CMAKE_CURRENT_LIST_DIR}/registry.cpp
                                     ${CMAKE_CURRENT_LIST_DIR}/process/child_backend.cpp
                                     ${CMAKE_CURRENT_LIST_DIR}/process/serve.cpp
                                     ${CMAKE_CURRENT_LIST_DIR}/process/wire.cpp)
target_include_directories(burnmark_registry PUBLIC ${PROJECT_SOURCE_DIR}/include)
target_link_libraries(burnmark_registry PUBLIC burnmark_ref burnmark_libtorch burnmark_plugin_loader burnmark_oracle
                                        PRIVATE burnmark_config fmt::fmt)
# Where `libtorch@RELEASE` looks for a burnmark built against RELEASE when no BURNMARK_LIBTORCH_*
# names one: the presets' build trees of this source tree.
target_compile_definitions(burnmark_registry PRIVATE BURNMARK_BUILD_ROOT="${PROJECT_SOURCE_DIR}/build")
