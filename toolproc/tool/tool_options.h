// Settings of one tool process, from its command line (set by vcx-run).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vcx/options.h"

namespace vcx::tool {

struct ToolOptions {
  std::string session_dir;
  std::string plugin_dir;
  std::string engine = "vclock";
  std::vector<std::string> translators{"mpi"};
  std::vector<std::string> modules;
  // --stall: "never", "waits", or empty (never, unless a loaded module
  // needs stalls). no_stall is the outcome, set once the plugins are loaded.
  std::string stall;
  bool no_stall = true;
  // OpenSHMEM flag writes are registered at their target's tool before they
  // happen, so that waits merge them (docs/clock-rules.md, "Flags").
  bool shmem_flags = true;
  std::uint64_t ring_bytes = 4u << 20;
  // Programs the engine may hold beyond the one it runs: with the channel,
  // this bounds how far the tool lags behind its application (and its
  // memory), since it reads no more events until the engine catches up.
  std::size_t max_backlog = 65'536;
  // Polling before sleeping: this tool when idle, and its application when
  // it waits for an answer. A tool that shares cores with application ranks
  // (--shared-core) polls only while its application sleeps waiting for it,
  // and its application sleeps at once by default: otherwise either would
  // take the core the other needs to make progress.
  bool shared_core = false;
  // Start through MPI (MPI_Init, MPI_Allgather) rather than files in the
  // session directory: vcx-run asks for it when the job spans nodes, whose
  // shared file systems may show new files late.
  bool mpi_start = false;
  // Blocking MPI calls of the application yield the core between tests of
  // completion (kModeYieldInWaits); by default where tools share its cores.
  bool app_yield = false;
  std::uint64_t spin_ns = 20'000;
  std::uint32_t app_spin_ns = 2'000;
  std::string bind_host = "127.0.0.1";
  std::string channel = "shm";  // application -> tool: shm | tcp
  std::string transport = "tcp";  // tool <-> tool: tcp | mpi
  bool progress = false;  // keep progress-<rank> in the session up to date (about 1/s)
  std::string token;  // from VCX_SESSION_TOKEN
  // Delay injection for testing vcx (VCX_CHAOS_DELAY_US, VCX_CHAOS_SEED).
  std::uint64_t chaos_delay_us = 0;
  std::uint64_t chaos_seed = 0;
  Options plugin_options;
};

}  // namespace vcx::tool
