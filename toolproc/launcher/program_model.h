// Which programming model a program is built for, read from its ELF
// dynamic section (the libraries it names directly, DT_NEEDED): a program
// linked with Open MPI's liboshmem is an OpenSHMEM program and runs under
// oshrun; anything else is taken for an MPI (MPICH) program.
#pragma once

#include <string>
#include <vector>

namespace vcx::launcher {

enum class ProgramModel { Unknown, Mpi, Shmem };

// The DT_NEEDED entries of an ELF file, in order; `*readable` says whether
// the file was an ELF file at all (a script is not).
std::vector<std::string> elf_needed(const std::string& path, bool* readable);

// Unknown when the file cannot be read as ELF.
ProgramModel program_model(const std::string& path);

}  // namespace vcx::launcher
