// vcx-run's settings beyond the basics: placement files and the binding they
// become, host files, the environment and config files, and the two commands.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "launcher/launcher.h"
#include "launcher/options.h"
#include "launcher/placement.h"
#include "support/temp_dir.h"

using namespace vcx::launcher;
using vcx::session::Channel;
using vcx::session::Stall;
using vcx::session::Transport;
namespace fs = std::filesystem;

namespace {

using vcx::test::TempDir;

std::string shipped_config_dir() { return std::string(VCX_SOURCE_DIR) + "/config"; }

const std::vector<int> kFourCpus{0, 1, 2, 3};

}  // namespace

TEST_CASE("launcher placement: core lists", "[launcher][placement]") {
  std::string err;
  CHECK(parse_cores("all", kFourCpus, &err) == kFourCpus);
  CHECK(parse_cores("first-half", kFourCpus, &err) == std::vector<int>{0, 1});
  CHECK(parse_cores("second-half", kFourCpus, &err) == std::vector<int>{2, 3});
  CHECK(parse_cores("first-half", {4, 5, 6}, &err) == std::vector<int>{4, 5});
  CHECK(parse_cores("second-half", {4, 5, 6}, &err) == std::vector<int>{6});
  CHECK(parse_cores(" 0-2, 8 ,10-11", kFourCpus, &err) == std::vector<int>{0, 1, 2, 8, 10, 11});
  for (const char* bad : {"", "3-1", "x", "1,,2", "-1", "1-", "99999999"}) {
    INFO(bad);
    err.clear();
    CHECK_FALSE(parse_cores(bad, kFourCpus, &err));
    CHECK_FALSE(err.empty());
  }
  err.clear();
  CHECK_FALSE(parse_cores("second-half", {0}, &err));
  CHECK_THAT(err, Catch::Contains("shared placement"));
}

TEST_CASE("launcher placement: the shipped split and shared files", "[launcher][placement]") {
  const auto split = resolve_placement("split", shipped_config_dir(), kFourCpus);
  REQUIRE(split.ok());
  CHECK(split.placement.app_cores == std::vector<int>{0, 1});
  CHECK(split.placement.tool_cores == std::vector<int>{2, 3});
  const auto shared = resolve_placement("shared", shipped_config_dir(), kFourCpus);
  REQUIRE(shared.ok());
  CHECK(shared.placement.app_cores == kFourCpus);
  CHECK(shared.placement.tool_cores == kFourCpus);
  const auto none = resolve_placement("none", "/nonexistent", kFourCpus);
  REQUIRE(none.ok());
  CHECK(none.placement.app_cores.empty());
  CHECK(none.placement.tool_cores.empty());
  // The template documents every key but sets none.
  const auto tmpl = resolve_placement(shipped_config_dir() + "/template.ini", "", kFourCpus);
  CHECK_THAT(tmpl.error, Catch::Contains("no [placement] section"));
}

TEST_CASE("launcher placement: a placement file of one's own", "[launcher][placement]") {
  TempDir dir;
  const auto own = resolve_placement(
      dir.file("p.ini", "# mine\nnp = 4\n[placement]\napp-cores = 0,2\ntool-cores = 1-3\n"), "",
      kFourCpus);
  REQUIRE(own.ok());
  CHECK(own.placement.app_cores == std::vector<int>{0, 2});
  CHECK(own.placement.tool_cores == std::vector<int>{1, 2, 3});
  // Only the tools bound.
  const auto tools_only =
      resolve_placement(dir.file("t.ini", "[placement]\ntool-cores = 3\n"), "", kFourCpus);
  REQUIRE(tools_only.ok());
  CHECK(tools_only.placement.app_cores.empty());
  CHECK(tools_only.placement.tool_cores == std::vector<int>{3});

  CHECK_THAT(resolve_placement(dir.file("typo.ini", "[placement]\napp-core = 1\n"), "", kFourCpus)
                 .error,
             Catch::Contains("unknown key 'app-core'"));
  CHECK_THAT(
      resolve_placement(dir.file("bad.ini", "[placement]\napp-cores = 2-1\n"), "", kFourCpus).error,
      Catch::Contains("app-cores"));
  CHECK_THAT(resolve_placement(dir.at("missing.ini"), "", kFourCpus).error,
             Catch::Contains("cannot read the placement file"));
}

