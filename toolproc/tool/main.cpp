// vcx-toolproc: started by vcx-run as an MPI job of its own, one process per
// application rank. MPI tells this process its rank; with the TCP and shm transports it
// also exchanges the peers' endpoints, with the MPI transport it carries the
// tool-to-tool messages. The analysis itself runs on the event loop.
#include <mpi.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "tool_process.h"
#include "vcx/atomic_file.h"
#include "vcx/delaying_transport.h"
#include "vcx/open_file_limit.h"
#include "vcx/plugin_loader.h"
#include "vcx/session_layout.h"
#include "vcx/session_rendezvous.h"

using vcx::tool::ToolOptions;

namespace {

// Reads the command line into `o`; false with the exit code set when the
// tool is not to run (--help, or bad arguments).
bool parse(int argc, char** argv, ToolOptions& o, int& exit_code) {
  std::string text;
  switch (vcx::session::ToolArguments::parse(argc, argv, &o, &text)) {
    case vcx::session::ToolArguments::Parsed::Ok:
      break;
    case vcx::session::ToolArguments::Parsed::Help: {
      // The plugins' own options, from the plugins themselves.
      std::error_code ec;
      const char* env_dir = std::getenv("VCX_PLUGIN_DIR");
      const std::string dir =
          !o.plugin_dir.empty()         ? o.plugin_dir
          : env_dir && *env_dir != '\0' ? std::string(env_dir)
                                        : (std::filesystem::read_symlink("/proc/self/exe", ec)
                                               .parent_path()
                                               .parent_path() /
                                           "lib" / "vcx")
                                              .string();
      std::cout << text << "\nPlugins in " << dir << " and their options (--option name=value):\n"
                << vcx::describe_plugins(dir);
      exit_code = 0;
      return false;
    }
    case vcx::session::ToolArguments::Parsed::Error:
      std::cerr << "vcx-toolproc: " << text << "\n";
      exit_code = 64;
      return false;
  }
  if (const char* t = std::getenv("VCX_SESSION_TOKEN")) o.token = t;
  return true;
}

}  // namespace

namespace {

// Where every tool listens, over MPI (tcp and shm transports).
std::vector<std::string> gather_endpoints(const std::string& endpoint, int size) {
  // shm: "host:port pid node-id", the node id up to 64 + 1 + 36 bytes.
  constexpr std::size_t kEndpointBytes = 256;
  std::array<char, kEndpointBytes> mine{};
  std::snprintf(mine.data(), mine.size(), "%s", endpoint.c_str());
  std::vector<char> all(kEndpointBytes * static_cast<std::size_t>(size));
  MPI_Allgather(mine.data(), kEndpointBytes, MPI_CHAR, all.data(), kEndpointBytes, MPI_CHAR,
                MPI_COMM_WORLD);
  std::vector<std::string> endpoints;
  for (int r = 0; r < size; ++r) endpoints.emplace_back(all.data() + r * kEndpointBytes);
  return endpoints;
}

// How long a tool waits for the others to start (the launcher's own
// VCX_START_TIMEOUT stops the job sooner by default).
constexpr std::chrono::milliseconds kRendezvousTimeout{600'000};

}  // namespace

int main(int argc, char** argv) {
  // Everything a tool writes (session files, statistics, traces) is the
  // user's alone.
  ::umask(077);
  // Source lines come from debug info on this node only: a tool that stops
  // the analysis names the call's line before it tells the other tools,
  // and must not wait for a debuginfod server meanwhile.
  ::unsetenv("DEBUGINFOD_URLS");
  ToolOptions opts;
  int exit_code = 0;
  if (!parse(argc, argv, opts, exit_code)) return exit_code;

  // The tool job is started by MPICH's mpiexec, whose PMI_RANK and PMI_SIZE
  // name each tool; MPI itself is only initialised when the tools talk
  // over it (--transport mpi) or the job spans nodes (--mpi-start): its
  // start-up costs a short run about 0.1 s.
  int rank = 0, size = 0;
  const char* pmi_rank = std::getenv("PMI_RANK");
  const char* pmi_size = std::getenv("PMI_SIZE");
  const bool use_mpi =
      opts.transport == vcx::session::Transport::Mpi || opts.mpi_start || !pmi_rank || !pmi_size;
  if (use_mpi) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
  } else {
    rank = std::atoi(pmi_rank);
    size = std::atoi(pmi_size);
  }
  auto finalize = [&] {
    if (use_mpi) MPI_Finalize();
  };
  // Tool 0 holds two sockets per other tool.
  if (auto why = vcx::raise_open_file_limit(); why && rank == 0)
    std::fprintf(stderr, "vcx: warning: %s; runs of more than a few hundred ranks may fail\n",
                 why->c_str());
  // Every tool reads the same environment; rank 0 alone says what is wrong.
  vcx::ChaosSettings chaos;
  if (auto bad = vcx::parse_chaos_settings(std::getenv("VCX_CHAOS_DELAY_US"),
                                           std::getenv("VCX_CHAOS_SEED"), &chaos)) {
    if (rank == 0) std::fprintf(stderr, "vcx: %s\n", bad->c_str());
    finalize();
    return 64;
  }
  opts.chaos_delay_us = chaos.max_delay_us;
  opts.chaos_seed = chaos.seed;

