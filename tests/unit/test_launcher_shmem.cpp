// vcx-run and OpenSHMEM programs: telling them apart by the libraries they
// link, and the oshrun command that starts them.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "launcher/launcher.h"
#include "launcher/program_model.h"

using namespace vcx::launcher;
namespace fs = std::filesystem;

namespace {

bool contains_run(const std::vector<std::string>& cmd, const std::vector<std::string>& run) {
  return std::search(cmd.begin(), cmd.end(), run.begin(), run.end()) != cmd.end();
}

Plan shmem_plan() {
  Plan plan;
  plan.options.nprocs = 4;
  plan.options.on_tool_failure = OnToolFailure::Abort;
  plan.paths.mpiexec = "/usr/bin/mpiexec.mpich";
  plan.paths.toolproc = "/opt/vcx/bin/vcx-toolproc";
  plan.paths.plugin_dir = "/opt/vcx/lib/vcx";
  plan.paths.interceptor = "/opt/vcx/lib/vcx/libvcx-mpi-intercept.so";
  plan.paths.shmem_interceptor = "/opt/vcx/lib/vcx/libvcx-shmem-intercept.so";
  plan.paths.oshrun = "/usr/bin/oshrun";
  plan.program = "./app";
  plan.options.program_args = {"-x", "1"};
  plan.launcher = LauncherKind::OpenMpi;
  plan.launcher_program = plan.paths.oshrun;
  plan.model = ProgramModel::Shmem;
  plan.as_root = true;
  return plan;
}

}  // namespace

TEST_CASE("launcher shmem: programs are told apart by the libraries they link",
          "[launcher][shmem]") {
  const std::string shmem_lib = std::string(VCX_PLUGIN_DIR) + "/libvcx-shmem-intercept.so";
  const std::string mpi_lib = std::string(VCX_PLUGIN_DIR) + "/libvcx-mpi-intercept.so";
  // The MPI interceptor links MPICH, the SHMEM one Open MPI's liboshmem.
  CHECK(program_model(mpi_lib) == ProgramModel::Mpi);
  if (fs::exists(shmem_lib)) CHECK(program_model(shmem_lib) == ProgramModel::Shmem);
  bool readable = false;
  const auto needed = elf_needed(mpi_lib, &readable);
  CHECK(readable);
  CHECK(std::any_of(needed.begin(), needed.end(),
                    [](const std::string& n) { return n.rfind("libmpich", 0) == 0; }));

  char tmpl[] = "/tmp/vcx-shmem-test-XXXXXX";
  const int fd = ::mkstemp(tmpl);
  REQUIRE(fd >= 0);
  const std::string script = "#!/bin/sh\nexec ./app \"$@\"\n";
  CHECK(::write(fd, script.data(), script.size()) == static_cast<ssize_t>(script.size()));
  ::close(fd);
  CHECK(program_model(tmpl) == ProgramModel::Unknown);
  CHECK(program_model("/nonexistent/vcx-program") == ProgramModel::Unknown);
  std::remove(tmpl);
}

TEST_CASE("launcher shmem: the oshrun command", "[launcher][shmem]") {
  Plan plan = shmem_plan();
  const auto app = app_command(plan, plan.paths.shmem_interceptor);
  CHECK(app.front() == "/usr/bin/oshrun");
  CHECK(contains_run(app, {"--allow-run-as-root"}));
  CHECK(contains_run(app, {"--oversubscribe"}));
  // The platform's shmem_finalize crashes without it.
  CHECK(contains_run(app, {"--mca", "osc", "ucx"}));
  CHECK(contains_run(app, {"-x", "VCX_SESSION_TOKEN"}));
  CHECK(contains_run(app, {"-x", "LD_PRELOAD=" + plan.paths.shmem_interceptor}));
  CHECK(contains_run(app, {"-n", "4", "--bind-to", "none", "./app", "-x", "1"}));
  // The token never appears on a command line.
  for (const auto& w : app) CHECK(w.find("VCX_SESSION_TOKEN=") == std::string::npos);

  const auto tool = tool_command(plan, "/tmp/session");
  CHECK(tool.front() == "/usr/bin/mpiexec.mpich");
  CHECK(contains_run(tool, {"--translators", "shmem"}));

  plan.as_root = false;
  plan.options.ppn = 2;
  plan.placement.app_cores = {2, 3};
  const auto bound = app_command(plan, plan.paths.shmem_interceptor);
  CHECK_FALSE(contains_run(bound, {"--allow-run-as-root"}));
  CHECK(contains_run(bound, {"--npernode", "2"}));
  CHECK(contains_run(bound, {"--cpu-list", "2,3", "--bind-to", "cpu-list:ordered"}));
}

