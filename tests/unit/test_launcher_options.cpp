// vcx-run's command line: the mpiexec-like split between launcher options and
// the program, and the errors users get.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include <catch2/catch.hpp>

#include "launcher/launcher.h"
#include "launcher/options.h"

using namespace vcx::launcher;
using vcx::session::Channel;
using vcx::session::Stall;
using vcx::session::Transport;

namespace {
ParseResult parse(std::vector<std::string> args) { return parse_command_line(args); }
}  // namespace

TEST_CASE("launcher options: the program and its arguments", "[launcher]") {
  auto r = parse({"-n", "4", "./app", "a", "b"});
  REQUIRE(r.ok());
  CHECK(r.options.nprocs == 4);
  CHECK(r.options.program == "./app");
  CHECK(r.options.program_args == std::vector<std::string>{"a", "b"});
  CHECK_FALSE(r.options.trace_dir);
  CHECK(r.options.stall == Stall::Auto);  // the tools choose
  CHECK_FALSE(r.options.verbose);
  CHECK_FALSE(r.options.keep_session);
}

TEST_CASE("launcher options: spellings of the rank count", "[launcher]") {
  for (const auto& args : std::vector<std::vector<std::string>>{{"-n", "3", "p"},
                                                                {"-np", "3", "p"},
                                                                {"-n3", "p"},
                                                                {"--np", "3", "p"},
                                                                {"--np=3", "p"},
                                                                {"-np=3", "p"}}) {
    auto r = parse(args);
    INFO(args[0]);
    REQUIRE(r.ok());
    CHECK(r.options.nprocs == 3);
    CHECK(r.options.program == "p");
  }
}

TEST_CASE("launcher options: everything after the program belongs to it", "[launcher]") {
  auto r = parse({"-n", "2", "prog", "-n", "5", "--trace", "x", "--", "-v"});
  REQUIRE(r.ok());
  CHECK(r.options.nprocs == 2);
  CHECK_FALSE(r.options.trace_dir);
  CHECK_FALSE(r.options.verbose);
  CHECK(r.options.program_args == std::vector<std::string>{"-n", "5", "--trace", "x", "--", "-v"});
}

TEST_CASE("launcher options: -- ends the launcher's options", "[launcher]") {
  auto r = parse({"-n", "2", "-v", "--", "-weird", "-x", "--"});
  REQUIRE(r.ok());
  CHECK(r.options.verbose);
  CHECK(r.options.program == "-weird");
  CHECK(r.options.program_args == std::vector<std::string>{"-x", "--"});
}

TEST_CASE("launcher options: all flags", "[launcher]") {
  auto r = parse({"-vn", "2", "--trace", "out", "--no-stall", "--modules", "race,matches",
                  "--modules=extra", "--keep-session", "app"});
  REQUIRE(r.ok());
  CHECK(r.options.nprocs == 2);
  CHECK(r.options.verbose);
  CHECK(r.options.trace_dir == std::optional<std::string>("out"));
  CHECK(r.options.stall == Stall::Never);
  CHECK(r.options.keep_session);
  CHECK(r.options.extra_modules == std::vector<std::string>{"race", "matches", "extra"});
  CHECK(module_list(r.options) ==
        std::vector<std::string>{"trace", "race", "matches", "extra"});
}

TEST_CASE("launcher options: --view draws the trace, so it needs --trace", "[launcher]") {
  const auto r = parse({"--trace", "out", "--view", "app"});
  REQUIRE(r.ok());
  CHECK(r.options.view);
  CHECK_FALSE(parse({"--trace", "out", "app"}).options.view);
  CHECK_THAT(parse({"--view", "app"}).error, Catch::Contains("--trace DIR"));
}

TEST_CASE("launcher options: --stall and its old spelling --no-stall", "[launcher]") {
  CHECK(parse({"--stall", "waits", "app"}).options.stall == Stall::Waits);
  CHECK(parse({"--stall=never", "app"}).options.stall == Stall::Never);
  CHECK(parse({"--no-stall", "app"}).options.stall == Stall::Never);
  CHECK(parse({"--no-stall", "--stall", "never", "app"}).options.stall == Stall::Never);
  CHECK_THAT(parse({"--stall", "sometimes", "app"}).error,
             Catch::Contains("--stall") && Catch::Contains("waits"));
  CHECK_THAT(parse({"--no-stall", "--stall", "waits", "app"}).error,
             Catch::Contains("contradict"));
  CHECK(parse({"--tool-backlog", "100", "app"}).options.tool_backlog == 100u);
  CHECK_THAT(parse({"--tool-backlog", "0", "app"}).error, Catch::Contains("at least 1"));
}

