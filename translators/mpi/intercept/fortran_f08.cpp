// Fortran 2008 bindings (use mpi_f08). MPICH's mpif.h and `use mpi`
// bindings call the C entry points by their MPI_ names, so a preloaded
// interceptor sees them like C calls. Its mpi_f08 bindings do not: every
// routine without a choice buffer (MPI_Init, MPI_Wait, MPI_Barrier,
// MPI_Comm_dup, MPI_Win_fence, ...) calls PMPI_ directly, which would leave
// an mpi_f08 program unanalysed without a word. So when the interceptor is
// loaded, it points the Fortran library's references to PMPI_X at its own
// MPI_X, wherever it defines one: the f08 bindings then reach the C layer
// exactly as the others do (the wrapper calls PMPI_X with the binding's
// arguments). Only the Fortran library's own relocations change; every other
// caller of PMPI_X still reaches MPI.
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

#include "runtime.h"

namespace {

using vcx::mpi_intercept::is_fortran_library;

#if defined(__x86_64__)
constexpr std::uint32_t kJumpSlot = R_X86_64_JUMP_SLOT;
constexpr std::uint32_t kGlobDat = R_X86_64_GLOB_DAT;
constexpr bool kSupported = true;
#elif defined(__aarch64__)
constexpr std::uint32_t kJumpSlot = R_AARCH64_JUMP_SLOT;
constexpr std::uint32_t kGlobDat = R_AARCH64_GLOB_DAT;
constexpr bool kSupported = true;
#else
constexpr std::uint32_t kJumpSlot = 0;
constexpr std::uint32_t kGlobDat = 0;
constexpr bool kSupported = false;
#endif

struct Self {
  void* handle = nullptr;
  const void* base = nullptr;  // load address of the interceptor
};

// The interceptor's own MPI_X for "PMPI_X", or nullptr. dlsym also searches
// the interceptor's dependencies, so the hit must lie in the interceptor.
void* own_wrapper(const Self& self, const char* pmpi_name) {
  if (std::strncmp(pmpi_name, "PMPI_", 5) != 0) return nullptr;
  void* fn = dlsym(self.handle, pmpi_name + 1);
  Dl_info info{};
  if (!fn || !dladdr(fn, &info) || info.dli_fbase != self.base) return nullptr;
  return fn;
}

// Loaded addresses in the dynamic section: glibc relocates them in place,
// other loaders may leave them relative to the load address.
template <class T>
T* dyn_ptr(const dl_phdr_info* lib, ElfW(Addr) value) {
  if (value < lib->dlpi_addr) value += lib->dlpi_addr;
  return reinterpret_cast<T*>(value);
}

struct Redirected {
  const Self* self;
  int libraries = 0;
  int slots = 0;
};

// Writes fn into a GOT slot; slots under RELRO are made writable for the
// store and read-only again after it.
void patch_slot(void** slot, void* fn, bool in_relro) {
  if (!in_relro) {
    *slot = fn;
    return;
  }
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  auto* start = reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(slot) & ~(page - 1));
  if (mprotect(start, page, PROT_READ | PROT_WRITE) != 0) return;
  *slot = fn;
  mprotect(start, page, PROT_READ);
}

void redirect_relocations(const dl_phdr_info* lib, const ElfW(Rela) * rela, std::size_t bytes,
                          const ElfW(Sym) * symtab, const char* strtab, Redirected* out) {
  ElfW(Addr) relro_begin = 0, relro_end = 0;
  for (int i = 0; i < lib->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = lib->dlpi_phdr[i];
    if (ph.p_type == PT_GNU_RELRO) {
      relro_begin = lib->dlpi_addr + ph.p_vaddr;
      relro_end = relro_begin + ph.p_memsz;
    }
  }
  for (std::size_t i = 0; i < bytes / sizeof(ElfW(Rela)); ++i) {
    const std::uint32_t type = ELF64_R_TYPE(rela[i].r_info);
    if (type != kJumpSlot && type != kGlobDat) continue;
    const char* name = strtab + symtab[ELF64_R_SYM(rela[i].r_info)].st_name;
    void* fn = own_wrapper(*out->self, name);
    if (!fn) continue;
    const ElfW(Addr) at = lib->dlpi_addr + rela[i].r_offset;
    patch_slot(reinterpret_cast<void**>(at), fn, at >= relro_begin && at < relro_end);
    ++out->slots;
  }
}

