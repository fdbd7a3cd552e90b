// Which programming model a program is built for, read from its ELF
// dynamic section (the libraries it names directly, DT_NEEDED): a program
// linked with Open MPI's liboshmem is an OpenSHMEM program and runs under
// oshrun, and if it links Open MPI's libmpi as well (it calls MPI: the
// linker drops libraries nothing is taken from) an MPI+OpenSHMEM program;
// a program linked with Open MPI's libmpi alone is an MPI program built
// with Open MPI, which vcx does not run; anything else is taken for an MPI
// (MPICH) program.
#pragma once

#include <string>
#include <vector>

namespace vcx::launcher {

enum class ProgramModel { Unknown, Mpi, Shmem, Hybrid, OpenMpiMpi };

// Whether a DT_NEEDED entry names Open MPI's libmpi: "libmpi.so.<major>"
// with major 20 or more (Open MPI's is 40 since 3.0; MPICH, where it is
// called libmpi and not libmpich, has 12).
bool is_openmpi_libmpi(const std::string& needed);

// The DT_NEEDED entries of an ELF file, in order; `*readable` says whether
// the file was an ELF file at all (a script is not).
std::vector<std::string> elf_needed(const std::string& path, bool* readable);

// Unknown when the file cannot be read as ELF.
ProgramModel program_model(const std::string& path);

}  // namespace vcx::launcher
