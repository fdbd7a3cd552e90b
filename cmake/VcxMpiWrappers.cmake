# vcx_generate_mpi_wrappers(<out-dir> INCLUDE_DIR <dir> LIBRARY <libmpi>
#                           [DEFINES <NAME=VALUE>...] SOURCES_VAR <var> JSON_VAR <var>)
#
# Runs translators/mpi/intercept/gen_wrappers.py for the MPI headers in
# INCLUDE_DIR and the library LIBRARY (the one the interceptor links): the
# wrappers generated from wrappers.tsv and the call table, and a
# pass-through for every other MPI function the hand-written wrappers do not
# define. Sets SOURCES_VAR to the two generated sources and JSON_VAR to the
# description of every function. Used by the MPI interceptor (MPICH) and the
# MPI+OpenSHMEM interceptor (Open MPI).
find_package(Python3 REQUIRED COMPONENTS Interpreter)

set(VCX_MPI_INTERCEPT_DIR ${CMAKE_CURRENT_LIST_DIR}/../translators/mpi/intercept)

function(vcx_generate_mpi_wrappers out_dir)
  cmake_parse_arguments(ARG "" "INCLUDE_DIR;LIBRARY;SOURCES_VAR;JSON_VAR" "DEFINES" ${ARGN})
  set(here ${VCX_MPI_INTERCEPT_DIR})
  file(GLOB hand_written CONFIGURE_DEPENDS ${here}/wrappers_*.cpp)
  set(nm_tool "${CMAKE_NM}")
  if(NOT nm_tool)
    set(nm_tool nm)
  endif()
  set(define_args "")
  foreach(d IN LISTS ARG_DEFINES)
    list(APPEND define_args --define ${d})
  endforeach()
  set(header_deps ${ARG_INCLUDE_DIR}/mpi.h)
  foreach(h mpi_proto.h mpio.h)
    if(EXISTS ${ARG_INCLUDE_DIR}/${h})
      list(APPEND header_deps ${ARG_INCLUDE_DIR}/${h})
    endif()
  endforeach()
  set(reporting ${out_dir}/generated_reporting.cpp)
  set(passthrough ${out_dir}/generated_passthrough.cpp)
  set(json ${out_dir}/mpi_functions.json)
  add_custom_command(
    OUTPUT ${reporting} ${passthrough} ${json}
    COMMAND ${Python3_EXECUTABLE} -B ${here}/gen_wrappers.py
            --include-dir ${ARG_INCLUDE_DIR}
            --library ${ARG_LIBRARY}
            --nm ${nm_tool}
            ${define_args}
            --table ${here}/wrappers.tsv
            --calls ${here}/../common/mpi_events.h
            --out-reporting ${reporting}
            --out-cpp ${passthrough}
            --out-json ${json}
            --hand-written ${hand_written}
    DEPENDS ${here}/gen_wrappers.py ${here}/mpi_headers.py ${here}/reporting_wrappers.py
            ${here}/wrappers.tsv ${here}/../common/mpi_events.h
            ${hand_written} ${header_deps} ${ARG_LIBRARY}
    COMMENT "Generating MPI wrappers from wrappers.tsv and ${ARG_INCLUDE_DIR}/mpi.h"
    VERBATIM)
  set(${ARG_SOURCES_VAR} ${reporting} ${passthrough} PARENT_SCOPE)
  set(${ARG_JSON_VAR} ${json} PARENT_SCOPE)
endfunction()
