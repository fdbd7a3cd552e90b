#include "vcx/symbolizer.h"

#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace vcx {

std::string process_maps(std::int64_t pid) {
  if (pid <= 0) return "";
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  if (!in) return "";
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

namespace {

// libdwfl keeps a pointer to the callbacks for the life of the session.
// Objects are opened by the paths in the maps text; debug info is looked up
// next to them, in .debug/ and in /usr/lib/debug (by build id or debuglink).
// section_address is only called for relocatable objects, which a maps text
// should never name, but a null pointer there would crash if one did.
char* debuginfo_path = nullptr;  // libdw's default search path
const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

// The lines of `maps` that libdw's parser accepts: it gives up at the first
// line it cannot parse (a blank line at the end, a truncated capture), and
// one bad line should not cost the whole process its symbols.
std::string parsable_lines(const std::string& maps) {
  std::istringstream in(maps);
  std::string out, line;
  while (std::getline(in, line)) {
    std::uint64_t start, end, offset, ino;
    unsigned dmajor, dminor;
    int n = -1;
    // The same format as elfutils' proc_maps_report.
    if (std::sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %x:%x %" SCNu64 " %n",
                    &start, &end, &offset, &dmajor, &dminor, &ino, &n) >= 6 &&
        n > 0 && start < end)
      out += line + '\n';
  }
  return out;
}

std::string demangle(const char* name) {
  if (name[0] != '_' || name[1] != 'Z') return name;  // C, or not mangled
  int status = 0;
  char* plain = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || plain == nullptr) return name;
  std::string result(plain);
  std::free(plain);
  return result;
}

}  // namespace

std::string describe(const SourceLocation& l, std::uint64_t address) {
  char hex[32];
  if (l.has_line()) return l.file + ':' + std::to_string(l.line);
  if (!l.object.empty()) {
    std::snprintf(hex, sizeof hex, "+0x%" PRIx64, l.offset);
    return l.object + hex;
  }
  std::snprintf(hex, sizeof hex, "0x%" PRIx64, address);
  return hex;
}

Symbolizer::Symbolizer(const std::string& maps) {
  dwfl_ = dwfl_begin(&callbacks);
  if (dwfl_ == nullptr) return;  // every lookup then comes back empty
  dwfl_report_begin(dwfl_);
  std::string text = parsable_lines(maps);
  // fmemopen refuses an empty buffer; no lines means no modules anyway.
  if (!text.empty()) {
    if (FILE* f = fmemopen(text.data(), text.size(), "r")) {
      dwfl_linux_proc_maps_report(dwfl_, f);
      std::fclose(f);
    }
  }
  dwfl_report_end(dwfl_, nullptr, nullptr);
}

Symbolizer::~Symbolizer() {
  if (dwfl_ != nullptr) dwfl_end(dwfl_);
}

SourceLocation Symbolizer::resolve_return_address(std::uint64_t address) {
  return resolve(address == 0 ? 0 : address - 1);
}

SourceLocation Symbolizer::resolve(std::uint64_t address) {
  auto it = cache_.find(address);
  if (it == cache_.end()) it = cache_.emplace(address, lookup(address)).first;
  return it->second;
}

std::vector<SourceLocation> Symbolizer::resolve_inlined_return_address(std::uint64_t address) {
  std::vector<SourceLocation> chain{resolve_return_address(address)};
  if (dwfl_ == nullptr || address == 0 || !chain.front().has_line()) return chain;
  const std::uint64_t at = address - 1;
  Dwfl_Module* mod = dwfl_addrmodule(dwfl_, at);
  Dwarf_Addr bias = 0;
  Dwarf_Die* cu = mod ? dwfl_module_addrdie(mod, at, &bias) : nullptr;
  if (cu == nullptr) return chain;
  Dwarf_Files* files = nullptr;
  std::size_t nfiles = 0;
  if (dwarf_getsrcfiles(cu, &files, &nfiles) != 0) return chain;
  // The scopes at the address stop at the innermost inlined instance (then
  // go on in its abstract origin); the instances it sits in, out to the
  // function, are the scopes of that instance's own DIE.
  Dwarf_Die* at_pc = nullptr;
  const int n = dwarf_getscopes(cu, at - bias, &at_pc);
  Dwarf_Die* outward = nullptr;
  int m = 0;
  for (int i = 0; i < n; ++i) {
    if (dwarf_tag(&at_pc[i]) == DW_TAG_inlined_subroutine) {
      m = dwarf_getscopes_die(&at_pc[i], &outward);
      break;
    }
  }
  // Each inlined instance says where it was called.
  for (int i = 0; i < m; ++i) {
    if (dwarf_tag(&outward[i]) != DW_TAG_inlined_subroutine) continue;
    Dwarf_Attribute attr;
    Dwarf_Word file = 0, line = 0;
    // A level that does not say where it was called ends the chain: the
    // levels above it could not be told apart from the call's own line.
    if (dwarf_formudata(dwarf_attr(&outward[i], DW_AT_call_file, &attr), &file) != 0 ||
        dwarf_formudata(dwarf_attr(&outward[i], DW_AT_call_line, &attr), &line) != 0 ||
        file >= nfiles || line == 0)
      break;
    SourceLocation caller = chain.front();
    const char* name = dwarf_filesrc(files, file, nullptr, nullptr);
    caller.file = name ? name : "";
    caller.line = static_cast<int>(line);
    chain.push_back(std::move(caller));
  }
  std::free(outward);
  std::free(at_pc);
  return chain;
}

SourceLocation Symbolizer::lookup(std::uint64_t address) {
  SourceLocation l;
  if (dwfl_ == nullptr) return l;
  Dwfl_Module* mod = dwfl_addrmodule(dwfl_, address);
  if (mod == nullptr) return l;

  Dwarf_Addr low = 0, high = 0;
  const char* name = dwfl_module_info(mod, nullptr, &low, &high, nullptr, nullptr, nullptr,
                                      nullptr);
  // dwfl_addrmodule also answers for a module's end address, which is past it.
  if (address >= high) return l;
  if (name != nullptr) l.object = name;
  // The load bias is what addr2line needs (0 for a non-PIE executable); it
  // is known only if the object could be opened, else the mapping's start
  // stands in for it, which is the same for a PIE or a shared library.
  GElf_Addr bias = 0;
  l.offset = address - (dwfl_module_getelf(mod, &bias) != nullptr ? bias : low);

  if (Dwfl_Line* line = dwfl_module_getsrc(mod, address)) {
    int lineno = 0;
    if (const char* file = dwfl_lineinfo(line, nullptr, &lineno, nullptr, nullptr, nullptr)) {
      l.file = file;
      l.line = lineno;
    }
  }
  // From the symbol table, so the outermost function when the call was inlined.
  if (const char* fn = dwfl_module_addrname(mod, address)) l.function = demangle(fn);
  return l;
}

namespace {
// Whether a source file is one of vcx's annotation headers.
bool is_annotation_header(const std::string& file) {
  for (const std::string header : {"vcx/annotate.h", "vcx/annotate_shmem.h"})
    if (file == header || file.ends_with("/" + header)) return true;
  return false;
}
}  // namespace

SourceLocation Symbolizer::resolve_program_call(std::uint64_t address) {
  const auto chain = resolve_inlined_return_address(address);
  for (const SourceLocation& l : chain)
    if (!is_annotation_header(l.file)) return l;
  return chain.front();
}

}  // namespace vcx
