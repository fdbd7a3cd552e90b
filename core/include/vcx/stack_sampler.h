// The call stacks of a running process's threads, for saying where a hung
// rank waits (vcx-run's "where the ranks are"). libdw (elfutils) attaches
// with ptrace, unwinds each thread with the objects' CFI, and detaches; the
// process stops only while that runs.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace vcx {

struct ThreadStack {
  pid_t tid = 0;
  // Innermost first; addresses inside the call instruction of every caller
  // frame (return address - 1), so that each resolves to its call's line.
  std::vector<std::uint64_t> pcs;
};

// Empty, with `error` set, when the process cannot be traced (it is gone,
// on another host, or ptrace is not allowed: /proc/sys/kernel/yama/ptrace_scope).
std::vector<ThreadStack> sample_stacks(pid_t pid, std::string* error,
                                       std::size_t max_frames = 48);

// One line per thread: the frames from the outermost call into `entry_prefixes`
// (e.g. "MPI_", "shmem_") out to main, as "function (file:line)" joined by
// " <- "; the innermost frames when no such call is on the stack.
std::vector<std::string> describe_stacks(pid_t pid, const std::vector<ThreadStack>& stacks,
                                         const std::vector<std::string>& entry_prefixes);

}  // namespace vcx
