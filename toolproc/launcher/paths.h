// Where things are: the environment, the program to run, and the files vcx
// installs next to vcx-run (bin/ and lib/vcx/ under one prefix, in the build
// tree as in an install).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace vcx::launcher {

// An editable copy of an environment ("NAME=value" strings, order kept).
class Environment {
 public:
  Environment() = default;
  explicit Environment(char** envp);
  explicit Environment(std::vector<std::string> entries) : entries_(std::move(entries)) {}

  std::optional<std::string> get(const std::string& name) const;
  // The value when set and not empty.
  std::optional<std::string> get_nonempty(const std::string& name) const;
  void set(const std::string& name, const std::string& value);
  void unset(const std::string& name);
  const std::vector<std::string>& entries() const { return entries_; }

 private:
  std::vector<std::string> entries_;
};

// A program looked up the way a shell does: a name with a slash is taken as
// a path, one without is searched in PATH (unset PATH: the system default).
struct ProgramLookup {
  std::string path;   // what was found (as a path the launcher can use)
  std::string error;  // empty on success: "command not found", "Permission denied", ...
  bool ok() const { return error.empty(); }
};
ProgramLookup resolve_program(const std::string& name, const std::optional<std::string>& path_env);

// The files vcx-run needs. Overrides: VCX_TOOLPROC (the tool executable),
// VCX_PLUGIN_DIR (plugins and the interceptors), VCX_MPIEXEC (MPICH's mpiexec),
// VCX_OSHRUN (Open MPI's oshrun, for OpenSHMEM programs), VCX_CONFIG_DIR (the
// shipped configurations, <prefix>/share/vcx/config).
struct InstallPaths {
  std::string bindir;
  std::string toolproc;
  std::string plugin_dir;
  std::string interceptor;
  std::string mpiexec;
  std::string config_dir;  // the shipped configurations (placements)
  // OpenSHMEM programs: their interceptor and Open MPI's oshrun.
  std::string shmem_interceptor;
  std::string oshrun;
  // MPI+OpenSHMEM programs: the interceptor of both models.
  std::string hybrid_interceptor;
  // vcx-trace, beside vcx-run (--view runs it).
  std::string trace_tool;
};

inline constexpr const char* kInterceptorName = "libvcx-mpi-intercept.so";
inline constexpr const char* kShmemInterceptorName = "libvcx-shmem-intercept.so";
inline constexpr const char* kHybridInterceptorName = "libvcx-hybrid-intercept.so";

// The mpiexec vcx was configured with.
std::string default_mpiexec();
// The oshrun vcx was configured with ("oshrun" when it found none).
std::string default_oshrun();
// The directory of the running executable (from /proc/self/exe), or "".
std::string self_bindir();
// Derives every path from `bindir` and the environment; checks nothing.
InstallPaths install_paths(const std::string& bindir, const Environment& env);
// The first missing or unusable file as a one-line message naming its path
// and the variable that overrides it; nullopt when all are there. Resolves
// `mpiexec` through PATH when it is a bare name.
std::optional<std::string> check_install(InstallPaths& paths,
                                         const std::optional<std::string>& path_env);
// The same for what an OpenSHMEM program needs besides: the SHMEM
// interceptor (built only where Open MPI's OpenSHMEM was found), or for an
// MPI+OpenSHMEM program (`hybrid`) the interceptor of both, and oshrun.
std::optional<std::string> check_shmem_install(InstallPaths& paths,
                                               const std::optional<std::string>& path_env,
                                               bool hybrid = false);

}  // namespace vcx::launcher
