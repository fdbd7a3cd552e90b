// The tool processes' command line: what vcx-run tells every tool of a run.
// vcx-run fills a ToolArguments and starts the tool job with to_argv();
// vcx-toolproc reads it back with parse(). One description of both sides,
// so that a setting cannot be written under one spelling and read under
// another.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vcx/options.h"

namespace vcx::session {

// How events travel from an application rank to its tool.
enum class Channel : std::uint8_t { Shm, Tcp };
// How tools talk to one another: TCP; shared memory on one node and TCP
// between nodes; or the tool job's own MPI.
enum class Transport : std::uint8_t { Tcp, Shm, Mpi };
// When the application waits for its tool: Auto is Never unless a loaded
// module needs stalls; Waits also at every wait.
enum class Stall : std::uint8_t { Auto, Never, Waits };

// A setting's spellings on command lines, config files and statistics.
template <class E>
struct Spelling {
  E value;
  std::string_view name;
};
inline constexpr Spelling<Channel> kChannelNames[] = {{Channel::Shm, "shm"},
                                                      {Channel::Tcp, "tcp"}};
inline constexpr Spelling<Transport> kTransportNames[] = {
    {Transport::Tcp, "tcp"}, {Transport::Shm, "shm"}, {Transport::Mpi, "mpi"}};
// Auto has no spelling: it is the absence of --stall.
inline constexpr Spelling<Stall> kStallNames[] = {{Stall::Never, "never"},
                                                  {Stall::Waits, "waits"}};

template <class E, std::size_t N>
std::optional<E> parse_choice(std::string_view text, const Spelling<E> (&names)[N]) {
  for (const auto& s : names)
    if (s.name == text) return s.value;
  return std::nullopt;
}
template <class E, std::size_t N>
std::string_view name_of(E value, const Spelling<E> (&names)[N]) {
  for (const auto& s : names)
    if (s.value == value) return s.name;
  return "?";
}
// "shm, tcp": the spellings, for error messages.
template <class E, std::size_t N>
std::string choices_of(const Spelling<E> (&names)[N]) {
  std::string out;
  for (const auto& s : names) out += (out.empty() ? "" : ", ") + std::string(s.name);
  return out;
}

inline std::string_view name_of(Channel c) { return name_of(c, kChannelNames); }
inline std::string_view name_of(Transport t) { return name_of(t, kTransportNames); }

// The names of a comma-separated list ("mpi,shmem"), empty ones left out.
std::vector<std::string> comma_list(const std::string& list);

// The exchange engine plugin the tools run unless told otherwise.
inline constexpr const char* kDefaultEngine = "vclock";

struct ToolArguments {
  std::string session_dir;
  std::string plugin_dir;
  std::string engine = kDefaultEngine;
  std::vector<std::string> translators{"mpi"};
  // Module plugins (the engine, if named here, is not one).
  std::vector<std::string> modules;
  // Plugin options, key=value (vcx-run checks them against the plugins'
  // declarations; the tools check them against the loaded plugins').
  Options plugin_options;
  Stall stall = Stall::Auto;
  // OpenSHMEM flag writes are registered at their target's tool before they
  // happen, so that waits merge them (docs/clock-rules.md, "Flags").
  bool shmem_flags = true;
  std::uint64_t ring_bytes = 4u << 20;
  // Programs the engine may hold beyond the one it runs: with the channel,
  // this bounds how far the tool lags behind its application (and its
  // memory), since it reads no more events until the engine catches up.
  std::uint64_t max_backlog = 65'536;
  // Polling before sleeping: this tool when idle, and its application when
  // it waits for an answer. A tool that shares cores with application ranks
  // polls only while its application sleeps waiting for it, and its
  // application sleeps at once by default: otherwise either would take the
  // core the other needs to make progress.
  bool shared_core = false;
  std::uint64_t spin_ns = 20'000;
  std::optional<std::uint32_t> app_spin_ns;  // default: 2000, 0 with shared_core
  // Blocking MPI calls of the application yield the core between tests of
  // completion; default: where tools share its cores.
  std::optional<bool> app_yield;
  // Start through MPI (MPI_Init, MPI_Allgather) rather than files in the
  // session directory: for jobs that span nodes, whose shared file systems
  // may show new files late.
  bool mpi_start = false;
  std::string bind_host = "127.0.0.1";
  Channel channel = Channel::Shm;
  Transport transport = Transport::Tcp;
  bool progress = false;  // keep progress-<rank> in the session up to date (about 1/s)

  bool yields() const { return app_yield.value_or(shared_core); }
  std::uint32_t app_spin() const { return app_spin_ns.value_or(shared_core ? 0 : 2'000); }

  // The command line after the program's name; settings at their defaults
  // are left out.
  std::vector<std::string> to_argv() const;

  enum class Parsed { Ok, Help, Error };
  // Reads argv[1..argc) into `out`. Help: `text` is the usage (the caller
  // adds the plugins' options); Error: `text` says what is wrong.
  static Parsed parse(int argc, const char* const* argv, ToolArguments* out, std::string* text);
};

}  // namespace vcx::session
