// Planning a run alone (launcher/planning.h): what vcx-run refuses before
// anything starts, with which exit code and which advice, and the plan it
// makes of a good command line, against the real build (its plugins, its
// test programs, this machine's mpiexec).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include "launcher/planning.h"
#include "support/temp_dir.h"

#ifndef VCX_BIN_DIR
#error "the unit tests are built with VCX_BIN_DIR"
#endif

namespace {

using vcx::launcher::Environment;
using vcx::launcher::Planned;

const std::string kBinDir = VCX_BIN_DIR;
const std::string kPrograms = kBinDir + "/../tests/programs";

Environment machine_env(std::vector<std::string> more = {}) {
  const char* path = std::getenv("PATH");
  std::vector<std::string> entries{std::string("PATH=") + (path ? path : "")};
  entries.insert(entries.end(), more.begin(), more.end());
  return Environment(entries);
}

Planned plan(std::vector<std::string> args, const Environment& env = machine_env(),
             const std::string& bindir = kBinDir) {
  const vcx::launcher::ParseResult parsed = vcx::launcher::parse_command_line(args, env);
  REQUIRE(parsed.ok());
  return vcx::launcher::make_plan(parsed.options, env, bindir);
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("planning: an MPI program under hydra", "[launcher][planning]") {
  const Planned p = plan({"-n", "3", "/bin/true", "a", "b"});
  REQUIRE(p.plan);
  CHECK(p.error.empty());
  CHECK(p.plan->program == "/bin/true");
  CHECK(p.plan->model == vcx::launcher::ProgramModel::Mpi);
  CHECK(p.plan->launcher == vcx::launcher::LauncherKind::Hydra);
  CHECK(p.plan->launcher_program == p.plan->paths.mpiexec);
  CHECK(p.plan->options.nprocs == 3);
  CHECK(p.plan->options.program_args == std::vector<std::string>{"a", "b"});
}

TEST_CASE("planning: the analyses on by default", "[launcher][planning]") {
  // The deadlock analysis runs unless --no-analysis leaves it out; its tools
  // load it after the analyses asked for.
  Planned p = plan({"-n", "2", "--analysis", "race", "/bin/true"});
  REQUIRE(p.plan);
  CHECK(p.plan->options.analyses == std::vector<std::string>{"race", "deadlock"});
  CHECK(p.plan->options.analyses_by_default == std::vector<std::string>{"deadlock"});
  CHECK(vcx::launcher::module_list(p.plan->options) ==
        std::vector<std::string>{"race", "deadlock"});
  // Asked for, it is no default: its report is said even when it is empty.
  p = plan({"-n", "2", "--analysis", "deadlock", "/bin/true"});
  REQUIRE(p.plan);
  CHECK(p.plan->options.analyses == std::vector<std::string>{"deadlock"});
  CHECK(p.plan->options.analyses_by_default.empty());
  p = plan({"-n", "2", "--no-analysis", "deadlock", "/bin/true"});
  REQUIRE(p.plan);
  CHECK(p.plan->options.analyses.empty());
  CHECK(vcx::launcher::module_list(p.plan->options).empty());
  // --report alone writes the findings of those on by default.
  p = plan({"-n", "2", "--report", "x.json", "/bin/true"});
  REQUIRE(p.plan);
  CHECK(p.plan->options.analyses == std::vector<std::string>{"deadlock"});
}

TEST_CASE("planning: what is refused before anything starts, and why", "[launcher][planning]") {
  vcx::test::TempDir dir;
  SECTION("a program that is not there") {
    const Planned p = plan({"-n", "2", dir.at("missing")});
    CHECK_FALSE(p.plan);
    CHECK(p.exit_code == vcx::launcher::kExitNotFound);
    CHECK(contains(p.error, dir.at("missing")));
  }
  SECTION("an installation vcx-run cannot find") {
    const Planned p = plan({"-n", "2", "/bin/true"}, machine_env(), "");
    CHECK_FALSE(p.plan);
    CHECK(p.exit_code == vcx::launcher::kExitToolFailure);
    CHECK(contains(p.error, "cannot tell where vcx-run is installed"));
  }
  SECTION("a timeout that is not a number") {
    const Planned p = plan({"-n", "2", "/bin/true"}, machine_env({"VCX_START_TIMEOUT=soon"}));
    CHECK_FALSE(p.plan);
    CHECK(p.exit_code == vcx::launcher::kExitUsage);
    CHECK(contains(p.error, "VCX_START_TIMEOUT"));
  }
  SECTION("a module that is not installed, with the ones that are") {
    const Planned p = plan({"-n", "2", "--modules", "nosuchmodule", "/bin/true"});
    CHECK_FALSE(p.plan);
    CHECK(p.exit_code == vcx::launcher::kExitUsage);
    CHECK(contains(p.error, "no module 'nosuchmodule'"));
    CHECK(contains(p.error, "available: "));
    CHECK(contains(p.error, "trace"));
  }
  SECTION("an analysis that is not installed, with the ones that are") {
    const Planned p = plan({"-n", "2", "--analysis", "race,deadlocks", "/bin/true"});
    CHECK_FALSE(p.plan);
    CHECK(p.exit_code == vcx::launcher::kExitUsage);
    CHECK(p.error ==
          "--analysis: there is no analysis 'deadlocks' (available: deadlock, matches, race)");
  }
  SECTION("--no-analysis of an analysis that is not there, or not on by default") {
    Planned p = plan({"-n", "2", "--no-analysis", "deadlocks", "/bin/true"});
    CHECK_FALSE(p.plan);
    CHECK(p.exit_code == vcx::launcher::kExitUsage);
    CHECK(p.error ==
          "--no-analysis: there is no analysis 'deadlocks' (available: deadlock, matches, race)");
    p = plan({"-n", "2", "--no-analysis", "race", "/bin/true"});
    CHECK_FALSE(p.plan);
    CHECK(p.error ==
          "--no-analysis: the race analysis is not on by default (it runs only when --analysis "
          "names it)");
  }
  SECTION("--report with every analysis left out") {
    const Planned p = plan({"-n", "2", "--no-analysis", "deadlock", "--report", "x.json",
                            "/bin/true"});
    CHECK_FALSE(p.plan);
    CHECK(p.error ==
          "--report writes the findings of analyses: add one with --analysis (e.g. race)");
  }
  SECTION("a module that is no analysis") {
    const Planned p = plan({"-n", "2", "--analysis", "trace", "/bin/true"});
    CHECK_FALSE(p.plan);
    CHECK(contains(p.error, "there is no analysis 'trace'"));
  }
  SECTION("an option no installed plugin declares") {
    const Planned p = plan({"-n", "2", "--option", "vclock.nosuch=1", "/bin/true"});
    CHECK_FALSE(p.plan);
    CHECK(p.exit_code == vcx::launcher::kExitUsage);
    CHECK(contains(p.error, "--option"));
    CHECK(contains(p.error, "vclock.nosuch"));
  }
  SECTION("hosts for hydra given to Slurm") {
    const std::string hosts = dir.file("hosts", "localhost\n");
    const Planned p = plan({"-n", "2", "--launcher", "slurm", "--hostfile", hosts, "/bin/true"});
    CHECK_FALSE(p.plan);
    CHECK(p.exit_code == vcx::launcher::kExitUsage);
    CHECK(contains(p.error, "--hostfile is for hydra"));
  }
}

#ifdef VCX_TEST_SHMEM_TRANSLATOR
TEST_CASE("planning: an OpenSHMEM program goes to oshrun, and nowhere else",
          "[launcher][planning]") {
  const std::string program = kPrograms + "/vcx-test-shmem_locks";
  const Planned p = plan({"-n", "2", program});
  REQUIRE(p.plan);
  CHECK(p.plan->model == vcx::launcher::ProgramModel::Shmem);
  CHECK(p.plan->launcher == vcx::launcher::LauncherKind::OpenMpi);
  CHECK(p.plan->launcher_program == p.plan->paths.oshrun);

  const Planned hydra = plan({"-n", "2", "--launcher", "hydra", program});
  CHECK_FALSE(hydra.plan);
  CHECK(hydra.exit_code == vcx::launcher::kExitUsage);
  CHECK(contains(hydra.error, "it runs under oshrun"));

  // Several programs (':') run only under MPICH's mpiexec.
  const Planned mpmd = plan({"-n", "1", "/bin/true", ":", "-n", "1", program});
  CHECK_FALSE(mpmd.plan);
  CHECK(mpmd.exit_code == vcx::launcher::kExitUsage);
  CHECK(contains(mpmd.error, "several programs"));
}
#endif