TEST_CASE("launcher options: module list", "[launcher]") {
  auto r = parse({"-n", "1", "--modules", " trace , vclock,,race ", "app"});
  REQUIRE(r.ok());
  CHECK(module_list(r.options) == std::vector<std::string>{"trace", "race"});
  auto plain = parse({"-n", "1", "app"});
  CHECK(module_list(plain.options).empty());  // the engine is no module
}

TEST_CASE("launcher options: help wins over everything else", "[launcher]") {
  CHECK(parse({"--help"}).options.help);
  CHECK(parse({"-h"}).options.help);
  CHECK(parse({"-n", "x", "--bogus", "--help"}).options.help);
  // After the program, --help is the program's.
  auto r = parse({"-n", "2", "app", "--help"});
  CHECK_FALSE(r.options.help);
  CHECK(r.ok());
  const std::string text = usage_text(
      {"trace", "extra"},
      {{"race", "data races", false}, {"matches", "wildcard receives", false}, {"dl", "dls", true}});
  for (const char* word : {"--trace", "--no-stall", "--modules", "--keep-session", "--verbose",
                           "-n", "64", "70", "127", "128+S", "VCX_START_TIMEOUT", "--version"})
    CHECK(text.find(word) != std::string::npos);
  // The help names the modules and the analyses installed, and no other.
  CHECK(text.find("installed for --modules: trace, extra") != std::string::npos);
  CHECK(text.find("--analysis") != std::string::npos);
  CHECK(text.find("Analyses (--analysis):\n  race: data races\n  matches: wildcard receives\n"
                  "  dl (on by default): dls\n") != std::string::npos);
  CHECK(text.find("--no-analysis") != std::string::npos);
  CHECK(text.find("deadlock") == std::string::npos);
  CHECK(usage_text({}, {}).find("installed for --modules: none") != std::string::npos);
  CHECK(usage_text({}, {}).find("Analyses (--analysis):\n  none installed") != std::string::npos);
}

TEST_CASE("launcher options: --version, and one rank unless -n says otherwise", "[launcher]") {
  CHECK(parse({"--version"}).options.version);
  CHECK(parse({"-n", "2", "--version"}).options.version);
  CHECK_FALSE(parse({"-n", "2", "app", "--version"}).options.version);  // the program's
  auto r = parse({"app", "x"});
  REQUIRE(r.ok());
  CHECK(r.options.nprocs == 1);
  CHECK(r.options.program == "app");
  // As with mpiexec, what follows the program is the program's.
  auto late = parse({"app", "-n", "2"});
  REQUIRE(late.ok());
  CHECK(late.options.nprocs == 1);
  CHECK(late.options.program_args == std::vector<std::string>{"-n", "2"});
}

TEST_CASE("launcher options: several programs, separated by ':'", "[launcher]") {
  auto r = parse({"-n", "2", "a", "x", ":", "-n", "3", "-env", "A", "1 2", "b", "y", ":", "c"});
  REQUIRE(r.ok());
  CHECK(r.options.program == "a");
  CHECK(r.options.program_args == std::vector<std::string>{"x"});
  CHECK(r.options.first_nprocs == 2);
  CHECK(r.options.nprocs == 6);  // 2 + 3 + 1: the tool job gets every rank
  REQUIRE(r.options.more_programs.size() == 2);
  const AppSegment& b = r.options.more_programs[0];
  CHECK(b.nprocs == 3);
  CHECK(b.program == "b");
  CHECK(b.program_args == std::vector<std::string>{"y"});
  CHECK(b.env == std::vector<std::pair<std::string, std::string>>{{"A", "1 2"}});
  CHECK(r.options.more_programs[1].program == "c");
  CHECK(r.options.more_programs[1].nprocs == 1);
  CHECK(r.options.more_programs[1].program_args.empty());
  // -np and -n=N after ':' too.
  auto np = parse({"a", ":", "-np", "4", "b", ":", "-n=2", "c"});
  REQUIRE(np.ok());
  CHECK(np.options.nprocs == 7);
  // Without ':' nothing changes.
  auto one = parse({"-n", "2", "a", "x"});
  CHECK(one.options.more_programs.empty());
  CHECK(one.options.first_nprocs == 2);

  for (const auto& bad : std::vector<std::vector<std::string>>{
           {"a", ":"}, {"a", ":", ":", "b"}, {"a", ":", "-n", "0", "b"},
           {"a", ":", "-n"}, {"a", ":", "-bogus", "b"}, {"a", ":", "-env", "A"}}) {
    auto e = parse(bad);
    INFO(e.error);
    CHECK_FALSE(e.ok());
    CHECK(e.error.find('\n') == std::string::npos);
  }
}

