// The tools' command line: what vcx-run writes, vcx-toolproc reads back.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "session/tool_arguments.h"

using vcx::session::Channel;
using vcx::session::Stall;
using vcx::session::ToolArguments;
using vcx::session::Transport;

namespace {

ToolArguments::Parsed parse(std::vector<std::string> args, ToolArguments* out,
                            std::string* text) {
  args.insert(args.begin(), "vcx-toolproc");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  return ToolArguments::parse(static_cast<int>(argv.size()), argv.data(), out, text);
}

}  // namespace

TEST_CASE("tool arguments: settings at their defaults are left out", "[options]") {
  ToolArguments a;
  a.session_dir = "/s";
  a.plugin_dir = "/p";
  CHECK(a.to_argv() ==
        std::vector<std::string>{"--session", "/s", "--plugin-dir", "/p", "--translators", "mpi"});
  ToolArguments back;
  std::string text;
  REQUIRE(parse(a.to_argv(), &back, &text) == ToolArguments::Parsed::Ok);
  CHECK(back.stall == Stall::Auto);
  CHECK(back.channel == Channel::Shm);
  CHECK(back.transport == Transport::Tcp);
  CHECK_FALSE(back.yields());
  CHECK(back.app_spin() == 2'000);
  back.shared_core = true;  // sharing cores changes both defaults
  CHECK(back.yields());
  CHECK(back.app_spin() == 0);
}

TEST_CASE("tool arguments: every setting survives to_argv and parse", "[options]") {
  ToolArguments a;
  a.session_dir = "/tmp/vcx-1";
  a.plugin_dir = "/opt/vcx/lib/vcx";
  a.engine = "other";
  a.translators = {"mpi", "shmem"};
  a.modules = {"trace", "race"};
  a.plugin_options.set("trace.dir", "/t");
  a.plugin_options.set("race.dir", "/s/race=x");  // '=' in a value
  a.stall = Stall::Waits;
  a.shmem_flags = false;
  a.ring_bytes = 1u << 16;
  a.max_backlog = 17;
  a.shared_core = true;
  a.spin_ns = 5;
  a.app_spin_ns = 7;
  a.app_yield = false;
  a.mpi_start = true;
  a.bind_host = "0.0.0.0";
  a.channel = Channel::Tcp;
  a.transport = Transport::Mpi;
  a.progress = true;

  ToolArguments b;
  std::string text;
  REQUIRE(parse(a.to_argv(), &b, &text) == ToolArguments::Parsed::Ok);
  CHECK(b.session_dir == a.session_dir);
  CHECK(b.plugin_dir == a.plugin_dir);
  CHECK(b.engine == a.engine);
  CHECK(b.translators == a.translators);
  CHECK(b.modules == a.modules);
  CHECK(b.plugin_options.all() == a.plugin_options.all());
  CHECK(b.stall == a.stall);
  CHECK(b.shmem_flags == a.shmem_flags);
  CHECK(b.ring_bytes == a.ring_bytes);
  CHECK(b.max_backlog == a.max_backlog);
  CHECK(b.shared_core == a.shared_core);
  CHECK(b.spin_ns == a.spin_ns);
  CHECK(b.app_spin_ns == a.app_spin_ns);
  CHECK(b.app_yield == a.app_yield);
  CHECK(b.mpi_start == a.mpi_start);
  CHECK(b.bind_host == a.bind_host);
  CHECK(b.channel == a.channel);
  CHECK(b.transport == a.transport);
  CHECK(b.progress == a.progress);
  CHECK(b.to_argv() == a.to_argv());

  // --stall never and the shm transport have spellings too.
  a.stall = Stall::Never;
  a.transport = Transport::Shm;
  ToolArguments c;
  REQUIRE(parse(a.to_argv(), &c, &text) == ToolArguments::Parsed::Ok);
  CHECK(c.stall == Stall::Never);
  CHECK(c.transport == Transport::Shm);
}

TEST_CASE("tool arguments: the engine named among the modules is no module", "[options]") {
  ToolArguments a;
  std::string text;
  REQUIRE(parse({"--session", "s", "--plugin-dir", "p", "--modules", "vclock,trace,,race"}, &a,
                &text) == ToolArguments::Parsed::Ok);
  CHECK(a.modules == std::vector<std::string>{"trace", "race"});
}

TEST_CASE("tool arguments: bad values are refused with what to give", "[options]") {
  const std::pair<std::vector<std::string>, std::string> bad[] = {
      {{"--channel", "udp"}, "--channel takes shm, tcp, not 'udp'"},
      {{"--transport", "ib"}, "--transport takes tcp, shm, mpi, not 'ib'"},
      {{"--stall", "always"}, "--stall takes never, waits, not 'always'"},
      {{"--app-yield", "maybe"}, "--app-yield takes on or off, not 'maybe'"},
      {{"--option", "novalue"}, "--option needs key=value, got 'novalue'"},
      {{"--ring-bytes", "5000"}, "--ring-bytes must be a power of two >= 4096"},
  };
  for (const auto& [extra, message] : bad) {
    std::vector<std::string> args{"--session", "s", "--plugin-dir", "p"};
    args.insert(args.end(), extra.begin(), extra.end());
    ToolArguments a;
    std::string text;
    CHECK(parse(args, &a, &text) == ToolArguments::Parsed::Error);
    CHECK(text == message);
  }
  ToolArguments a;
  std::string text;
  CHECK(parse({"--plugin-dir", "p"}, &a, &text) == ToolArguments::Parsed::Error);
  CHECK_THAT(text, Catch::Contains("session"));
  CHECK(parse({"--help", "--plugin-dir", "/x"}, &a, &text) == ToolArguments::Parsed::Help);
  CHECK_THAT(text, Catch::Contains("--transport"));
  CHECK(a.plugin_dir == "/x");
}
