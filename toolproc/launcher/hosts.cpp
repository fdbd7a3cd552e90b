#include "launcher/hosts.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>

namespace vcx::launcher {

namespace {

// Adds one "host[:slots]" entry; false when the host name is empty.
bool add_host_entry(const std::string& entry, HostList* out) {
  const std::string host = entry.substr(0, entry.find(':'));
  if (host.empty()) return false;
  out->entries.push_back(entry);
  if (std::find(out->hosts.begin(), out->hosts.end(), host) == out->hosts.end())
    out->hosts.push_back(host);
  return true;
}

// "host" or "host:slots" with a positive number of slots.
bool valid_host_entry(const std::string& entry) {
  if (entry.empty() || entry.find_first_of(" \t") != std::string::npos) return false;
  const auto colon = entry.find(':');
  if (colon == 0) return false;
  if (colon == std::string::npos) return true;
  const std::string slots = entry.substr(colon + 1);
  return !slots.empty() && slots.size() <= 9 &&
         std::all_of(slots.begin(), slots.end(),
                     [](unsigned char c) { return std::isdigit(c) != 0; }) &&
         std::stoi(slots) > 0;
}

}  // namespace

HostList read_hostfile(const std::string& path) {
  HostList out;
  std::ifstream in(path);
  if (!in) {
    out.error = "cannot read the host file " + path + ": " + std::strerror(errno);
    return out;
  }
  std::string line;
  while (std::getline(in, line)) {
    if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    const auto b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos) continue;
    const auto e = line.find_first_of(" \t\r", b);
    if (!add_host_entry(line.substr(b, e == std::string::npos ? std::string::npos : e - b),
                        &out)) {
      out.error = "the host file " + path + " has an entry without a host name: " + line;
      return out;
    }
  }
  if (out.hosts.empty()) out.error = "the host file " + path + " names no host";
  return out;
}

HostList parse_host_list(const std::string& list) {
  HostList out;
  // Every comma separates two entries, so "a,,b" and "a,b," have an empty one.
  std::size_t from = 0;
  for (;;) {
    const auto comma = list.find(',', from);
    const std::string entry =
        list.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
    if (!valid_host_entry(entry) || !add_host_entry(entry, &out)) {
      out.error = "-hosts takes host names separated by commas (a,b or a:4,b:4), not '" +
                  list + "'";
      return out;
    }
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  return out;
}

HostList hosts_of(const LaunchOptions& options) {
  if (options.hostfile) return read_hostfile(*options.hostfile);
  if (options.hosts) return parse_host_list(*options.hosts);
  return {};
}

std::vector<std::string> openmpi_hosts(const LaunchOptions& options, std::string* error) {
  const HostList hosts = hosts_of(options);
  if (!hosts.error.empty()) {
    *error = hosts.error;
    return {};
  }
  if (hosts.entries.empty()) return {};
  // Hydra's "host[:slots]" is Open MPI's --host entry as it stands.
  std::string joined;
  for (const auto& entry : hosts.entries) joined += (joined.empty() ? "" : ",") + entry;
  return {"--host", joined};
}

}  // namespace vcx::launcher