TEST_CASE("launcher options: mpiexec's spellings for the application job", "[launcher]") {
  auto r = parse({"-n=3", "-genv", "A", "1", "-env", "B", "two words", "-genvall", "-l",
                  "-bind-to", "core", "--launcher-args", "-iface  eth0", "app", "-l"});
  REQUIRE(r.ok());
  CHECK(r.options.nprocs == 3);
  CHECK(r.options.app_env ==
        std::vector<std::pair<std::string, std::string>>{{"A", "1"}, {"B", "two words"}});
  CHECK(r.options.prepend_rank);
  CHECK(r.options.bind_to == std::optional<std::string>("core"));
  CHECK(r.options.launcher_args == std::vector<std::string>{"-iface", "eth0"});
  CHECK(r.options.program_args == std::vector<std::string>{"-l"});  // the program's
  CHECK(parse({"-prepend-rank", "app"}).options.prepend_rank);
  CHECK_FALSE(parse({"app"}).options.prepend_rank);

  for (const auto& bad : std::vector<std::vector<std::string>>{
           {"-genv", "A"}, {"-bind-to"}, {"-bind-to", "core", "--placement", "split", "app"}}) {
    auto e = parse(bad);
    INFO(e.error);
    CHECK_FALSE(e.ok());
    CHECK(e.error.find('\n') == std::string::npos);
  }
  CHECK(parse({"-bind-to", "core", "--placement", "split", "app"}).error.find("both bind") !=
        std::string::npos);
}

TEST_CASE("launcher options: usage errors are one line", "[launcher]") {
  struct Case {
    std::vector<std::string> args;
    const char* expected;
  };
  const std::vector<Case> cases{
      {{}, "no program given"},
      {{"-n", "2"}, "no program given"},
      {{"-n", "0", "app"}, "positive whole number"},
      {{"-n", "-1", "app"}, ""},
      {{"-n", "abc", "app"}, "not 'abc'"},
      {{"-n", "2x", "app"}, "not '2x'"},
      {{"-n", "99999999999", "app"}, "positive whole number"},
      {{"--bogus", "-n", "2", "app"}, "--bogus"},
      {{"-n", "2", "--trace"}, "--trace"},
      {{"-n", "2", "--trace=", "app"}, "--trace"},
      {{"-n", "2", "--modules", "a/b", "app"}, "not a module name"},
      {{"-n", "2", "-n", "3", "app"}, "more than once"},
      {{"-n", "2", "--no-stall=yes", "app"}, ""},
  };
  for (const auto& c : cases) {
    auto r = parse(c.args);
    INFO("args: " << (c.args.empty() ? std::string("(none)") : c.args[0]) << " ... -> " << r.error);
    CHECK_FALSE(r.ok());
    CHECK(r.error.find('\n') == std::string::npos);
    CHECK(r.error.find(c.expected) != std::string::npos);
  }
}

TEST_CASE("launcher options: seconds from the environment", "[launcher]") {
  CHECK(parse_seconds("60") == std::optional<double>(60.0));
  CHECK(parse_seconds(" 0.5 ") == std::optional<double>(0.5));
  CHECK(parse_seconds("0") == std::optional<double>(0.0));
  CHECK_FALSE(parse_seconds(""));
  CHECK_FALSE(parse_seconds("abc"));
  CHECK_FALSE(parse_seconds("5s"));
  CHECK_FALSE(parse_seconds("-1"));
  CHECK_FALSE(parse_seconds("inf"));
  CHECK_FALSE(parse_seconds("nan"));

  Timeouts t;
  CHECK_FALSE(read_timeouts(Environment({"VCX_START_TIMEOUT=1.5", "VCX_STOP_TIMEOUT=2"}), &t));
  CHECK(t.start.count() == 1500);
  CHECK(t.stop.count() == 2000);
  Timeouts d;
  CHECK_FALSE(read_timeouts(Environment({"VCX_START_TIMEOUT="}), &d));
  CHECK(d.start.count() == 60000);
  auto err = read_timeouts(Environment({"VCX_STOP_TIMEOUT=soon"}), &d);
  REQUIRE(err);
  CHECK(err->find("VCX_STOP_TIMEOUT") != std::string::npos);
}

