# Open MPI's OpenSHMEM (oshcc, oshrun): only SHMEM programs run on it; vcx's
# own tool job stays on MPICH. Without oshcc the SHMEM interceptor and
# translator, their test programs and tests are left out.
find_program(VCX_OSHCC NAMES oshcc shmemcc DOC "Open MPI's OpenSHMEM C compiler wrapper")
find_program(VCX_OSHRUN NAMES oshrun shmemrun DOC "Open MPI's OpenSHMEM launcher")
set(VCX_HAVE_SHMEM OFF CACHE INTERNAL "OpenSHMEM support is built")
if(VCX_OSHCC AND VCX_OSHRUN)
  execute_process(COMMAND ${VCX_OSHCC} --showme:incdirs OUTPUT_VARIABLE incdirs
                  OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc1)
  execute_process(COMMAND ${VCX_OSHCC} --showme:libdirs OUTPUT_VARIABLE libdirs
                  OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc2)
  separate_arguments(incdirs UNIX_COMMAND "${incdirs}")
  separate_arguments(libdirs UNIX_COMMAND "${libdirs}")
  set(header_dir "")
  foreach(dir IN LISTS incdirs)
    if(EXISTS "${dir}/shmem.h" AND EXISTS "${dir}/pshmem.h")
      set(header_dir "${dir}")
      break()
    endif()
  endforeach()
  find_library(VCX_LIBOSHMEM NAMES oshmem HINTS ${libdirs} NO_DEFAULT_PATH)
  if(rc1 EQUAL 0 AND rc2 EQUAL 0 AND header_dir AND VCX_LIBOSHMEM)
    set(VCX_HAVE_SHMEM ON CACHE INTERNAL "OpenSHMEM support is built")
    set(VCX_SHMEM_INCLUDE_DIRS "${incdirs}" CACHE INTERNAL "Open MPI's OpenSHMEM include dirs")
    set(VCX_SHMEM_HEADER_DIR "${header_dir}" CACHE INTERNAL "The directory of shmem.h")
    message(STATUS "vcx: OpenSHMEM: ${VCX_OSHCC}, ${VCX_OSHRUN}, ${VCX_LIBOSHMEM}")
  else()
    message(STATUS "vcx: ${VCX_OSHCC} gives no usable shmem.h and liboshmem; "
                   "OpenSHMEM support is not built (scripts/install-deps installs it)")
  endif()
else()
  message(STATUS "vcx: oshcc/oshrun (Open MPI) not found; OpenSHMEM support is not built "
                 "(scripts/install-deps installs libopenmpi-dev and openmpi-bin)")
endif()
