// Tool-side throughput without MPI: a producer process pushes synthetic MPI
// events through the real shared-memory channel (RingProducer, with the
// interceptor's wake-up protocol), and this process consumes them the way a
// tool process does (RingConsumer → MPI translator → vclock engine, both
// loaded as plugins), on one core. Messages the engine sends to other tools
// are copied into a sink and counted, so the transport's own cost is left
// out. Prints events per second of wall time and per second of the
// consumer's CPU time, and checks that every event was clocked.
//
//   vcx-bench-feeder [--events N] [--kind send|tick] [--ring-bytes B]
//                    [--spin-ns S] [--cpu C] [--producer-cpu C]
//                    [--plugin-dir DIR]
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../translators/mpi/common/mpi_events.h"
#include "vcx/call_program.h"
#include "vcx/channel/attach.h"
#include "vcx/channel/futex.h"
#include "vcx/channel/ring.h"
#include "vcx/exchange.h"
#include "vcx/options.h"
#include "vcx/plugin.h"
#include "vcx/plugin_loader.h"
#include "vcx/translator.h"
#include "vcx/transport.h"

namespace {

using namespace vcx;

constexpr std::uint64_t kWorldHandle = 0x44000000;  // any value: the events only name it
constexpr std::uint64_t kSelfHandle = 0x44000001;
constexpr std::uint32_t kWorldSize = 2;             // the feeder is rank 0; rank 1 is the sink

struct Settings {
  std::uint64_t events = 2'000'000;
  std::string kind = "send";
  std::uint64_t ring_bytes = 4u << 20;  // the tool's default
  std::uint64_t spin_ns = 20'000;       // the tool's default
  int cpu = -1;
  int producer_cpu = -1;
  std::string plugin_dir = VCX_PLUGIN_DIR;
};

[[noreturn]] void usage_error(const std::string& what) {
  std::fprintf(stderr,
               "vcx: %s; usage: vcx-bench-feeder [--events N] [--kind send|tick] "
               "[--ring-bytes B] [--spin-ns S] [--cpu C] [--producer-cpu C] [--plugin-dir DIR]\n",
               what.c_str());
  std::exit(64);
}

std::uint64_t number(const char* opt, const char* text) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (errno != 0 || !end || *end != '\0' || text[0] == '-' || text[0] == '\0')
    usage_error(std::string(opt) + " needs a whole number, not '" + text + "'");
  return v;
}

Settings parse(int argc, char** argv) {
  Settings s;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage_error("unknown argument or missing value: '" + a + "'");
    const char* v = argv[++i];
    if (a == "--events") s.events = number("--events", v);
    else if (a == "--kind") s.kind = v;
    else if (a == "--ring-bytes") s.ring_bytes = number("--ring-bytes", v);
    else if (a == "--spin-ns") s.spin_ns = number("--spin-ns", v);
    else if (a == "--cpu") s.cpu = static_cast<int>(number("--cpu", v));
    else if (a == "--producer-cpu") s.producer_cpu = static_cast<int>(number("--producer-cpu", v));
    else if (a == "--plugin-dir") s.plugin_dir = v;
    else usage_error("unknown argument '" + a + "'");
  }
  if (s.kind != "send" && s.kind != "tick") usage_error("--kind is send or tick, not '" + s.kind + "'");
  if (s.events == 0) usage_error("--events must be at least 1");
  if (s.ring_bytes < 4096 || (s.ring_bytes & (s.ring_bytes - 1)) != 0)
    usage_error("--ring-bytes must be a power of two of at least 4096");
  return s;
}

void pin(int cpu) {
  if (cpu < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0)
    usage_error("cannot run on CPU " + std::to_string(cpu) + ": " + std::strerror(errno));
}

// Messages to other tools: copied (as a transport would) and counted.
class SinkTransport final : public PeerTransport {
 public:
  void send(Rank dst, ToolPart part, std::span<const std::uint8_t> payload) override {
    last_.assign(payload.begin(), payload.end());
    ++messages;
    bytes += payload.size();
  }
  void set_handler(ToolPart, Handler) override {}
  Rank self() const override { return Rank{0}; }
  std::uint32_t size() const override { return kWorldSize; }
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;

 private:
  std::vector<std::uint8_t> last_;
};