TEST_CASE("launcher placement: binding options per launcher", "[launcher][placement]") {
  CHECK(binding_args(LauncherKind::Hydra, {}, 4).empty());
  // Hydra leaves ranks past its list unbound: the list covers every rank.
  CHECK(binding_args(LauncherKind::Hydra, {2, 3}, 5) ==
        std::vector<std::string>{"-bind-to", "user:2,3,2,3,2"});
  CHECK(binding_args(LauncherKind::Slurm, {0, 1}, 3) ==
        std::vector<std::string>{"--cpu-bind=map_cpu:0,1,0"});
  // Open MPI binds local rank i to the i-th lowest core, one rank per core:
  // the list is sorted, and more ranks than cores bind nothing.
  CHECK(binding_args(LauncherKind::OpenMpi, {3, 1}, 2) ==
        std::vector<std::string>{"--cpu-list", "1,3", "--bind-to", "cpu-list:ordered"});
  CHECK(binding_args(LauncherKind::OpenMpi, {0, 1}, 3) ==
        std::vector<std::string>{"--bind-to", "none"});
}

TEST_CASE("launcher placement: host files and runs across nodes", "[launcher][placement]") {
  TempDir dir;
  const auto two = read_hostfile(
      dir.file("h", "# cluster\nnode1:4\n\n  node2 # second\nnode1:2\n"));
  REQUIRE(two.error.empty());
  CHECK(two.hosts == std::vector<std::string>{"node1", "node2"});
  CHECK_THAT(read_hostfile(dir.file("empty", "# nothing\n\n")).error,
             Catch::Contains("names no host"));
  CHECK_THAT(read_hostfile(dir.at("missing")).error,
             Catch::Contains("cannot read the host file"));

  std::string err;
  LaunchOptions o;
  o.hostfile = dir.file("one", "node1:4\n");
  CHECK_FALSE(spans_nodes(o, Environment(), &err));
  o.hostfile = dir.at("h");
  CHECK(spans_nodes(o, Environment(), &err));
  // The host file that the multi-node integration tests use.
  o.hostfile = std::string(VCX_SOURCE_DIR) + "/tests/integration/hosts-two-local.txt";
  CHECK(spans_nodes(o, Environment(), &err));
  CHECK(err.empty());
  o.hostfile.reset();
  CHECK_FALSE(spans_nodes(o, Environment(), &err));
  CHECK(spans_nodes(o, Environment({"SLURM_JOB_NUM_NODES=3"}), &err));
  CHECK_FALSE(spans_nodes(o, Environment({"SLURM_JOB_NUM_NODES=1"}), &err));

  // mpiexec's -hosts list.
  const auto list = parse_host_list("node1:4,node2,node1:2");
  REQUIRE(list.error.empty());
  CHECK(list.entries == std::vector<std::string>{"node1:4", "node2", "node1:2"});
  CHECK(list.hosts == std::vector<std::string>{"node1", "node2"});
  for (const char* bad : {"", "a,,b", ":4", "a, b", "a,b,", ",a", "a:", "a:x", "a:0", "a:4:5"})
    CHECK_THAT(parse_host_list(bad).error, Catch::Contains("-hosts"));
  o.hosts = "localhost:2,127.0.0.1:2";
  CHECK(spans_nodes(o, Environment(), &err));
  o.hosts = "node1:2,node1:2";
  CHECK_FALSE(spans_nodes(o, Environment(), &err));
}

TEST_CASE("launcher settings: mpiexec's -hosts", "[launcher]") {
  for (const auto& args : {std::vector<std::string>{"-hosts", "a:2,b:2", "./app"},
                           std::vector<std::string>{"-hosts=a:2,b:2", "./app"},
                           std::vector<std::string>{"--hosts", "a:2,b:2", "./app"}}) {
    const auto r = parse_command_line(args);
    REQUIRE(r.ok());
    CHECK(r.options.hosts == "a:2,b:2");
    CHECK_FALSE(r.options.hostfile);
    CHECK(r.options.program == "./app");
  }
  CHECK_THAT(parse_command_line({"-f", "h", "-hosts", "a", "./app"}).error,
             Catch::Contains("give one of them"));
  CHECK_THAT(parse_command_line({"-hosts", "a,,b", "./app"}).error,
             Catch::Contains("separated by commas"));

  // Both jobs get the list, so tool rank i runs on the host of rank i.
  Plan plan;
  plan.options.nprocs = 4;
  plan.options.hosts = "a:2,b:2";
  plan.paths.mpiexec = "mpiexec.mpich";
  plan.paths.toolproc = "vcx-toolproc";
  plan.program = "./app";
  plan.launcher = LauncherKind::Hydra;
  const std::vector<std::string> layout{"mpiexec.mpich", "-hosts", "a:2,b:2"};
  const auto tool = tool_command(plan, "S");
  const auto app = app_command(plan, "pre.so");
  CHECK(std::vector<std::string>(tool.begin(), tool.begin() + 3) == layout);
  CHECK(std::vector<std::string>(app.begin(), app.begin() + 3) == layout);
}

