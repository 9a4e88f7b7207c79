# How a BurnMark plugin is linked, in one place for the in-tree plugins (plugins/CMakeLists.txt)
# and for plugins built against the installed package (BurnMarkConfig.cmake, which installs this
# file beside itself).
#
# burnmark_plugin_options(<target> <name>): makes the MODULE library <target> the plugin
# burnmark_<name>.so, the file name the loader looks for when BACKENDS names a plugin <name>.
# Only the entry symbol is exported, and bundled static libraries stay private, so a plugin's
# copy of (say) fmt never interposes on the host's.
function(burnmark_plugin_options target name)
  target_link_libraries(${target} PRIVATE BurnMark::plugin)
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    OUTPUT_NAME burnmark_${name}
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  target_link_options(${target} PRIVATE -Wl,--exclude-libs,ALL)
  # Every symbol resolved at link time, so a plugin cannot fail only when dlopen'd — except under
  # the sanitizers, whose runtime only the host executable carries.
  if(NOT BURNMARK_SANITIZE)
    target_link_options(${target} PRIVATE -Wl,--no-undefined)
  endif()
endfunction()
