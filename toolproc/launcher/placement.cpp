#include "launcher/placement.h"

#include <sched.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace vcx::launcher {
namespace po = boost::program_options;
namespace {

constexpr int kMaxCore = 1 << 16;

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

bool parse_core_number(const std::string& text, int* out) {
  if (text.empty() || !std::all_of(text.begin(), text.end(), ::isdigit)) return false;
  const long v = std::strtol(text.c_str(), nullptr, 10);
  if (v < 0 || v >= kMaxCore) return false;
  *out = static_cast<int>(v);
  return true;
}

std::string join_cores(const std::vector<int>& cores, int count) {
  std::string out;
  for (int i = 0; i < count; ++i) {
    if (i > 0) out += ',';
    out += std::to_string(cores[static_cast<std::size_t>(i) % cores.size()]);
  }
  return out;
}

}  // namespace

std::vector<int> available_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

std::optional<std::vector<int>> parse_cores(const std::string& text,
                                            const std::vector<int>& available,
                                            std::string* error) {
  const std::string t = trim(text);
  const std::size_t half = (available.size() + 1) / 2;
  std::vector<int> cores;
  if (t == "all") {
    cores = available;
  } else if (t == "first-half") {
    cores.assign(available.begin(), available.begin() + static_cast<std::ptrdiff_t>(half));
  } else if (t == "second-half") {
    if (available.size() < 2) {
      *error = "'second-half' needs at least 2 cores, and vcx-run may use only " +
               std::to_string(available.size()) + " here; use the shared placement instead";
      return std::nullopt;
    }
    cores.assign(available.begin() + static_cast<std::ptrdiff_t>(half), available.end());
  } else {
    std::stringstream parts(t);
    std::string item;
    while (std::getline(parts, item, ',')) {
      item = trim(item);
      const auto dash = item.find('-');
      int lo = 0, hi = 0;
      const bool ok = dash == std::string::npos
                          ? parse_core_number(item, &lo) && parse_core_number(item, &hi)
                          : parse_core_number(trim(item.substr(0, dash)), &lo) &&
                                parse_core_number(trim(item.substr(dash + 1)), &hi) && lo <= hi;
      if (!ok) {
        *error = "'" + t +
                 "' is not a core list (write e.g. 0-3,8, or all, first-half, second-half)";
        return std::nullopt;
      }
      for (int c = lo; c <= hi; ++c) cores.push_back(c);
    }
  }
  if (cores.empty()) {
    *error = "'" + t + "' names no core";
    return std::nullopt;
  }
  return cores;
}

PlacementResult resolve_placement(const std::string& spec, const std::string& config_dir,
                                  const std::vector<int>& available) {
  PlacementResult r;
  if (spec == "none") {
    r.placement.source = "none";
    return r;
  }
  const std::string file = spec == "split"    ? config_dir + "/split-node.ini"
                           : spec == "shared" ? config_dir + "/shared-node.ini"
                                              : spec;
  r.placement.source = file;
  std::ifstream in(file);
  if (!in) {
    r.error = "cannot read the placement file " + file + ": " + std::strerror(errno) +
              (spec == file ? "" : " (is vcx installed completely?)");
    return r;
  }
  po::options_description keys;
  keys.add_options()("placement.app-cores", po::value<std::string>())(
      "placement.tool-cores", po::value<std::string>());
  po::variables_map vm;
  try {
    // Other keys are allowed: a run configuration can be a placement file.
    const po::parsed_options parsed = po::parse_config_file(in, keys, true);
    for (const auto& o : parsed.options) {
      if (o.unregistered && o.string_key.rfind("placement.", 0) == 0) {
        r.error = "placement file " + file + ": unknown key '" + o.string_key.substr(10) +
                  "' in [placement] (app-cores and tool-cores are known)";
        return r;
      }
    }
    po::store(parsed, vm);
  } catch (const po::error& e) {
    r.error = "placement file " + file + ": " + e.what();
    return r;
  }
  if (!vm.count("placement.app-cores") && !vm.count("placement.tool-cores")) {
    r.error = "placement file " + file + " has no [placement] section with app-cores or tool-cores";
    return r;
  }
  const std::pair<const char*, std::vector<int>*> fields[] = {
      {"placement.app-cores", &r.placement.app_cores},
      {"placement.tool-cores", &r.placement.tool_cores}};
  for (const auto& [key, out] : fields) {
    if (!vm.count(key)) continue;
    std::string err;
    auto cores = parse_cores(vm[key].as<std::string>(), available, &err);
    if (!cores) {
      r.error = "placement file " + file + ": " + std::string(key).substr(10) + ": " + err;
      return r;
    }
    *out = std::move(*cores);
  }
  return r;
}

bool oversubscribed(int ranks_per_node, std::size_t cpus) {
  return ranks_per_node > 0 && 2 * static_cast<std::size_t>(ranks_per_node) > cpus;
}

bool tools_share_app_cores(const Placement& placement) {
  if (placement.oversubscribed) return true;
  for (int core : placement.tool_cores)
    if (std::find(placement.app_cores.begin(), placement.app_cores.end(), core) !=
        placement.app_cores.end())
      return true;
  return false;
}

std::vector<std::string> binding_args(LauncherKind launcher, const std::vector<int>& cores,
                                      int nprocs) {
  if (cores.empty()) return {};
  switch (launcher) {
    case LauncherKind::Hydra:
      // Hydra binds local rank i to the i-th entry and leaves ranks past the
      // list unbound, so the list is as long as the job.
      return {"-bind-to", "user:" + join_cores(cores, nprocs)};
    case LauncherKind::Slurm:
      return {"--cpu-bind=map_cpu:" + join_cores(cores, nprocs)};
    case LauncherKind::OpenMpi: {
      // Open MPI binds local rank i to the i-th lowest core of the list and
      // refuses to bind more ranks than the list has cores: then nothing is
      // bound (the launcher says so).
      std::vector<int> sorted(cores);
      std::sort(sorted.begin(), sorted.end());
      sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
      if (static_cast<int>(sorted.size()) < nprocs) return {"--bind-to", "none"};
      return {"--cpu-list", join_cores(sorted, static_cast<int>(sorted.size())), "--bind-to",
              "cpu-list:ordered"};
    }
  }
  return {};
}

}  // namespace vcx::launcher
