#include "launcher/paths.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string_view>

#ifndef VCX_DEFAULT_MPIEXEC
#define VCX_DEFAULT_MPIEXEC "mpiexec.mpich"
#endif

namespace vcx::launcher {
namespace fs = std::filesystem;

Environment::Environment(char** envp) {
  for (char** e = envp; e != nullptr && *e != nullptr; ++e) entries_.emplace_back(*e);
}

namespace {

bool has_name(const std::string& entry, const std::string& name) {
  return entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 &&
         entry[name.size()] == '=';
}

// Empty string when `path` is a file this process may execute, else why not.
std::string executable_problem(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::strerror(errno);
  if (S_ISDIR(st.st_mode)) return std::strerror(EISDIR);
  if (!S_ISREG(st.st_mode) || ::access(path.c_str(), X_OK) != 0) return std::strerror(EACCES);
  return {};
}

std::string system_default_path() {
  const std::size_t n = ::confstr(_CS_PATH, nullptr, 0);
  if (n == 0) return "/bin:/usr/bin";
  std::string buf(n, '\0');
  ::confstr(_CS_PATH, buf.data(), n);
  buf.resize(n - 1);
  return buf;
}

}  // namespace

std::optional<std::string> Environment::get(const std::string& name) const {
  for (const auto& e : entries_)
    if (has_name(e, name)) return e.substr(name.size() + 1);
  return std::nullopt;
}

std::optional<std::string> Environment::get_nonempty(const std::string& name) const {
  auto v = get(name);
  if (v && v->empty()) return std::nullopt;
  return v;
}

void Environment::set(const std::string& name, const std::string& value) {
  for (auto& e : entries_) {
    if (has_name(e, name)) {
      e = name + "=" + value;
      return;
    }
  }
  entries_.push_back(name + "=" + value);
}

void Environment::unset(const std::string& name) {
  std::erase_if(entries_, [&](const std::string& e) { return has_name(e, name); });
}

ProgramLookup resolve_program(const std::string& name, const std::optional<std::string>& path_env) {
  if (name.empty()) return {"", "empty program name"};
  if (name.find('/') != std::string::npos) {
    std::string problem = executable_problem(name);
    if (!problem.empty()) return {"", problem};
    return {name, ""};
  }
  // Like a shell: the first executable match wins; a match that is not
  // executable is remembered so the error says why.
  const std::string search = path_env ? *path_env : system_default_path();
  std::string seen_problem;
  std::size_t start = 0;
  for (;;) {
    const std::size_t colon = search.find(':', start);
    const std::string_view dir = std::string_view(search).substr(
        start, colon == std::string::npos ? std::string::npos : colon - start);
    // An empty entry means the current directory.
    std::string candidate(dir.empty() ? std::string_view(".") : dir);
    candidate.append("/").append(name);
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) {
      std::string problem = executable_problem(candidate);
      if (problem.empty()) return {candidate, ""};
      if (seen_problem.empty()) seen_problem = problem;
    }
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return {"", seen_problem.empty() ? "command not found" : seen_problem};
}

std::string default_mpiexec() { return VCX_DEFAULT_MPIEXEC; }

std::string default_oshrun() { return VCX_DEFAULT_OSHRUN; }

std::string self_bindir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  return exe.parent_path().string();
}

InstallPaths install_paths(const std::string& bindir, const Environment& env) {
  InstallPaths p;
  p.bindir = bindir;
  const fs::path bin(bindir);
  p.toolproc = env.get_nonempty("VCX_TOOLPROC").value_or((bin / "vcx-toolproc").string());
  p.trace_tool = (bin / "vcx-trace").string();
  p.plugin_dir = env.get_nonempty("VCX_PLUGIN_DIR")
                     .value_or((bin.parent_path() / "lib" / "vcx").lexically_normal().string());
  // Trailing slashes would make the paths below look odd in messages.
  while (p.plugin_dir.size() > 1 && p.plugin_dir.back() == '/') p.plugin_dir.pop_back();
  p.interceptor = (fs::path(p.plugin_dir) / kInterceptorName).string();
  p.mpiexec = env.get_nonempty("VCX_MPIEXEC").value_or(default_mpiexec());
  p.shmem_interceptor = (fs::path(p.plugin_dir) / kShmemInterceptorName).string();
  p.hybrid_interceptor = (fs::path(p.plugin_dir) / kHybridInterceptorName).string();
  p.oshrun = env.get_nonempty("VCX_OSHRUN").value_or(default_oshrun());
  p.config_dir =
      env.get_nonempty("VCX_CONFIG_DIR")
          .value_or((bin.parent_path() / "share" / "vcx" / "config").lexically_normal().string());
  return p;
}

std::optional<std::string> check_install(InstallPaths& paths,
                                         const std::optional<std::string>& path_env) {
  if (std::string problem = executable_problem(paths.toolproc); !problem.empty())
    return "cannot use the tool process " + paths.toolproc + ": " + problem +
           " (is vcx installed completely? VCX_TOOLPROC overrides this path)";
  std::error_code ec;
  if (!fs::is_directory(paths.plugin_dir, ec))
    return "the plugin directory " + paths.plugin_dir +
           " does not exist (is vcx installed completely? VCX_PLUGIN_DIR overrides this path)";
  if (!fs::is_regular_file(paths.interceptor, ec) || ::access(paths.interceptor.c_str(), R_OK) != 0)
    return "the interceptor " + paths.interceptor +
           " is missing or unreadable (is vcx installed completely? VCX_PLUGIN_DIR overrides "
           "its directory)";
  ProgramLookup mpiexec = resolve_program(paths.mpiexec, path_env);
  if (!mpiexec.ok())
    return "cannot use MPICH's mpiexec " + paths.mpiexec + ": " + mpiexec.error +
           " (VCX_MPIEXEC overrides it)";
  paths.mpiexec = mpiexec.path;
  return std::nullopt;
}

std::optional<std::string> check_shmem_install(InstallPaths& paths,
                                               const std::optional<std::string>& path_env,
                                               bool hybrid) {
  std::error_code ec;
  const std::string& interceptor = hybrid ? paths.hybrid_interceptor : paths.shmem_interceptor;
  if (!fs::is_regular_file(interceptor, ec) || ::access(interceptor.c_str(), R_OK) != 0)
    return std::string(hybrid ? "the MPI+OpenSHMEM interceptor " : "the OpenSHMEM interceptor ") +
           interceptor +
           " is missing: this vcx was built without Open MPI's OpenSHMEM (install "
           "libopenmpi-dev and openmpi-bin, e.g. with scripts/install-deps, and rebuild vcx)";
  ProgramLookup oshrun = resolve_program(paths.oshrun, path_env);
  if (!oshrun.ok())
    return "cannot use Open MPI's oshrun " + paths.oshrun + ": " + oshrun.error +
           " (install openmpi-bin; VCX_OSHRUN overrides it)";
  paths.oshrun = oshrun.path;
  return std::nullopt;
}

}  // namespace vcx::launcher