TEST_CASE("launcher shmem: hydra host files and -hosts lists become Open MPI's --host", "[launcher][shmem]") {
  char tmpl[] = "/tmp/vcx-shmem-hosts-XXXXXX";
  const int fd = ::mkstemp(tmpl);
  REQUIRE(fd >= 0);
  ::close(fd);
  std::ofstream(tmpl) << "# cluster\nnode1:4\n\n  node2  # second\n";
  std::string err;
  LaunchOptions o;
  CHECK(openmpi_hosts(o, &err).empty());
  CHECK(err.empty());
  o.hostfile = tmpl;
  CHECK(openmpi_hosts(o, &err) == std::vector<std::string>{"--host", "node1:4,node2"});
  CHECK(err.empty());
  std::ofstream(tmpl) << "# nothing\n";
  CHECK(openmpi_hosts(o, &err).empty());
  CHECK(err.find("names no host") != std::string::npos);
  std::remove(tmpl);
  // mpiexec's -hosts list, as it stands.
  o.hostfile.reset();
  o.hosts = "node1:2,node2:2";
  err.clear();
  CHECK(openmpi_hosts(o, &err) == std::vector<std::string>{"--host", "node1:2,node2:2"});
  CHECK(err.empty());
}

TEST_CASE("launcher hybrid: Open MPI's libmpi is told from MPICH's", "[launcher][shmem]") {
  CHECK(is_openmpi_libmpi("libmpi.so.40"));
  CHECK(is_openmpi_libmpi("libmpi.so.40.30.4"));
  CHECK_FALSE(is_openmpi_libmpi("libmpi.so.12"));  // MPICH built as libmpi
  CHECK_FALSE(is_openmpi_libmpi("libmpich.so.12"));
  CHECK_FALSE(is_openmpi_libmpi("libmpi.so."));
  CHECK_FALSE(is_openmpi_libmpi("libmpi.so.4x"));
  CHECK_FALSE(is_openmpi_libmpi("libmpi_mpifh.so.40"));
}

TEST_CASE("launcher hybrid: an MPI+OpenSHMEM program runs under oshrun with both translators",
          "[launcher][shmem]") {
  // The hybrid interceptor itself links Open MPI's libmpi and liboshmem.
  const std::string hybrid_lib = std::string(VCX_PLUGIN_DIR) + "/libvcx-hybrid-intercept.so";
  if (fs::exists(hybrid_lib)) CHECK(program_model(hybrid_lib) == ProgramModel::Hybrid);

  Plan plan = shmem_plan();
  plan.model = ProgramModel::Hybrid;
  plan.paths.hybrid_interceptor = "/opt/vcx/lib/vcx/libvcx-hybrid-intercept.so";
  CHECK(interceptor_of(plan) == plan.paths.hybrid_interceptor);
  CHECK(std::string(translators_of(ProgramModel::Hybrid)) == "mpi,shmem");
  CHECK(std::string(translators_of(ProgramModel::Shmem)) == "shmem");
  CHECK(std::string(translators_of(ProgramModel::Mpi)) == "mpi");
  const auto tool = tool_command(plan, "/tmp/session");
  CHECK(tool.front() == "/usr/bin/mpiexec.mpich");
  CHECK(contains_run(tool, {"--translators", "mpi,shmem"}));
  const auto app = app_command(plan, interceptor_of(plan));
  CHECK(app.front() == "/usr/bin/oshrun");
  CHECK(contains_run(app, {"--mca", "osc", "ucx"}));
  CHECK(contains_run(app, {"-x", "LD_PRELOAD=" + plan.paths.hybrid_interceptor}));
}
