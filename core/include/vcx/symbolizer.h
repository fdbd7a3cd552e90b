// Turns code addresses of an application process into source locations, for
// the report at the end of a run (where racing accesses were made). The
// process may be gone by then, so it works from the text of its
// /proc/<pid>/maps captured while it ran and reopens the objects named there;
// libdw (elfutils) reads their symbols and DWARF line tables, including
// separate debug files under /usr/lib/debug.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

struct Dwfl;  // elfutils' session handle (libdwfl.h), kept out of this header

namespace vcx {

struct SourceLocation {
  std::string object;        // path of the ELF object containing the address ("" if none)
  std::uint64_t offset = 0;  // address relative to that object's load base (as addr2line -e wants)
  std::string file;          // source file as DWARF records it (may be relative), "" if none
  int line = 0;              // 0 if unknown
  std::string function;      // symbol name, demangled for C++, "" if unknown
  bool has_line() const { return line > 0 && !file.empty(); }
  bool operator==(const SourceLocation&) const = default;
};

// The text of /proc/<pid>/maps, "" when it cannot be read (the process is
// gone, or not this node's).
std::string process_maps(std::int64_t pid);

// "file:line" when known, else "object+0xoffset", else "0xaddress".
std::string describe(const SourceLocation& l, std::uint64_t address);

// Not thread-safe: one thread symbolizes, once, at the end of a run.
class Symbolizer {
 public:
  // `maps`: the text of /proc/<pid>/maps of the process the addresses come
  // from. Lines that do not parse are skipped; objects that no longer exist
  // or have no debug info still give object+offset.
  explicit Symbolizer(const std::string& maps);
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  // A return address (as __builtin_return_address(0) gives): the location of
  // the call, i.e. of address-1, since the return address may already belong
  // to the next line or, after a noreturn call, to the next function.
  SourceLocation resolve_return_address(std::uint64_t address);
  SourceLocation resolve(std::uint64_t address);
  // The call of a return address through the functions inlined there,
  // innermost first: the call's own line (as resolve_return_address), then
  // for each enclosing inlined function the line it was called from, out to
  // the function that holds the code. One entry when nothing was inlined or
  // the object has no DWARF scopes.
  std::vector<SourceLocation> resolve_inlined_return_address(std::uint64_t address);
  // The program's line of an event's call site: the annotation macros of
  // vcx/annotate*.h are inlined into the program, so the line that used one
  // is named rather than the macro's.
  SourceLocation resolve_program_call(std::uint64_t address);

 private:
  SourceLocation lookup(std::uint64_t address);

  ::Dwfl* dwfl_ = nullptr;
  std::unordered_map<std::uint64_t, SourceLocation> cache_;  // the same sites repeat
};

}  // namespace vcx
