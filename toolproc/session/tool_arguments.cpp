#include "session/tool_arguments.h"

#include <sstream>
#include <stdexcept>

#include <boost/program_options.hpp>

namespace vcx::session {
namespace {

namespace po = boost::program_options;

const ToolArguments kDefaults;

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ",") + s;
  return out;
}

std::vector<std::string> split_lists(const std::vector<std::string>& in) {
  std::vector<std::string> out;
  for (const auto& item : in)
    for (auto& name : comma_list(item)) out.push_back(std::move(name));
  return out;
}

template <class E, std::size_t N>
E choice(const std::string& option, const std::string& text, const Spelling<E> (&names)[N]) {
  if (auto v = parse_choice(text, names)) return *v;
  throw std::runtime_error("--" + option + " takes " + choices_of(names) + ", not '" + text +
                           "'");
}

}  // namespace

std::vector<std::string> comma_list(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  std::string part;
  while (std::getline(ss, part, ','))
    if (!part.empty()) out.push_back(part);
  return out;
}

std::vector<std::string> ToolArguments::to_argv() const {
  std::vector<std::string> a{"--session", session_dir, "--plugin-dir", plugin_dir};
  if (engine != kDefaults.engine) a.insert(a.end(), {"--engine", engine});
  a.insert(a.end(), {"--translators", join(translators)});
  if (!modules.empty()) a.insert(a.end(), {"--modules", join(modules)});
  for (const auto& [key, value] : plugin_options.all())
    a.insert(a.end(), {"--option", key + "=" + value});
  if (stall != Stall::Auto)
    a.insert(a.end(), {"--stall", std::string(name_of(stall, kStallNames))});
  if (ring_bytes != kDefaults.ring_bytes)
    a.insert(a.end(), {"--ring-bytes", std::to_string(ring_bytes)});
  if (max_backlog != kDefaults.max_backlog)
    a.insert(a.end(), {"--max-backlog", std::to_string(max_backlog)});
  if (!shmem_flags) a.push_back("--no-shmem-flags");
  if (shared_core) a.push_back("--shared-core");
  if (app_yield) a.insert(a.end(), {"--app-yield", *app_yield ? "on" : "off"});
  if (spin_ns != kDefaults.spin_ns) a.insert(a.end(), {"--spin-ns", std::to_string(spin_ns)});
  if (app_spin_ns) a.insert(a.end(), {"--app-spin-ns", std::to_string(*app_spin_ns)});
  if (progress) a.push_back("--progress");
  if (channel != kDefaults.channel)
    a.insert(a.end(), {"--channel", std::string(name_of(channel))});
  if (transport != kDefaults.transport)
    a.insert(a.end(), {"--transport", std::string(name_of(transport))});
  if (bind_host != kDefaults.bind_host) a.insert(a.end(), {"--bind", bind_host});
  if (mpi_start) a.push_back("--mpi-start");
  return a;
}

ToolArguments::Parsed ToolArguments::parse(int argc, const char* const* argv, ToolArguments* out,
                                           std::string* text) {
  ToolArguments& o = *out;
  po::options_description desc("vcx-toolproc (started by vcx-run)");
  std::vector<std::string> translators, modules, options;
  std::string stall, app_yield, channel, transport;
  bool no_shmem_flags = false;
  desc.add_options()
      ("help", "this text")
      ("session", po::value(&o.session_dir)->required(), "session directory")
      ("plugin-dir", po::value(&o.plugin_dir)->required(), "where plugins live")
      ("engine", po::value(&o.engine)->default_value(o.engine), "exchange engine plugin")
      ("translators", po::value(&translators)->multitoken(), "translator plugins (comma separated)")
      ("modules", po::value(&modules)->multitoken(), "module plugins (comma separated)")
      ("option", po::value(&options)->multitoken(), "plugin option key=value")
      ("stall", po::value(&stall),
       "never: the application waits for its tool only when the channel is full or for a "
       "lock grant; waits: also at every wait (default: never, unless a module needs it)")
      ("no-shmem-flags", po::bool_switch(&no_shmem_flags),
       "OpenSHMEM: do not register flag writes; waits merge no writes")
      ("ring-bytes", po::value(&o.ring_bytes)->default_value(o.ring_bytes), "event ring size")
      ("max-backlog", po::value(&o.max_backlog)->default_value(o.max_backlog),
       "calls read ahead of the engine at most; then the tool reads no more until it catches "
       "up (the channel fills and the application waits)")
      ("shared-core", po::bool_switch(&o.shared_core),
       "shares cores with application ranks: poll only while the application waits for an "
       "answer, and let it sleep at once")
      ("spin-ns", po::value(&o.spin_ns)->default_value(o.spin_ns),
       "poll this long when idle before sleeping (ns)")
      ("app-yield", po::value(&app_yield),
       "on: the application's blocking MPI calls yield the core between tests of completion; "
       "off: MPI busy-polls (default: on with --shared-core)")
      ("app-spin-ns", po::value<std::uint32_t>(),
       "the application polls this long for an answer before sleeping (ns; default 2000, 0 "
       "with --shared-core)")
      ("progress", po::bool_switch(&o.progress),
       "write progress-<rank> for vcx-run's progress line")
      ("mpi-start", po::bool_switch(&o.mpi_start),
       "exchange the start-up information over MPI, not through the session directory")
      ("bind", po::value(&o.bind_host)->default_value(o.bind_host),
       "address for peer connections (and the application's, with --channel tcp)")
      ("channel", po::value(&channel), "application-to-tool channel: shm (shared memory) or tcp")
      ("transport", po::value(&transport),
       "tool-to-tool messages: tcp, shm (shared memory on one node, TCP between nodes) or mpi "
       "(the tool job's own MPI)");
  try {
    po::variables_map vm;
    po::store(po::parse_command_line(argc, argv, desc), vm);
    if (vm.count("help")) {
      if (vm.count("plugin-dir")) o.plugin_dir = vm["plugin-dir"].as<std::string>();
      std::ostringstream usage;
      usage << desc;
      *text = usage.str();
      return Parsed::Help;
    }
    po::notify(vm);
    if (vm.count("stall")) o.stall = choice("stall", stall, kStallNames);
    if (vm.count("app-yield")) {
      if (app_yield != "on" && app_yield != "off")
        throw std::runtime_error("--app-yield takes on or off, not '" + app_yield + "'");
      o.app_yield = app_yield == "on";
    }
    if (vm.count("app-spin-ns")) o.app_spin_ns = vm["app-spin-ns"].as<std::uint32_t>();
    if (vm.count("channel")) o.channel = choice("channel", channel, kChannelNames);
    if (vm.count("transport")) o.transport = choice("transport", transport, kTransportNames);
  } catch (const std::exception& e) {
    *text = e.what();
    return Parsed::Error;
  }
  o.shmem_flags = !no_shmem_flags;
  if (!translators.empty()) o.translators = split_lists(translators);
  for (const auto& m : split_lists(modules))
    if (m != o.engine) o.modules.push_back(m);
  for (const auto& kv : options) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos) {
      *text = "--option needs key=value, got '" + kv + "'";
      return Parsed::Error;
    }
    o.plugin_options.set(kv.substr(0, eq), kv.substr(eq + 1));
  }
  if (o.ring_bytes < 4096 || (o.ring_bytes & (o.ring_bytes - 1)) != 0) {
    *text = "--ring-bytes must be a power of two >= 4096";
    return Parsed::Error;
  }
  return Parsed::Ok;
}

}  // namespace vcx::session