  auto logger = spdlog::stderr_logger_st("vcx");
  logger->set_pattern("vcx-tool[" + std::to_string(rank) + "]: %^%l%$: %v");
  spdlog::set_default_logger(logger);
  if (const char* lvl = std::getenv("VCX_LOG")) spdlog::set_level(spdlog::level::from_str(lvl));
  else spdlog::set_level(spdlog::level::warn);

  vcx::tool::ToolProcess tool(opts, vcx::Rank{static_cast<std::uint32_t>(rank)},
                              static_cast<std::uint32_t>(size));
  std::string endpoint;
  int ok = 1;
  std::string error;
  try {
    endpoint = tool.prepare();
    tool.load_plugins();
  } catch (const std::exception& e) {
    ok = 0;
    error = e.what();
  }
  // Every tool learns whether all started, so none waits for a failed one,
  // and where the others listen.
  std::vector<std::string> endpoints;
  if (use_mpi) {
    int all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
      if (!ok) std::fprintf(stderr, "vcx-tool[%d]: %s\n", rank, error.c_str());
      finalize();
      return 70;
    }
    if (opts.transport != vcx::session::Transport::Mpi)
      endpoints = gather_endpoints(endpoint, size);
    MPI_Barrier(MPI_COMM_WORLD);
  } else {
    std::string why;
    const auto met = vcx::rendezvous_in_session(
        opts.session_dir, static_cast<std::uint32_t>(rank), static_cast<std::uint32_t>(size),
        ok != 0, ok ? endpoint : error, kRendezvousTimeout, &why);
    if (!met) {
      std::fprintf(stderr, "vcx-tool[%d]: %s\n", rank, why.c_str());
      return 70;
    }
    if (!met->all_ok) {
      if (!ok) std::fprintf(stderr, "vcx-tool[%d]: %s\n", rank, error.c_str());
      return 70;
    }
    endpoints = met->endpoints;
  }
  if (!endpoints.empty()) {
    if (rank == 0) {
      // Where the tools listen, for whoever debugs (or audits) the session.
      std::string peers;
      for (const auto& e : endpoints) peers += e + "\n";
      vcx::write_file_atomically(vcx::session::file(opts.session_dir, vcx::session::kPeers), peers,
                                 nullptr);
    }
    tool.set_peer_endpoints(std::move(endpoints));
  }
  if (rank == 0) {
    vcx::write_file_atomically(vcx::session::file(opts.session_dir, vcx::session::kReady),
                               std::to_string(size) + "\n", nullptr);
  }

  const int status = tool.run();
  tool.write_stats();
  finalize();
  return status;
}