int visit_library(dl_phdr_info* lib, std::size_t, void* data) {
  auto* out = static_cast<Redirected*>(data);
  if (!lib->dlpi_name || !is_fortran_library(lib->dlpi_name)) return 0;
  ++out->libraries;
  const ElfW(Dyn)* dyn = nullptr;
  for (int i = 0; i < lib->dlpi_phnum; ++i)
    if (lib->dlpi_phdr[i].p_type == PT_DYNAMIC)
      dyn = reinterpret_cast<const ElfW(Dyn)*>(lib->dlpi_addr + lib->dlpi_phdr[i].p_vaddr);
  if (!dyn) return 0;
  const ElfW(Sym)* symtab = nullptr;
  const char* strtab = nullptr;
  const ElfW(Rela)* jmprel = nullptr;
  const ElfW(Rela)* rela = nullptr;
  std::size_t jmprel_bytes = 0, rela_bytes = 0;
  bool plt_is_rela = true;
  for (; dyn->d_tag != DT_NULL; ++dyn) {
    switch (dyn->d_tag) {
      case DT_SYMTAB: symtab = dyn_ptr<const ElfW(Sym)>(lib, dyn->d_un.d_ptr); break;
      case DT_STRTAB: strtab = dyn_ptr<const char>(lib, dyn->d_un.d_ptr); break;
      case DT_JMPREL: jmprel = dyn_ptr<const ElfW(Rela)>(lib, dyn->d_un.d_ptr); break;
      case DT_PLTRELSZ: jmprel_bytes = dyn->d_un.d_val; break;
      case DT_PLTREL: plt_is_rela = dyn->d_un.d_val == DT_RELA; break;
      case DT_RELA: rela = dyn_ptr<const ElfW(Rela)>(lib, dyn->d_un.d_ptr); break;
      case DT_RELASZ: rela_bytes = dyn->d_un.d_val; break;
      default: break;
    }
  }
  if (!symtab || !strtab) return 0;
  // Calls go through the PLT (lazy binding) or, when the library was linked
  // without one, straight through GOT entries.
  if (jmprel && plt_is_rela) redirect_relocations(lib, jmprel, jmprel_bytes, symtab, strtab, out);
  if (rela) redirect_relocations(lib, rela, rela_bytes, symtab, strtab, out);
  return 0;
}

// Runs when the interceptor is loaded: after every library of the program
// has been relocated, before the program's first MPI call.
__attribute__((constructor)) void redirect_fortran_f08_bindings() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&redirect_fortran_f08_bindings), &info) || !info.dli_fname)
    return;
  Self self;
  self.handle = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  self.base = info.dli_fbase;
  if (!self.handle) return;
  Redirected out{&self};
  if (kSupported) {
    dl_iterate_phdr(&visit_library, &out);
  } else {
    // Only say so when a Fortran library is there to be missed.
    dl_iterate_phdr(
        [](dl_phdr_info* lib, std::size_t, void* data) {
          if (lib->dlpi_name && is_fortran_library(lib->dlpi_name))
            ++static_cast<Redirected*>(data)->libraries;
          return 0;
        },
        &out);
    if (out.libraries > 0)
      std::fprintf(stderr,
                   "vcx: calls through MPICH's mpi_f08 bindings are not analysed on this "
                   "architecture (use mpif.h or `use mpi`)\n");
  }
  dlclose(self.handle);
}

}  // namespace