TEST_CASE("launcher settings: new flags and their errors", "[launcher]") {
  auto r = parse_command_line({"-n", "4", "-f", "hosts", "-ppn", "2", "--placement", "split",
                               "--channel", "tcp", "--transport", "mpi", "--launcher", "slurm",
                               "--on-tool-failure", "continue", "--dry-run", "./app"});
  REQUIRE(r.ok());
  CHECK(r.options.hostfile == "hosts");
  CHECK(r.options.ppn == 2);
  CHECK(r.options.placement == "split");
  CHECK(r.options.channel == Channel::Tcp);
  CHECK(r.options.transport == Transport::Mpi);
  CHECK(r.options.launcher == LauncherKind::Slurm);
  CHECK(r.options.on_tool_failure == OnToolFailure::Continue);
  CHECK(r.options.dry_run);
  auto d = parse_command_line({"-n", "2", "./app"});
  REQUIRE(d.ok());
  CHECK(d.options.placement == "none");
  CHECK(d.options.channel == Channel::Shm);
  CHECK(d.options.transport == Transport::Tcp);
  CHECK_FALSE(d.options.launcher);
  auto s = parse_command_line({"-n", "2", "--transport", "shm", "./app"});
  REQUIRE(s.ok());
  CHECK(s.options.transport == Transport::Shm);
  CHECK(d.options.on_tool_failure == OnToolFailure::Abort);

  const std::pair<std::vector<std::string>, const char*> bad[] = {
      {{"-n", "2", "--channel", "udp", "p"}, "--channel must be one of shm, tcp"},
      {{"-n", "2", "--transport", "udp", "p"}, "--transport must be one of tcp, shm, mpi"},
      {{"-n", "2", "--launcher", "lsf", "p"}, "--launcher must be one of"},
      {{"-n", "2", "-ppn", "0", "p"}, "-ppn needs a positive whole number"},
      {{"-n", "2", "--on-tool-failure", "ignore", "p"}, "abort, continue"},
      {{"-n", "2", "--placement", "", "p"}, "--placement needs"},
  };
  for (const auto& [args, text] : bad) {
    INFO(args[2]);
    auto e = parse_command_line(args);
    CHECK_THAT(e.error, Catch::Contains(text));
    CHECK(e.error.find('\n') == std::string::npos);
  }
}

TEST_CASE("launcher settings: command line over environment over config file", "[launcher]") {
  TempDir dir;
  const std::string cfg = dir.file("run.ini",
                                    "np = 3\nplacement = shared\nchannel = tcp\ntransport = mpi\n"
                                    "no-stall = true\nhostfile = hosts.txt\nmodules = a,b\n");
  // The file alone.
  auto f = parse_command_line({"--config", cfg, "./app"});
  REQUIRE(f.ok());
  CHECK(f.options.nprocs == 3);
  CHECK(f.options.placement == "shared");
  CHECK(f.options.channel == Channel::Tcp);
  CHECK(f.options.stall == Stall::Never);
  CHECK(f.options.extra_modules == std::vector<std::string>{"a", "b"});
  // A relative host file is taken from the config file's directory.
  CHECK(f.options.hostfile == dir.at("hosts.txt"));

  // The environment wins over the file, the command line over both.
  const Environment env({"VCX_CHANNEL=shm", "VCX_TRANSPORT=tcp", "VCX_NP=2",
                         "VCX_CONFIG=" + cfg, "VCX_START_TIMEOUT=5", "VCX_UNRELATED=x"});
  auto e = parse_command_line({"--transport", "mpi", "./app"}, env);
  REQUIRE(e.ok());
  CHECK(e.options.config_file == cfg);
  CHECK(e.options.nprocs == 2);
  CHECK(e.options.channel == Channel::Shm);
  CHECK(e.options.transport == Transport::Mpi);
  CHECK(e.options.placement == "shared");
  CHECK(e.options.stall == Stall::Never);
  // --stall from the environment or the command line wins over the file's
  // --no-stall.
  CHECK(parse_command_line({"--config", cfg, "./app"}, Environment({"VCX_STALL=waits"}))
            .options.stall == Stall::Waits);
  CHECK(parse_command_line({"--config", cfg, "--stall", "waits", "./app"}).options.stall ==
        Stall::Waits);

  // Boolean variables.
  CHECK(parse_command_line({"-n", "1", "p"}, Environment({"VCX_NO_STALL=1"})).options.stall ==
        Stall::Never);
  CHECK(parse_command_line({"-n", "1", "p"}, Environment({"VCX_NO_STALL=0"}))
            .options.stall == Stall::Auto);
  CHECK_THAT(parse_command_line({"-n", "1", "p"}, Environment({"VCX_NO_STALL=maybe"})).error,
             Catch::Contains("VCX_NO_STALL must be 1 or 0"));

  // Errors name the file.
  CHECK_THAT(parse_command_line({"-n", "1", "--config", dir.file("bad.ini", "colour = red\n"),
                                 "p"})
                 .error,
             Catch::Contains("bad.ini"));
  CHECK_THAT(
      parse_command_line({"-n", "1", "--config", dir.at("none.ini"), "p"}).error,
      Catch::Contains("cannot read the config file"));
}

