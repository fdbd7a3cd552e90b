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
    # shmemx.h and pshmemx.h: Open MPI's extensions, intercepted as well.
    if(EXISTS "${dir}/shmem.h" AND EXISTS "${dir}/pshmem.h" AND EXISTS "${dir}/shmemx.h"
       AND EXISTS "${dir}/pshmemx.h")
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
    message(STATUS "vcx: ${VCX_OSHCC} gives no usable shmem.h, shmemx.h and liboshmem; "
                   "OpenSHMEM support is not built (scripts/install-deps installs it)")
  endif()
else()
  message(STATUS "vcx: oshcc/oshrun (Open MPI) not found; OpenSHMEM support is not built "
                 "(scripts/install-deps installs libopenmpi-dev and openmpi-bin)")
endif()

# MPI+OpenSHMEM programs run on Open MPI's libmpi beside liboshmem: their
# interceptor (translators/hybrid) compiles the MPI wrappers against Open
# MPI's mpi.h, which oshcc's include directories hold.
set(VCX_HAVE_HYBRID OFF CACHE INTERNAL "The MPI+OpenSHMEM interceptor is built")
if(VCX_HAVE_SHMEM)
  set(ompi_header_dir "")
  foreach(dir IN LISTS VCX_SHMEM_INCLUDE_DIRS)
    if(EXISTS "${dir}/mpi.h")
      set(ompi_header_dir "${dir}")
      break()
    endif()
  endforeach()
  find_library(VCX_OMPI_LIBMPI NAMES mpi HINTS ${libdirs} NO_DEFAULT_PATH)
  if(ompi_header_dir AND VCX_OMPI_LIBMPI)
    set(VCX_HAVE_HYBRID ON CACHE INTERNAL "The MPI+OpenSHMEM interceptor is built")
    set(VCX_OMPI_HEADER_DIR "${ompi_header_dir}" CACHE INTERNAL "Open MPI's mpi.h directory")
    message(STATUS "vcx: MPI+OpenSHMEM programs: ${VCX_OMPI_HEADER_DIR}/mpi.h, ${VCX_OMPI_LIBMPI}")
  else()
    message(STATUS "vcx: no mpi.h and libmpi beside Open MPI's OpenSHMEM; the interceptor of "
                   "MPI+OpenSHMEM programs is not built")
  endif()
endif()
