#include "vcx/intercept/call_site.h"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstddef>

namespace vcx::intercept {
namespace {

struct CodeRange {
  std::uintptr_t lo = 0;
  std::uintptr_t hi = 0;
};

// The executable segments of the object that holds this function.
CodeRange find_own_code() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&find_own_code), &info) || !info.dli_fbase) return {};
  struct Search {
    const void* base;
    CodeRange range;
  } search{info.dli_fbase, {}};
  dl_iterate_phdr(
      [](dl_phdr_info* object, std::size_t, void* data) {
        auto* s = static_cast<Search*>(data);
        bool mine = false;
        for (int i = 0; i < object->dlpi_phnum && !mine; ++i) {
          const ElfW(Phdr)& ph = object->dlpi_phdr[i];
          const std::uintptr_t start = object->dlpi_addr + ph.p_vaddr;
          mine = ph.p_type == PT_LOAD && ph.p_offset == 0 &&
                 start == reinterpret_cast<std::uintptr_t>(s->base);
        }
        if (!mine) return 0;
        for (int i = 0; i < object->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = object->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
          const std::uintptr_t start = object->dlpi_addr + ph.p_vaddr;
          const std::uintptr_t end = start + ph.p_memsz;
          s->range.lo = s->range.lo ? std::min(s->range.lo, start) : start;
          s->range.hi = std::max(s->range.hi, end);
        }
        return 1;
      },
      &search);
  return search.range;
}

const CodeRange& own_code() {
  static const CodeRange range = find_own_code();
  return range;
}

// A caller's frame lies above its callee's, and not absurdly far.
constexpr std::uintptr_t kMaxFrameBytes = std::uintptr_t{1} << 20;
constexpr int kMaxFrames = 32;

}  // namespace

bool in_this_interceptor(std::uint64_t pc) {
  const CodeRange& code = own_code();
  return pc >= code.lo && pc < code.hi;
}

__attribute__((noinline)) std::uint64_t application_call_site() {
  const CodeRange& code = own_code();
  if (code.hi == 0) return 0;
  // A frame record is {caller's frame pointer, return address} on x86-64
  // and AArch64 alike.
  auto* frame = static_cast<const std::uintptr_t*>(__builtin_frame_address(0));
  for (int depth = 0; depth < kMaxFrames && frame; ++depth) {
    const std::uintptr_t ret = frame[1];
    if (ret < code.lo || ret >= code.hi) return ret;
    const auto* caller = reinterpret_cast<const std::uintptr_t*>(frame[0]);
    const auto here = reinterpret_cast<std::uintptr_t>(frame);
    const auto there = reinterpret_cast<std::uintptr_t>(caller);
    if (there <= here || there - here > kMaxFrameBytes) return 0;
    frame = caller;
  }
  return 0;
}

}  // namespace vcx::intercept
