#include "vcx/stack_sampler.h"

#include <elfutils/libdwfl.h>

#include <cerrno>
#include <cstring>

#include "vcx/symbolizer.h"

namespace vcx {
namespace {

char* debuginfo_path = nullptr;
const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = nullptr,
    .debuginfo_path = &debuginfo_path,
};

struct Walk {
  std::vector<ThreadStack>* out;
  std::size_t max_frames;
};

int on_frame(Dwfl_Frame* frame, void* arg) {
  auto* stack = static_cast<std::pair<ThreadStack*, std::size_t>*>(arg);
  Dwarf_Addr pc = 0;
  bool activation = false;
  if (!dwfl_frame_pc(frame, &pc, &activation)) return DWARF_CB_ABORT;
  // A caller's pc is a return address: step back into the call.
  stack->first->pcs.push_back(activation ? pc : pc - 1);
  return stack->first->pcs.size() < stack->second ? DWARF_CB_OK : DWARF_CB_ABORT;
}

int on_thread(Dwfl_Thread* thread, void* arg) {
  auto* walk = static_cast<Walk*>(arg);
  ThreadStack t;
  t.tid = dwfl_thread_tid(thread);
  std::pair<ThreadStack*, std::size_t> state{&t, walk->max_frames};
  // An unwinding error ends this thread's stack; what was found stays.
  dwfl_thread_getframes(thread, on_frame, &state);
  walk->out->push_back(std::move(t));
  return DWARF_CB_OK;
}

bool starts_with_any(const std::string& s, const std::vector<std::string>& prefixes) {
  for (const std::string& p : prefixes)
    if (s.rfind(p, 0) == 0) return true;
  return false;
}

}  // namespace

std::vector<ThreadStack> sample_stacks(pid_t pid, std::string* error, std::size_t max_frames) {
  std::vector<ThreadStack> out;
  Dwfl* dwfl = dwfl_begin(&callbacks);
  if (!dwfl) {
    if (error) *error = dwfl_errmsg(-1);
    return out;
  }
  const int reported = dwfl_linux_proc_report(dwfl, pid);
  dwfl_report_end(dwfl, nullptr, nullptr);
  if (reported != 0) {
    if (error)
      *error = "cannot read the memory map of process " + std::to_string(pid) + ": " +
               (reported > 0 ? std::strerror(reported) : dwfl_errmsg(-1));
    dwfl_end(dwfl);
    return out;
  }
  if (const int rc = dwfl_linux_proc_attach(dwfl, pid, false); rc != 0) {
    if (error)
      *error = "cannot trace process " + std::to_string(pid) + ": " +
               (rc > 0 ? std::strerror(rc) : dwfl_errmsg(-1)) +
               " (ptrace; see /proc/sys/kernel/yama/ptrace_scope)";
    dwfl_end(dwfl);
    return out;
  }
  Walk walk{&out, max_frames};
  if (dwfl_getthreads(dwfl, on_thread, &walk) != 0 && out.empty() && error)
    *error = std::string("cannot unwind process ") + std::to_string(pid) + ": " +
             dwfl_errmsg(-1);
  dwfl_end(dwfl);  // detaches
  return out;
}

std::vector<std::string> describe_stacks(pid_t pid, const std::vector<ThreadStack>& stacks,
                                         const std::vector<std::string>& entry_prefixes) {
  std::vector<std::string> lines;
  Symbolizer symbols(process_maps(pid));
  for (const ThreadStack& t : stacks) {
    std::vector<SourceLocation> frames;
    for (const std::uint64_t pc : t.pcs) frames.push_back(symbols.resolve(pc));
    // From the outermost entry call (a wrapper calls its PMPI_ twin, which
    // may be named MPI_ too) out to main.
    std::size_t from = frames.size();
    for (std::size_t i = 0; i < frames.size(); ++i)
      if (starts_with_any(frames[i].function, entry_prefixes)) from = i;
    const bool in_call = from < frames.size();
    // Helper threads (the MPI library's progress threads, the tool's own)
    // only when they are in a call too.
    if (!in_call && t.tid != pid) continue;
    if (!in_call) from = 0;
    std::size_t to = frames.size();
    for (std::size_t i = from; i < frames.size(); ++i)
      if (frames[i].function == "main") to = std::min(to, i + 1);
    std::string line = "thread " + std::to_string(t.tid) + (t.tid == pid ? " (main)" : "") + ": ";
    bool gap = false, any = false;
    for (std::size_t i = from; i < to; ++i) {
      const SourceLocation& l = frames[i];
      // Frames without a symbol (a library's internals) show as one "...".
      if (l.function.empty()) {
        gap = true;
        continue;
      }
      if (any) line += " <- ";
      if (gap && any) line += "... <- ";
      gap = false;
      any = true;
      line += l.function;
      // The entry call's own line is inside the wrapper, not the program.
      if (l.has_line() && !(in_call && i == from))
        line += " (" + l.file.substr(l.file.rfind('/') + 1) + ":" + std::to_string(l.line) + ")";
    }
    if (!any) line += t.pcs.empty() ? "no frames" : describe(frames[0], t.pcs[0]);
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace vcx