class FeederHost final : public ToolHost {
 public:
  FeederHost(SinkTransport& t, channel::RingConsumer& c) : t_(t), c_(c) {}
  Rank rank() const override { return Rank{0}; }
  std::uint32_t world_size() const override { return kWorldSize; }
  const Options& options() const override { return options_; }
  PeerTransport& transport() override { return t_; }
  void reply(std::uint64_t seq) override { c_.reply(seq); }
  const char* call_name(std::uint8_t, std::uint16_t) const override { return "?"; }
  [[noreturn]] void fatal(const std::string& why) override {
    std::fprintf(stderr, "vcx: feeder: the engine stopped: %s\n", why.c_str());
    std::exit(1);
  }

 private:
  Options options_;
  SinkTransport& t_;
  channel::RingConsumer& c_;
};

template <class T>
void push(channel::RingProducer& p, mpi::Call call, const T& payload) {
  void* at = p.begin(Model::Mpi, static_cast<std::uint16_t>(call), 0, sizeof payload);
  if (!at) {
    std::fprintf(stderr, "vcx: feeder: the producer could not reserve a record\n");
    _exit(1);
  }
  std::memcpy(at, &payload, sizeof payload);
  p.commit();
}

// The producer process: the interceptor's side of the channel.
[[noreturn]] void produce(const Settings& s, channel::ChannelControl* control, int wake_fd,
                          std::uint64_t* push_ns) {
  pin(s.producer_cpu);
  channel::ProducerHooks hooks;
  hooks.ctx = &wake_fd;
  hooks.wake_consumer = [](void* ctx) {
    const std::uint64_t one = 1;
    if (::write(*static_cast<int*>(ctx), &one, sizeof one) < 0) _exit(1);
  };
  channel::RingProducer p(control, hooks);
  mpi::InitEvent init{};
  init.comm_world = kWorldHandle;
  init.comm_self = kSelfHandle;
  init.world_rank = 0;
  init.world_size = static_cast<std::int32_t>(kWorldSize);
  push(p, mpi::Call::Init, init);
  const std::uint64_t t0 = channel::now_ns();
  if (s.kind == "send") {
    mpi::SendEvent ev{};
    ev.comm = kWorldHandle;
    ev.dest = 1;
    ev.tag = 0;
    ev.mode = mpi::SendMode::Standard;
    for (std::uint64_t i = 0; i < s.events; ++i) push(p, mpi::Call::Send, ev);
  } else {
    mpi::AnnotateEvent ev{};
    ev.comm = kWorldHandle;
    for (std::uint64_t i = 0; i < s.events; ++i) push(p, mpi::Call::Annotate_tick, ev);
  }
  *push_ns = channel::now_ns() - t0;
  _exit(0);
}

double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

// The parameter names the event kind and the ring size: with a ring that
// holds every event the producer never waits, so the consumer's own cost
// shows; with the tool's default ring it fills, as under a real flood.
void result(const Settings& s, const char* metric, double value, const char* unit) {
  std::printf("RESULT,feeder,%s/ring=%lluKiB,%s,%.6g,%s\n", s.kind.c_str(),
              static_cast<unsigned long long>(s.ring_bytes >> 10), metric, value, unit);
}

}  // namespace