TEST_CASE("launcher settings: a config file with a [placement] section places", "[launcher]") {
  TempDir dir;
  const std::string cfg = dir.file("run.ini", "[placement]\napp-cores = 0\ntool-cores = 1\n");
  auto r = parse_command_line({"-n", "2", "--config", cfg, "./app"});
  REQUIRE(r.ok());
  CHECK(r.options.placement == cfg);
  // An explicit placement still wins.
  CHECK(parse_command_line({"-n", "2", "--config", cfg, "--placement", "split", "./app"})
            .options.placement == "split");
  // The shipped split file works as a --config too.
  auto s = parse_command_line({"-n", "2", "--config", shipped_config_dir() + "/split-node.ini", "p"});
  REQUIRE(s.ok());
  CHECK(s.options.placement == shipped_config_dir() + "/split-node.ini");
}

TEST_CASE("launcher commands: both jobs share the layout; each gets its cores",
          "[launcher][placement]") {
  Plan plan;
  plan.options.nprocs = 3;
  plan.options.hostfile.emplace("hosts");
  plan.options.ppn = 2;
  plan.options.channel = Channel::Tcp;
  plan.options.transport = Transport::Mpi;
  plan.paths.mpiexec = "mpiexec.mpich";
  plan.paths.toolproc = "vcx-toolproc";
  plan.paths.plugin_dir = "plugins";
  plan.program = "./app";
  plan.options.program_args = {"x"};
  plan.placement.app_cores = {0};
  plan.placement.tool_cores = {1};
  plan.spans_nodes = true;
  const auto tool = tool_command(plan, "S");
  const std::vector<std::string> tool_head{"mpiexec.mpich", "-f",       "hosts",     "-ppn",
                                           "2",             "-n",       "3",         "-bind-to",
                                           "user:1,1,1",    "vcx-toolproc"};
  REQUIRE(tool.size() > tool_head.size());
  CHECK(std::vector<std::string>(tool.begin(), tool.begin() + 10) == tool_head);
  auto has = [&](const std::vector<std::string>& cmd, const std::vector<std::string>& seq) {
    return std::search(cmd.begin(), cmd.end(), seq.begin(), seq.end()) != cmd.end();
  };
  CHECK(has(tool, {"--channel", "tcp"}));
  CHECK(has(tool, {"--transport", "mpi"}));
  CHECK(has(tool, {"--bind", "0.0.0.0"}));
  CHECK(has(tool, {"--mpi-start"}));  // not through files a shared file system may show late

  plan.launcher = LauncherKind::Hydra;
  CHECK(app_command(plan, "pre.so") ==
        std::vector<std::string>{"mpiexec.mpich", "-f", "hosts", "-ppn", "2", "-genv", "LD_PRELOAD",
                                 "pre.so", "-n", "3", "-bind-to", "user:0,0,0", "./app", "x"});
  plan.launcher = LauncherKind::Slurm;
  plan.launcher_program = "srun";
  CHECK(app_command(plan, "pre.so") ==
        std::vector<std::string>{"srun", "-n", "3", "--ntasks-per-node=2",
                                 "--cpu-bind=map_cpu:0,0,0", "--export=ALL,LD_PRELOAD=pre.so",
                                 "./app", "x"});

  // Defaults add nothing the tool does not know.
  Plan plain;
  plain.options.nprocs = 2;
  plain.paths.mpiexec = "m";
  plain.paths.toolproc = "t";
  const auto t = tool_command(plain, "S");
  for (const char* flag : {"--channel", "--transport", "--bind", "-bind-to", "-f", "-ppn"})
    CHECK(std::find(t.begin(), t.end(), flag) == t.end());
}

