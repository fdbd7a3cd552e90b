#include "launcher/program_model.h"

#include <elf.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string_view>

namespace vcx::launcher {
namespace {

template <class Ehdr, class Shdr, class Dyn>
std::vector<std::string> needed_of(const std::string& bytes, bool* readable) {
  std::vector<std::string> out;
  auto fits = [&](std::uint64_t off, std::uint64_t len) {
    return off <= bytes.size() && len <= bytes.size() - off;
  };
  if (!fits(0, sizeof(Ehdr))) return out;
  Ehdr eh;
  std::memcpy(&eh, bytes.data(), sizeof eh);
  if (eh.e_shentsize != sizeof(Shdr) || !fits(eh.e_shoff, std::uint64_t{eh.e_shnum} * sizeof(Shdr)))
    return out;
  std::vector<Shdr> sections(eh.e_shnum);
  if (eh.e_shnum) std::memcpy(sections.data(), bytes.data() + eh.e_shoff, eh.e_shnum * sizeof(Shdr));
  *readable = true;
  for (const Shdr& s : sections) {
    if (s.sh_type != SHT_DYNAMIC || s.sh_link >= sections.size() || !fits(s.sh_offset, s.sh_size))
      continue;
    const Shdr& strtab = sections[s.sh_link];
    if (!fits(strtab.sh_offset, strtab.sh_size)) continue;
    for (std::uint64_t off = 0; off + sizeof(Dyn) <= s.sh_size; off += sizeof(Dyn)) {
      Dyn d;
      std::memcpy(&d, bytes.data() + s.sh_offset + off, sizeof d);
      if (d.d_tag == DT_NULL) break;
      if (d.d_tag != DT_NEEDED || d.d_un.d_val >= strtab.sh_size) continue;
      const char* name = bytes.data() + strtab.sh_offset + d.d_un.d_val;
      out.emplace_back(name, ::strnlen(name, strtab.sh_size - d.d_un.d_val));
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> elf_needed(const std::string& path, bool* readable) {
  *readable = false;
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  char ident[EI_NIDENT] = {};
  if (!in.read(ident, EI_NIDENT) || std::memcmp(ident, ELFMAG, SELFMAG) != 0 ||
      ident[EI_DATA] != ELFDATA2LSB)
    return {};
  in.seekg(0);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (ident[EI_CLASS] == ELFCLASS64) return needed_of<Elf64_Ehdr, Elf64_Shdr, Elf64_Dyn>(bytes, readable);
  if (ident[EI_CLASS] == ELFCLASS32) return needed_of<Elf32_Ehdr, Elf32_Shdr, Elf32_Dyn>(bytes, readable);
  return {};
}

bool is_openmpi_libmpi(const std::string& needed) {
  constexpr std::string_view prefix = "libmpi.so.";
  if (needed.rfind(prefix, 0) != 0) return false;
  int major = 0;
  std::size_t i = prefix.size();
  if (i == needed.size()) return false;
  for (; i < needed.size() && needed[i] != '.'; ++i) {
    if (needed[i] < '0' || needed[i] > '9' || major > 1000) return false;
    major = major * 10 + (needed[i] - '0');
  }
  return major >= 20;
}

ProgramModel program_model(const std::string& path) {
  bool readable = false;
  const std::vector<std::string> needed = elf_needed(path, &readable);
  if (!readable) return ProgramModel::Unknown;
  bool shmem = false, openmpi_mpi = false;
  for (const std::string& lib : needed) {
    if (lib.rfind("liboshmem.so", 0) == 0) shmem = true;
    if (is_openmpi_libmpi(lib)) openmpi_mpi = true;
  }
  if (shmem) return openmpi_mpi ? ProgramModel::Hybrid : ProgramModel::Shmem;
  return openmpi_mpi ? ProgramModel::OpenMpiMpi : ProgramModel::Mpi;
}

}  // namespace vcx::launcher
