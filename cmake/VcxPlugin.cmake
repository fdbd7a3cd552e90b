# vcx_add_plugin(<target> <file-name> SOURCES ...)
# Builds a run-time loadable plugin into lib/vcx/<file-name>.so (build and
# install trees alike). Plugins find libvcxcore one directory up.
function(vcx_add_plugin target file_name)
  cmake_parse_arguments(P "" "" "SOURCES;LIBS" ${ARGN})
  add_library(${target} MODULE ${P_SOURCES})
  target_link_libraries(${target} PRIVATE vcxcore ${P_LIBS})
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    OUTPUT_NAME ${file_name}
    LIBRARY_OUTPUT_DIRECTORY ${VCX_PLUGIN_OUTPUT_DIR}
    INSTALL_RPATH "$ORIGIN/.."
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  install(TARGETS ${target} LIBRARY DESTINATION ${VCX_INSTALL_PLUGIN_DIR})
endfunction()