TEST_CASE("launcher commands: tools that share the application's cores are told so",
          "[launcher][placement]") {
  const auto shared = resolve_placement("shared", shipped_config_dir(), kFourCpus);
  const auto split = resolve_placement("split", shipped_config_dir(), kFourCpus);
  REQUIRE(shared.ok());
  REQUIRE(split.ok());
  CHECK(tools_share_app_cores(shared.placement));
  CHECK_FALSE(tools_share_app_cores(split.placement));
  CHECK_FALSE(tools_share_app_cores(Placement{}));  // unbound: nothing known
  CHECK(tools_share_app_cores(Placement{"f", {0, 1, 2}, {2, 3}}));  // overlapping on core 2
  CHECK_FALSE(tools_share_app_cores(Placement{"f", {0, 1}, {}}));

  Plan plan;
  plan.options.nprocs = 2;
  plan.paths.mpiexec = "m";
  plan.paths.toolproc = "t";
  auto count = [](const std::vector<std::string>& cmd, const std::string& word) {
    return std::count(cmd.begin(), cmd.end(), word);
  };
  plan.placement = shared.placement;
  CHECK(count(tool_command(plan, "S"), "--shared-core") == 1);
  plan.placement = split.placement;
  CHECK(count(tool_command(plan, "S"), "--shared-core") == 0);
  // Unbound but more ranks and tools than cores on the node: shared as well.
  CHECK(oversubscribed(2, 2));
  CHECK(oversubscribed(3, 4));
  CHECK_FALSE(oversubscribed(1, 2));
  CHECK_FALSE(oversubscribed(2, 4));
  CHECK_FALSE(oversubscribed(0, 1));  // ranks per node not known
  Placement crowded;
  crowded.source = "none";
  crowded.oversubscribed = true;
  CHECK(tools_share_app_cores(crowded));
  plan.placement = crowded;
  CHECK(count(tool_command(plan, "S"), "--shared-core") == 1);
  plan.placement = split.placement;
  // Polling times go to the tools only when given; the application learns
  // its own from its tool.
  CHECK(count(tool_command(plan, "S"), "--spin-ns") == 0);
  CHECK(count(tool_command(plan, "S"), "--app-spin-ns") == 0);
  plan.options.tool_spin_ns = 0;
  plan.options.app_spin_ns = 5000;
  const auto t = tool_command(plan, "S");
  const std::vector<std::string> tool_spin{"--spin-ns", "0"}, app_spin{"--app-spin-ns", "5000"};
  CHECK(std::search(t.begin(), t.end(), tool_spin.begin(), tool_spin.end()) != t.end());
  CHECK(std::search(t.begin(), t.end(), app_spin.begin(), app_spin.end()) != t.end());
  plan.launcher = LauncherKind::Hydra;
  const auto a = app_command(plan, "pre.so");
  CHECK(count(a, "--app-spin-ns") == 0);
  CHECK(count(a, "5000") == 0);
}

TEST_CASE("launcher settings: polling times", "[launcher]") {
  auto r = parse_command_line({"-n", "2", "--tool-spin-ns", "0", "--app-spin-ns", "1500", "p"});
  REQUIRE(r.ok());
  CHECK(r.options.tool_spin_ns == 0u);
  CHECK(r.options.app_spin_ns == 1500u);
  auto d = parse_command_line({"-n", "2", "p"});
  REQUIRE(d.ok());
  CHECK_FALSE(d.options.tool_spin_ns);
  CHECK_FALSE(d.options.app_spin_ns);
  auto e = parse_command_line({"-n", "2", "p"}, Environment({"VCX_TOOL_SPIN_NS=30000"}));
  REQUIRE(e.ok());
  CHECK(e.options.tool_spin_ns == 30000u);
  for (const char* bad : {"-1", "1e3", "", "x", "2000000000", "18446744073709551616"}) {
    INFO(bad);
    auto b = parse_command_line({"-n", "2", "--app-spin-ns", bad, "p"});
    CHECK_THAT(b.error, Catch::Contains("--app-spin-ns needs a whole number of nanoseconds"));
    CHECK(b.error.find('\n') == std::string::npos);
  }
}