TEST_CASE("launcher options: analyses, their report and exit code", "[launcher]") {
  auto r = parse({"--analysis", "race", "--report", "out.json", "--race-exit-code", "66", "-n",
                  "2", "./app"});
  REQUIRE(r.ok());
  CHECK(r.options.analyses == std::vector<std::string>{"race"});
  CHECK(r.options.report_file == std::optional<std::string>("out.json"));
  CHECK(r.options.race_exit_code == std::optional<int>(66));
  // The analysis is a module the tools load, once.
  const auto mods = module_list(r.options);
  CHECK(std::count(mods.begin(), mods.end(), "race") == 1);
  auto twice = parse({"--analysis", "race,race", "--modules", "race", "./app"});
  REQUIRE(twice.ok());
  const auto mods2 = module_list(twice.options);
  CHECK(std::count(mods2.begin(), mods2.end(), "race") == 1);

  // Which analyses are installed, the plan knows (test_launcher_planning).
  auto odd = parse({"--analysis", "ra ce", "./app"});
  CHECK(odd.error ==
        "--analysis: 'ra ce' is not an analysis name (letters, digits, '_', '-', '.')");
  auto both = parse({"--analysis", "matches,race", "--report", "out.json", "./app"});
  REQUIRE(both.ok());
  CHECK(both.options.analyses == std::vector<std::string>{"matches", "race"});
  // --report alone may write the findings of the analyses on by default
  // (the plan knows them).
  CHECK(parse({"--report", "x.json", "./app"}).ok());
  CHECK(parse({"--leave-stopped", "./app"}).options.leave_stopped);
  CHECK_FALSE(parse({"./app"}).options.leave_stopped);
  auto off = parse({"--no-analysis", "deadlock", "--no-analysis", "x,deadlock", "./app"});
  REQUIRE(off.ok());
  CHECK(off.options.analyses_off == std::vector<std::string>{"deadlock", "x"});
  CHECK(off.options.analyses.empty());
  CHECK(parse({"--analysis", "deadlock", "--no-analysis", "deadlock", "./app"}).error ==
        "--analysis and --no-analysis both name 'deadlock': leave out one of them");
  CHECK(parse({"--no-analysis", "dead lock", "./app"}).error.find("is not an analysis name") !=
        std::string::npos);
  auto bad_code = parse({"--analysis", "race", "--race-exit-code", "300", "./app"});
  CHECK(bad_code.error.find("0..255") != std::string::npos);
  auto code_alone = parse({"--race-exit-code", "3", "./app"});
  CHECK(code_alone.error.find("--analysis race") != std::string::npos);
}

TEST_CASE("launcher options: --force-match and --force-match-file", "[launcher]") {
  auto r = parse({"-n", "3", "--force-match", "1:0=2", "--force-match", "2:7=0,1:3=1", "./app"});
  REQUIRE(r.ok());
  REQUIRE(r.options.forced_matches.size() == 3);
  CHECK(r.options.forced_matches[1].rank == 2);
  CHECK(r.options.forced_matches[1].index == 7);
  CHECK(r.options.forced_matches[1].source == 0);
  CHECK(parse({"-n", "3", "--force-match", "1:0", "./app"}).error.find("is not R:I=S") !=
        std::string::npos);
  CHECK(parse({"-n", "3", "--force-match", "1:0=3", "./app"}).error.find("outside the 3") !=
        std::string::npos);
  CHECK(parse({"-n", "3", "--force-match", "1:0=2,1:0=1", "./app"})
            .error.find("forced to two sources") != std::string::npos);
  const std::string file = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
                           "/vcx-force-match-test.txt";
  {
    std::ofstream f(file);
    f << "0:1=2\n1:0=0, 2:2=1\n";
  }
  auto from_file = parse({"-n", "3", "--force-match-file", file, "./app"});
  REQUIRE(from_file.ok());
  CHECK(from_file.options.forced_matches.size() == 3);
  std::remove(file.c_str());
  CHECK(parse({"-n", "3", "--force-match-file", file, "./app"}).error.find("cannot read") !=
        std::string::npos);
}

TEST_CASE("launcher options: --explore", "[launcher]") {
  auto r = parse({"-n", "3", "--explore", "20", "./app"});
  REQUIRE(r.ok());
  CHECK(r.options.explore == 20);
  CHECK(parse({"--explore", "0", "./app"}).error.find("1..100000") != std::string::npos);
  CHECK(parse({"--explore", "x", "./app"}).error.find("1..100000") != std::string::npos);
  CHECK(parse({"--explore", "3", "--analysis", "matches", "--report", "r.json", "./app"})
            .error.find("leave out --report") != std::string::npos);
}
