# MPICH, named explicitly: Open MPI may be installed beside it and own the
# generic mpi.h / mpicc alternatives. Everything MPI in vcx builds against
# MPICH unless a target says otherwise.
pkg_check_modules(MPICH REQUIRED IMPORTED_TARGET mpich)
add_library(vcx::mpich ALIAS PkgConfig::MPICH)

find_program(VCX_MPIEXEC NAMES mpiexec.mpich mpiexec.hydra REQUIRED
  DOC "MPICH's mpiexec (hydra)")
find_program(VCX_MPICC NAMES mpicc.mpich REQUIRED DOC "MPICH's C compiler wrapper")
find_program(VCX_MPIF90 NAMES mpif90.mpich mpifort.mpich DOC "MPICH's Fortran compiler wrapper")
message(STATUS "vcx: MPICH include dirs: ${MPICH_INCLUDE_DIRS}; mpiexec: ${VCX_MPIEXEC}")