TEST_CASE("launcher settings: the memory for differential clocks", "[launcher]") {
  auto d = parse_command_line({"-n", "2", "p"});
  REQUIRE(d.ok());
  CHECK_FALSE(d.options.clock_diff_mib);
  auto r = parse_command_line({"-n", "2", "--clock-diff-mib", "0", "p"});
  REQUIRE(r.ok());
  CHECK(r.options.clock_diff_mib == 0u);
  auto e = parse_command_line({"-n", "2", "p"}, Environment({"VCX_CLOCK_DIFF_MIB=256"}));
  REQUIRE(e.ok());
  CHECK(e.options.clock_diff_mib == 256u);
  for (const char* bad : {"-1", "1.5", "", "x", "1048577"}) {
    INFO(bad);
    auto b = parse_command_line({"-n", "2", "--clock-diff-mib", bad, "p"});
    CHECK_THAT(b.error, Catch::Contains("--clock-diff-mib needs a whole number of MiB"));
    CHECK(b.error.find('\n') == std::string::npos);
  }
  // The tools get it as the engine's option, in bytes, and only when given.
  Plan plan;
  plan.options = d.options;
  const auto option_given = [](const std::vector<std::string>& cmd, const std::string& kv) {
    const std::vector<std::string> want{"--option", kv};
    return std::search(cmd.begin(), cmd.end(), want.begin(), want.end()) != cmd.end();
  };
  CHECK_FALSE(option_given(tool_command(plan, "S"), "vclock.diff-bytes=0"));
  plan.options.clock_diff_mib = 0;
  CHECK(option_given(tool_command(plan, "S"), "vclock.diff-bytes=0"));
  plan.options.clock_diff_mib = 3;
  CHECK(option_given(tool_command(plan, "S"), "vclock.diff-bytes=3145728"));
}

TEST_CASE("launcher settings: plugin options go to every tool", "[launcher]") {
  auto r = parse_command_line({"-n", "2", "--option", "vclock.ahead=0", "--option",
                               "trace.dir=a=b", "p"});
  REQUIRE(r.ok());
  CHECK(r.options.plugin_options == std::vector<std::string>{"vclock.ahead=0", "trace.dir=a=b"});
  Plan plan;
  plan.options = r.options;
  const auto cmd = tool_command(plan, "S");
  const std::vector<std::string> first{"--option", "vclock.ahead=0"};
  const std::vector<std::string> second{"--option", "trace.dir=a=b"};
  CHECK(std::search(cmd.begin(), cmd.end(), first.begin(), first.end()) != cmd.end());
  CHECK(std::search(cmd.begin(), cmd.end(), second.begin(), second.end()) != cmd.end());
  for (const char* bad : {"novalue", "=1"}) {
    INFO(bad);
    auto b = parse_command_line({"-n", "2", "--option", bad, "p"});
    CHECK_THAT(b.error, Catch::Contains("--option takes KEY=VALUE"));
  }
  // Command line only: not a setting of the environment.
  auto e = parse_command_line({"-n", "2", "p"}, Environment({"VCX_OPTION=vclock.ahead=0"}));
  CHECK(e.options.plugin_options.empty());
  CHECK(parse_command_line({"--help-plugins"}).options.help_plugins);
}

TEST_CASE("launcher settings: how blocking MPI calls wait", "[launcher]") {
  auto d = parse_command_line({"-n", "2", "p"});
  REQUIRE(d.ok());
  CHECK(d.options.app_yield == std::nullopt);
  auto r = parse_command_line({"-n", "2", "--app-yield", "off", "p"});
  REQUIRE(r.ok());
  CHECK(r.options.app_yield == false);
  auto bad = parse_command_line({"-n", "2", "--app-yield", "sometimes", "p"});
  CHECK_THAT(bad.error, Catch::Contains("app-yield"));
  Plan plan;
  plan.options = d.options;
  const auto has = [](const std::vector<std::string>& cmd, const std::string& v) {
    const std::vector<std::string> want{"--app-yield", v};
    return std::search(cmd.begin(), cmd.end(), want.begin(), want.end()) != cmd.end();
  };
  // auto: the tools decide from --shared-core.
  CHECK_FALSE(has(tool_command(plan, "S"), "on"));
  CHECK_FALSE(has(tool_command(plan, "S"), "off"));
  plan.options.app_yield = true;
  CHECK(has(tool_command(plan, "S"), "on"));
  plan.options.app_yield = false;
  CHECK(has(tool_command(plan, "S"), "off"));
}
