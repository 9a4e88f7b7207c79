# The backend registry: BACKENDS spec -> backends (built-ins and dlopen'd plugins).
add_library(burnmark_registry STATIC ${CMAKE_CURRENT_LIST_DIR}/registry.cpp)
target_include_directories(burnmark_registry PUBLIC ${PROJECT_SOURCE_DIR}/include)
target_link_libraries(burnmark_registry PUBLIC burnmark_ref burnmark_libtorch burnmark_plugin_loader
                                        PRIVATE fmt::fmt)