int main(int argc, char** argv) {
  const Settings s = parse(argc, argv);
  pin(s.cpu);

  channel::ChannelBlock block;
  std::string error;
  if (!channel::create_channel_block(s.ring_bytes, 0, &block, &error)) {
    std::fprintf(stderr, "vcx: feeder: cannot create the channel: %s\n", error.c_str());
    return 1;
  }
  channel::RingConsumer consumer(block.control);
  SinkTransport sink;
  FeederHost host(sink, consumer);

  std::vector<LoadedPlugin> loaded;
  std::vector<std::unique_ptr<Plugin>> plugins;
  auto instantiate = [&](PluginKind kind, const char* name) {
    try {
      loaded.push_back(load_plugin(s.plugin_dir, kind, name));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "vcx: feeder: %s (give the plugin directory with --plugin-dir)\n",
                   e.what());
      std::exit(1);
    }
    std::string why;
    Plugin* p = loaded.back().descriptor->create(host, &why);
    if (!p) {
      std::fprintf(stderr, "vcx: feeder: %s: %s\n", name, why.c_str());
      std::exit(1);
    }
    plugins.emplace_back(p);
    return p;
  };
  ExchangeEngine* engine = instantiate(PluginKind::Engine, "vclock")->engine();
  Translator* translator = instantiate(PluginKind::Translator, "mpi")->translator();
  if (!engine || !translator) {
    std::fprintf(stderr, "vcx: feeder: the vclock or mpi plugin is not what it should be\n");
    return 1;
  }

  const int wake_fd = ::eventfd(0, EFD_CLOEXEC);
  auto* push_ns = static_cast<std::uint64_t*>(
      ::mmap(nullptr, sizeof(std::uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  if (wake_fd < 0 || push_ns == MAP_FAILED) {
    std::fprintf(stderr, "vcx: feeder: %s\n", std::strerror(errno));
    return 1;
  }
  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child < 0) {
    std::fprintf(stderr, "vcx: feeder: fork: %s\n", std::strerror(errno));
    return 1;
  }
  if (child == 0) produce(s, block.control, wake_fd, push_ns);

  // The tool's loop, reduced to the channel: up to 4096 events, then the
  // engine; when empty, spin, then sleep until the producer's wake-up.
  const std::uint64_t total = s.events + 1;  // with MPI_Init
  std::uint64_t consumed = 0, sleeps = 0;
  std::uint64_t t_first = 0;
  double cpu_first = 0.0;
  CallProgram program;
  while (consumed < total) {
    int n = 0;
    for (; n < 4096; ++n) {
      const EventHeader* ev = consumer.peek();
      if (!ev) break;
      if (consumed == 1) {
        t_first = channel::now_ns();
        cpu_first = cpu_seconds();
      }
      program.reset(ev->model, ev->type, ev->seq);
      translator->translate(*ev, engine->control(), program);
      engine->enqueue(program, false);
      consumer.pop();
      ++consumed;
    }
    engine->run();
    if (n > 0 || consumed == total) continue;
    const std::uint64_t spin_until = channel::now_ns() + s.spin_ns;
    bool woke = false;
    while (channel::now_ns() < spin_until)
      if (!consumer.empty()) {
        woke = true;
        break;
      }
    if (woke || !consumer.prepare_sleep()) continue;
    std::uint64_t count;
    ++sleeps;
    if (::read(wake_fd, &count, sizeof count) < 0 && errno != EINTR) {
      std::fprintf(stderr, "vcx: feeder: reading the wake-up: %s\n", std::strerror(errno));
      return 1;
    }
    consumer.end_sleep();
  }
  const double wall = static_cast<double>(channel::now_ns() - t_first) * 1e-9;
  const double cpu = cpu_seconds() - cpu_first;
  int status = 0;
  ::waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "vcx: feeder: the producer failed\n");
    return 1;
  }

  // Every event must have been clocked, and every send signalled.
  const std::uint64_t want_messages = s.kind == "send" ? s.events : 0;
  if (!engine->idle() || engine->clocked_calls() != s.events || sink.messages != want_messages ||
      engine->clock()[0] != s.events) {
    std::fprintf(stderr,
                 "vcx: feeder: wrong result: %llu clocked calls, clock entry %llu, %llu "
                 "messages for %llu events\n",
                 static_cast<unsigned long long>(engine->clocked_calls()),
                 static_cast<unsigned long long>(engine->clock()[0]),
                 static_cast<unsigned long long>(sink.messages),
                 static_cast<unsigned long long>(s.events));
    return 1;
  }
  const double ev = static_cast<double>(s.events);
  result(s, "events_per_s", ev / wall / 1e6, "Mev/s");
  result(s, "events_per_cpu_s", cpu > 0 ? ev / cpu / 1e6 : 0.0, "Mev/s");
  result(s, "ns_per_event", wall / ev * 1e9, "ns");
  result(s, "producer_ns_per_event", static_cast<double>(*push_ns) / ev, "ns");
  result(s, "consumer_sleeps", static_cast<double>(sleeps), "count");
  result(s, "producer_wakes", static_cast<double>(consumer.producer_wakes()), "count");
  result(s, "bytes_per_message",
         sink.messages ? static_cast<double>(sink.bytes) / static_cast<double>(sink.messages) : 0.0,
         "B");
  plugins.clear();
  for (auto& p : loaded) unload_plugin(p);
  channel::destroy_channel_block(&block);
  return 0;
}
