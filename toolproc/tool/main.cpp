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
#include <sstream>

#include <boost/program_options.hpp>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "tool_process.h"
#include "vcx/atomic_file.h"
#include "vcx/delaying_transport.h"
#include "vcx/open_file_limit.h"
#include "vcx/plugin_loader.h"
#include "vcx/session_layout.h"
#include "vcx/session_rendezvous.h"

namespace po = boost::program_options;
using vcx::tool::ToolOptions;

namespace {

std::vector<std::string> split_list(const std::vector<std::string>& in) {
  std::vector<std::string> out;
  for (const auto& item : in) {
    std::stringstream ss(item);
    std::string part;
    while (std::getline(ss, part, ','))
      if (!part.empty()) out.push_back(part);
  }
  return out;
}

bool parse(int argc, char** argv, ToolOptions& o, int& exit_code) {
  po::options_description desc("vcx-toolproc (started by vcx-run)");
  std::vector<std::string> translators, modules, options;
  bool no_shmem_flags = false;
  desc.add_options()
      ("help", "this text")
      ("session", po::value(&o.session_dir)->required(), "session directory")
      ("plugin-dir", po::value(&o.plugin_dir)->required(), "where plugins live")
      ("engine", po::value(&o.engine)->default_value("vclock"), "exchange engine plugin")
      ("translators", po::value(&translators)->multitoken(), "translator plugins (comma separated)")
      ("modules", po::value(&modules)->multitoken(), "module plugins (comma separated)")
      ("option", po::value(&options)->multitoken(), "plugin option key=value")
      ("stall", po::value(&o.stall),
       "never: the application waits for its tool only when the channel is full or for a "
       "lock grant; waits: also at every wait (default: never, unless a module needs it)")
      ("no-shmem-flags", po::bool_switch(&no_shmem_flags),
       "OpenSHMEM: do not register flag writes; waits merge no writes")
      ("ring-bytes", po::value(&o.ring_bytes)->default_value(o.ring_bytes), "event ring size")
      ("max-backlog", po::value(&o.max_backlog)->default_value(o.max_backlog),
       "calls read ahead of the engine at most; then the tool reads no more until it catches "
       "up (the channel fills and the application waits)")
      ("shared-core", po::bool_switch(&o.shared_core),
       "shares cores with application ranks: poll only while the application waits for an "
       "answer, and let it sleep at once")
      ("spin-ns", po::value(&o.spin_ns)->default_value(o.spin_ns),
       "poll this long when idle before sleeping (ns)")
      ("app-yield", po::value<std::string>(),
       "on: the application's blocking MPI calls yield the core between tests of completion; "
       "off: MPI busy-polls (default: on with --shared-core)")
      ("app-spin-ns", po::value<std::uint32_t>(),
       "the application polls this long for an answer before sleeping (ns; default 2000, 0 "
       "with --shared-core)")
      ("progress", po::bool_switch(&o.progress), "write progress-<rank> for vcx-run's progress line")
      ("mpi-start", po::bool_switch(&o.mpi_start),
       "exchange the start-up information over MPI, not through the session directory")
      ("bind", po::value(&o.bind_host)->default_value(o.bind_host),
       "address for peer connections (and the application's, with --channel tcp)")
      ("channel", po::value(&o.channel)->default_value(o.channel),
       "application-to-tool channel: shm (shared memory) or tcp")
      ("transport", po::value(&o.transport)->default_value(o.transport),
       "tool-to-tool messages: tcp, shm (shared memory on one node, TCP between nodes) or mpi "
       "(the tool job's own MPI)");
  try {
    po::variables_map vm;
    po::store(po::parse_command_line(argc, argv, desc), vm);
    if (vm.count("help")) {
      // The plugins' own options, from the plugins themselves.
      std::error_code ec;
      const char* env_dir = std::getenv("VCX_PLUGIN_DIR");
      const std::string dir =
          vm.count("plugin-dir")        ? vm["plugin-dir"].as<std::string>()
          : env_dir && *env_dir != '\0' ? std::string(env_dir)
                                        : (std::filesystem::read_symlink("/proc/self/exe", ec)
                                               .parent_path()
                                               .parent_path() /
                                           "lib" / "vcx")
                                              .string();
      std::cout << desc << "\nPlugins in " << dir << " and their options (--option name=value):\n"
                << vcx::describe_plugins(dir);
      exit_code = 0;
      return false;
    }
    po::notify(vm);
    if (o.shared_core) o.app_spin_ns = 0;
    o.app_yield = o.shared_core;
    if (vm.count("app-yield")) {
      const std::string v = vm["app-yield"].as<std::string>();
      if (v != "on" && v != "off") throw std::runtime_error("--app-yield takes on or off, not '" + v + "'");
      o.app_yield = v == "on";
    }
    o.shmem_flags = !no_shmem_flags;
    if (!o.stall.empty() && o.stall != "never" && o.stall != "waits")
      throw std::runtime_error("--stall takes never or waits, not '" + o.stall + "'");
    if (vm.count("app-spin-ns")) o.app_spin_ns = vm["app-spin-ns"].as<std::uint32_t>();
  } catch (const std::exception& e) {
    std::cerr << "vcx-toolproc: " << e.what() << "\n";
    exit_code = 64;
    return false;
  }
  if (!translators.empty()) o.translators = split_list(translators);
  for (const auto& m : split_list(modules))
    if (m != o.engine) o.modules.push_back(m);
  for (const auto& kv : options) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos) {
      std::cerr << "vcx-toolproc: --option needs key=value, got '" << kv << "'\n";
      exit_code = 64;
      return false;
    }
    o.plugin_options.set(kv.substr(0, eq), kv.substr(eq + 1));
  }
  if (o.channel != "shm" && o.channel != "tcp") {
    std::cerr << "vcx-toolproc: --channel must be shm or tcp, not '" << o.channel << "'\n";
    exit_code = 64;
    return false;
  }
  if (o.transport != "tcp" && o.transport != "shm" && o.transport != "mpi") {
    std::cerr << "vcx-toolproc: --transport must be tcp, shm or mpi, not '" << o.transport
              << "'\n";
    exit_code = 64;
    return false;
  }
  if (o.ring_bytes < 4096 || (o.ring_bytes & (o.ring_bytes - 1)) != 0) {
    std::cerr << "vcx-toolproc: --ring-bytes must be a power of two >= 4096\n";
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
  const bool use_mpi = opts.transport == "mpi" || opts.mpi_start || !pmi_rank || !pmi_size;
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
    if (opts.transport == "tcp" || opts.transport == "shm")
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
