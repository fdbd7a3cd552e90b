#include "tool_process.h"

#include <poll.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <spdlog/spdlog.h>

#include "mpi_transport/mpi_transport.h"
#include "session/tool_stats.h"
#include "vcx/atomic_file.h"
#include "vcx/binomial_tree.h"
#include "vcx/delaying_transport.h"
#include "vcx/session_layout.h"
#include "vcx/stack_sampler.h"
#include "vcx/symbolizer.h"

namespace vcx::tool {
namespace {


// The end of a run is agreed along a binomial tree rooted at tool 0, so that
// no tool needs a connection to every other one: Done goes up once a tool's
// whole subtree is done, Terminate comes down.
enum class ControlMsg : std::uint8_t {
  Done = 1,       // to the parent: my subtree's applications finished, their queues are
                  // empty; then the analysis messages its tools sent and received
                  // (two u64), again whenever those change
  Terminate = 2,  // from the parent: everyone is done, stop
  Abort = 3,      // to everyone: stop now; the reason follows
};

// Idle naps with a transport that must be polled (MPI): they double from
// the first to the longest, like the interceptor's naps while it waits.
constexpr std::uint64_t kFirstNapNs = 10'000;
constexpr std::uint64_t kLongestNapNs = 1'000'000;

// A tool sharing its rank's core polls before sleeping once this many calls
// wait in its engine (see ToolProcess::run).
constexpr std::size_t kPollingBacklog = 64;
// How long a tool sharing its rank's core sleeps at most while the rank's
// calls wait unread, without stalls: the rank wakes it only for a call it
// will wait for or once a sixteenth of the ring is unread, so that a rank
// making calls does not hand its core to its tool at every call, and the
// tool reads and exchanges in batches. The lag this adds is bounded by it;
// so is the wait of a peer for this tool's part of a signal or collective.
// Measured in performance.md (step 16): shorter sleeps cost the mini-apps
// up to 1.6 times their run time, longer ones gain nothing more.
constexpr std::chrono::milliseconds kLazySleep{20};

std::uint64_t clock_ns(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ULL +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

std::uint64_t now_ns() { return clock_ns(CLOCK_MONOTONIC); }

// Comparable between the tools' nodes (as far as their clocks agree).
std::uint64_t realtime_ns() { return clock_ns(CLOCK_REALTIME); }

}  // namespace

const char* app_state_name(AppState s) {
  switch (s) {
    case AppState::NeverAttached: return "never-attached";
    case AppState::Attached: return "attached";
    case AppState::Finalized: return "finalized";
    case AppState::Crashed: return "crashed";
  }
  return "unknown";
}

ToolProcess::ToolProcess(ToolOptions opts, Rank rank, std::uint32_t size)
    : opts_(std::move(opts)),
      rank_(rank),
      size_(size),
      tree_parent_(BinomialTree(size, 0).parent(rank.value).value_or(rank.value)) {}

ToolProcess::~ToolProcess() {
  // Modules' handlers are code of their plugins: gone before the plugins are.
  links_.clear();
  plugins_.clear();
  for (auto& p : loaded_) unload_plugin(p);
  consumer_.reset();
  channel::destroy_channel_block(&block_);
  if (app_listener_) app_listener_->close();
}

namespace {
// The address other nodes reach this one at: its host name, resolved here
// once (peers connect to addresses, not names). Loopback when the name does
// not resolve.
std::string host_address() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "127.0.0.1";
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(name, nullptr, &hints, &res) != 0 || !res) return "127.0.0.1";
  char text[INET_ADDRSTRLEN] = {};
  const auto* in = reinterpret_cast<const sockaddr_in*>(res->ai_addr);
  const bool ok = ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text) != nullptr;
  ::freeaddrinfo(res);
  return ok ? text : "127.0.0.1";
}
}  // namespace

std::string ToolProcess::prepare() {
  if (opts_.transport == "mpi") {
    transport_ = std::make_unique<MpiTransport>();
  } else if (opts_.transport == "shm") {
    auto shm = std::make_unique<ShmTransport>(io_, rank_, size_, opts_.token, opts_.session_dir);
    shm_ = shm.get();
    transport_ = std::move(shm);
  } else {
    auto tcp = std::make_unique<TcpTransport>(io_, rank_, size_, opts_.token);
    tcp_ = tcp.get();
    transport_ = std::move(tcp);
  }
  if (opts_.chaos_delay_us > 0) {
    if (rank_.value == 0)
      spdlog::warn("delaying every tool-to-tool message by a random 0..{} us "
                   "(VCX_CHAOS_DELAY_US), seed {}; VCX_CHAOS_SEED={} repeats the delays",
                   opts_.chaos_delay_us, opts_.chaos_seed, opts_.chaos_seed);
    transport_ = std::make_unique<DelayingTransport>(io_, std::move(transport_),
                                                     opts_.chaos_delay_us, opts_.chaos_seed);
  }
  transport_->set_handler(PeerChannel::Control, [this](Rank src, std::span<const std::uint8_t> b) {
    on_control_message(src, b);
  });
  transport_->set_handler(PeerChannel::Analysis, [this](Rank src, std::span<const std::uint8_t> b) {
    on_analysis_message(src, b);
  });
  transport_->set_error_handler([this](Rank peer, const std::string& what) {
    if (terminate_) return;
    // Once this tool's subtree is done, the others stop as soon as
    // Terminate reaches them, which may be before it reaches this one: a
    // peer's connection closing then is the normal end. The parent's closes
    // only after it sent this tool Terminate, so its loss is still a failure.
    if (done_sent_ && Rank{tree_parent_} != peer) {
      spdlog::debug("after this tool was done: {}", what);
      return;
    }
    abort_all(what);
  });
  // Listening on every address (a run across nodes): the others reach this
  // tool by its host name.
  const std::string advertise = opts_.bind_host == "0.0.0.0" ? host_address() : opts_.bind_host;
  const std::string endpoint = tcp_   ? tcp_->listen(opts_.bind_host, advertise)
                               : shm_ ? shm_->listen(opts_.bind_host, advertise)
                                      : std::string();

  // The application finds this tool by what the listener publishes in the
  // session directory: the Unix socket (shm) or the TCP endpoint (tcp).
  app_listener_ = AppListener::create(
      io_, opts_.channel == "tcp" ? channel::ChannelKind::Tcp : channel::ChannelKind::Shm,
      opts_.token);
  app_listener_->on_admit([this](const channel::AttachHello& h) { return admit_app(h); });
  app_listener_->on_attached([this](int fd, const channel::AttachHello& h) {
    app_pid_ = h.pid;
    on_app_attached(fd);
  });
  app_listener_->on_refused([](channel::AttachStatus, const std::string& why) {
    spdlog::warn("refused an application connection: {}", why);
  });
  app_listener_->listen(opts_.session_dir, rank_.value, opts_.bind_host);
  return endpoint;
}

void ToolProcess::set_peer_endpoints(std::vector<std::string> endpoints) {
  if (tcp_) tcp_->set_peers(std::move(endpoints));
  if (shm_) shm_->set_peers(endpoints);
}

void ToolProcess::load_plugins() {
  // Every plugin is loaded before any starts, so that the options given are
  // checked against all their declarations and complete with the defaults
  // when the first one reads them.
  loaded_.push_back(load_plugin(opts_.plugin_dir, PluginKind::Engine, opts_.engine));
  for (const auto& name : opts_.translators)
    loaded_.push_back(load_plugin(opts_.plugin_dir, PluginKind::Translator, name));
  for (const auto& name : opts_.modules)
    loaded_.push_back(load_plugin(opts_.plugin_dir, PluginKind::Module, name));
  std::vector<DeclaredOptions> declared;
  for (const LoadedPlugin& l : loaded_) declared.push_back({l.name, l.descriptor->options});
  if (const std::string error = apply_option_specs(opts_.plugin_options, declared); !error.empty())
    throw std::runtime_error(error);

  std::size_t next = 0;
  auto instantiate = [&](const std::string& name) -> Plugin* {
    const PluginDescriptor* d = loaded_[next++].descriptor;
    std::string error;
    Plugin* p = d->create(*this, &error);
    if (!p) throw std::runtime_error(name + ": " + (error.empty() ? "failed to start" : error));
    plugins_.emplace_back(p);
    return p;
  };
  Plugin* e = instantiate(opts_.engine);
  engine_ = e->engine();
  if (!engine_) throw std::runtime_error(opts_.engine + " is not an exchange engine");
  for (const auto& name : opts_.translators) {
    Translator* t = instantiate(name)->translator();
    if (!t) throw std::runtime_error(name + " is not a translator");
    const auto m = static_cast<std::size_t>(t->model());
    if (m >= translators_.size() || translators_[m])
      throw std::runtime_error("translator " + name + " claims a model that is taken");
    translators_[m] = t;
  }
  std::string needs_stalls;  // a module that needs the application to wait at every wait
  for (const auto& name : opts_.modules) {
    ClockedCallObserver* o = instantiate(name)->observer();
    const std::uint32_t needs = loaded_[next - 1].descriptor->needs;
    if (needs & kNeedsStallAtWaits) needs_stalls = name;
    if (o) {
      observers_.push_back(o);
      engine_->add_observer(o);
      if (needs & kNeedsTimestamps) timed_observers_.push_back(o);
    }
  }
  if (!needs_stalls.empty() && opts_.stall == "never")
    throw std::runtime_error("the module " + needs_stalls + " needs the application to wait "
                             "for its tool at every wait: run without --stall never (or with "
                             "--stall waits)");
  opts_.no_stall = opts_.stall == "never" || (opts_.stall.empty() && needs_stalls.empty());
}

// ---------------------------------------------------------------------------
// Analysis modules

// Messages of module `id_` start with that byte; the same module has the
// same id in every tool, since every tool loads the same modules in order.
class ToolProcess::ModuleLink final : public AnalysisLink {
 public:
  ModuleLink(ToolProcess& tool, std::string name, std::uint8_t id)
      : tool_(tool), name_(std::move(name)), id_(id) {}
  void send(Rank dst, std::span<const std::uint8_t> payload) override {
    if (tool_.done_sent_)
      spdlog::warn("module {} sent a message after its tool was done; it may be lost", name_);
    buf_.resize(payload.size() + 1);
    buf_[0] = id_;
    if (!payload.empty()) std::memcpy(buf_.data() + 1, payload.data(), payload.size());
    ++tool_.analysis_counts_.sent;
    tool_.transport_->send(dst, PeerChannel::Analysis, buf_);
  }
  void set_handler(Handler h) override { handler_ = std::move(h); }
  const std::string& name() const { return name_; }
  void deliver(Rank src, std::span<const std::uint8_t> payload) {
    if (handler_) handler_(src, payload);
  }

 private:
  ToolProcess& tool_;
  std::string name_;
  std::uint8_t id_;
  Handler handler_;
  std::vector<std::uint8_t> buf_;
};

AnalysisLink* ToolProcess::analysis_link(const char* module) {
  for (auto& l : links_)
    if (l->name() == module) return l.get();
  if (!transport_ || links_.size() >= 255) return nullptr;
  links_.push_back(
      std::make_unique<ModuleLink>(*this, module, static_cast<std::uint8_t>(links_.size())));
  return links_.back().get();
}

void ToolProcess::on_analysis_message(Rank src, std::span<const std::uint8_t> b) {
  ++analysis_counts_.received;
  if (!b.empty() && b[0] < links_.size()) links_[b[0]]->deliver(src, b.subspan(1));
  maybe_report_done();
}

bool ToolProcess::notes_wanted() const {
  for (const ClockedCallObserver* o : observers_)
    if (o->wants_notes()) return true;
  return false;
}

bool ToolProcess::receive_notes_wanted() const {
  for (const ClockedCallObserver* o : observers_)
    if (o->wants_receive_notes()) return true;
  return false;
}

ToolProcess::Counts ToolProcess::subtree_counts() const {
  Counts c = analysis_counts_;
  for (const auto& [child, cc] : child_counts_) {
    c.sent += cc.sent;
    c.received += cc.received;
  }
  return c;
}

const char* ToolProcess::call_name(std::uint8_t model, std::uint16_t call) const {
  if (model < translators_.size() && translators_[model]) return translators_[model]->call_name(call);
  return "?";
}

// Replies before the engine ran the events: with --no-stall (only lock
// acquisitions want replies then, and they need only their depositions'
// grants), and where holding the application could deadlock it. Either way
// never past an acquisition not granted yet.
void ToolProcess::release_early() {
  const bool deadlock_risk = !opts_.no_stall && engine_->must_not_stall();
  if (!opts_.no_stall && !deadlock_risk) return;
  const std::uint64_t through = std::min(max_reply_wanted_, engine_->replies_allowed_through());
  if (through <= replied_) return;
  if (deadlock_risk) ++released_replies_;
  reply(through);
}

void ToolProcess::reply(std::uint64_t event_seq) {
  if (!consumer_ || event_seq <= replied_) return;
  replied_ = event_seq;
  consumer_->reply(event_seq);
  arm_app_write();
}

// ---------------------------------------------------------------------------
// The application connection

AppListener::Decision ToolProcess::admit_app(const channel::AttachHello& hello) {
  AppListener::Decision d;
  channel::AttachReply& reply = d.reply;
  auto refuse = [&](channel::AttachStatus st, const std::string& msg) {
    reply.status = st;
    std::snprintf(reply.message, sizeof reply.message, "%s", msg.c_str());
    return d;
  };
  if (app_state_ != AppState::NeverAttached)
    return refuse(channel::AttachStatus::AlreadyAttached, "an application rank is attached already");
  if (hello.world_size != size_)
    return refuse(channel::AttachStatus::SizeMismatch,
                  "the application has " + std::to_string(hello.world_size) +
                      " ranks but the tool job has " + std::to_string(size_) +
                      "; start both with the same -n");
  if (hello.world_rank != rank_.value)
    return refuse(channel::AttachStatus::RankMismatch,
                  "application rank " + std::to_string(hello.world_rank) +
                      " connected to tool rank " + std::to_string(rank_.value));
  const std::uint32_t mode = (opts_.no_stall ? std::uint32_t{channel::kModeNoStall} : 0u) |
                             (opts_.shmem_flags ? 0u : std::uint32_t{channel::kModeNoFlagWrites}) |
                             (opts_.app_yield ? std::uint32_t{channel::kModeYieldInWaits} : 0u) |
                             (notes_wanted() ? std::uint32_t{channel::kModeLocalAccesses} : 0u) |
                             (timed_observers_.empty() ? 0u
                                                       : std::uint32_t{channel::kModeTimestamps});
  reply.status = channel::AttachStatus::Ok;
  reply.mode_flags = mode;
  reply.app_spin_ns = opts_.app_spin_ns;
  if (app_listener_->kind() == channel::ChannelKind::Tcp) {
    reply.channel_bytes = opts_.ring_bytes;  // the ring both ends lay out alike
    return d;
  }
  // A block left from an application that was admitted but never got the
  // answer is replaced.
  channel::destroy_channel_block(&block_);
  std::string error;
  if (!channel::create_channel_block(opts_.ring_bytes, mode, &block_, &error))
    return refuse(channel::AttachStatus::Internal, error);
  reply.channel_bytes = block_.bytes;
  d.pass_fd = block_.memfd;
  return d;
}

void ToolProcess::on_app_attached(int fd) {
  app_stream_ = std::make_unique<asio::posix::stream_descriptor>(io_, fd);
  app_state_ = AppState::Attached;
  if (app_listener_->kind() == channel::ChannelKind::Tcp) {
    consumer_.emplace(fd, opts_.ring_bytes);
    arm_app_wait();
    return;
  }
  ::close(block_.memfd);  // the mapping stays; the application has its own descriptor
  block_.memfd = -1;
  consumer_.emplace(block_.control);
  arm_app_read();
}

void ToolProcess::arm_app_read() {
  app_stream_->async_read_some(asio::buffer(wake_buf_), [this](const error_code& e, std::size_t) {
    if (e) {
      app_eof_ = true;
      app_gone();
      return;
    }
    arm_app_read();  // the bytes only wake us; the ring holds the events
  });
}

// TCP: the connection carries the events, so the loop reads it itself
// (service_channel); this only ends a sleep when it becomes readable. Armed
// when everything readable has been read, so it never fires for old news.
void ToolProcess::arm_app_wait() {
  if (app_wait_armed_ || app_eof_) return;
  app_wait_armed_ = true;
  app_stream_->async_wait(asio::posix::stream_descriptor::wait_read,
                          [this](const error_code&) { app_wait_armed_ = false; });
}

// TCP: replies the connection had no room for leave once it has.
void ToolProcess::arm_app_write() {
  channel::TcpConsumer* tcp = consumer_ ? consumer_->tcp() : nullptr;
  if (app_write_armed_ || !tcp || !tcp->output_pending()) return;
  app_write_armed_ = true;
  app_stream_->async_wait(asio::posix::stream_descriptor::wait_write, [this](const error_code& e) {
    app_write_armed_ = false;
    if (e || !consumer_ || !consumer_->tcp()) return;
    consumer_->tcp()->flush_output();
    arm_app_write();
  });
}

bool ToolProcess::wants_reply(std::uint32_t flags) const {
  return (flags & kEventAlwaysReply) || ((flags & kEventNeedsReply) && !opts_.no_stall);
}

void ToolProcess::report_event_time(const EventHeader& ev) {
  const EventTiming* timing = event_timing(ev);
  if (!timing) return;
  const EventTime t{ev.seq, timing->enter_ns, timing->previous_leave_ns, ev.call_site};
  for (ClockedCallObserver* o : timed_observers_) o->on_event_time(t);
}

void ToolProcess::handle_control_event(const EventHeader& ev) {
  report_event_time(ev);
  if (static_cast<ControlEvent>(ev.type) == ControlEvent::ClockSync &&
      ev.payload_size >= sizeof(ClockSyncEvent)) {
    ClockSyncEvent e;
    std::memcpy(&e, &ev + 1, sizeof e);
    const ClockSync s{e.phase, e.offset_ns, e.local_ns, e.rtt_ns};
    for (ClockedCallObserver* o : timed_observers_) o->on_clock_sync(s);
  }
  if (static_cast<ControlEvent>(ev.type) == ControlEvent::Detach) {
    detach_seen_ = true;
    app_state_ = AppState::Finalized;
    if (ev.payload_size >= sizeof app_account_)
      std::memcpy(&app_account_, &ev + 1, sizeof app_account_);
  }
  const bool wants = wants_reply(ev.flags);
  if (wants) max_reply_wanted_ = ev.seq;
  program_.reset(Model::Control, ev.type, ev.seq);
  engine_->enqueue(program_, wants);
}

// Reading on would only grow the engine's queue: the events are as well in
// the channel, whose filling holds the application back. Never while the
// engine needs the application's later events to go on (must_not_stall).
bool ToolProcess::backlog_full() const {
  return engine_->backlog() >= opts_.max_backlog && !engine_->must_not_stall();
}

bool ToolProcess::service_channel(bool all) {
  if (!consumer_) return false;
  int n = 0;
  const bool full = !all && backlog_full();
  for (; n < 4096 && !full; ++n) {
    const EventHeader* ev = consumer_->peek();
    if (!ev) break;
    ++events_;
    if (ev->model == Model::Control) {
      handle_control_event(*ev);
    } else {
      const auto m = static_cast<std::size_t>(ev->model);
      Translator* t = m < translators_.size() ? translators_[m] : nullptr;
      if (!t)
        fatal("events of model " + std::to_string(m) +
              " arrived but no translator for it is loaded (see vcx-run --help, --translators)");
      program_.reset(ev->model, ev->type, ev->seq);
      // A failure while reading the call names it.
      reading_ = ev;
      last_model_ = ev->model;
      last_type_ = ev->type;
      last_seq_ = ev->seq;
      any_call_read_ = true;
      if (!timed_observers_.empty()) report_event_time(*ev);
      t->translate(*ev, engine_->control(), program_);
      const bool wants = wants_reply(ev->flags);
      if (wants) max_reply_wanted_ = ev->seq;
      engine_->enqueue(program_, wants);
      reading_ = nullptr;
    }
    consumer_->pop();
  }
  peak_backlog_ = std::max(peak_backlog_, engine_->backlog());
  if (channel::TcpConsumer* tcp = consumer_->tcp(); tcp && n < 4096 && !full) {
    if (tcp->closed() && !app_eof_) {
      // Everything the application sent before its end has been read.
      if (tcp->malformed())
        spdlog::error("application rank {} sent a malformed event stream", rank_.value);
      app_eof_ = true;
      app_gone();
    } else {
      arm_app_wait();
    }
  }
  return n > 0;
}

void ToolProcess::app_gone() {
  if (app_state_ == AppState::Crashed) return;
  // Alive when the analysis stopped (settle_app), so taken down with the job.
  if (aborted_) return;
  // Whatever the application pushed before it went is still in the ring.
  while (service_channel(true)) {
  }
  if (detach_seen_) return;
  app_state_ = AppState::Crashed;
  spdlog::error("application rank {} ended without finishing (crashed, killed or exited early)",
                rank_.value);
  engine_->run();
  // Left before the tools stop, so that the other ranks' interceptors, when
  // they find their tools gone, know why and run on instead of aborting.
  if (std::FILE* f = std::fopen(session::file(opts_.session_dir, session::kAppFailed).c_str(), "w")) {
    std::fprintf(f, "%u\n", rank_.value);
    std::fclose(f);
  }
  abort_all("application rank " + std::to_string(rank_.value) + " ended without finishing");
}

// Another tool stops the analysis: what this rank pushed until now is
// analysed as far as it can be, so that its trace holds it; and if the rank
// has ended too (mpiexec takes the job down), that is reported.
void ToolProcess::settle_app() {
  if (app_state_ != AppState::Attached || !app_stream_) return;
  pollfd p{app_stream_->native_handle(), POLLRDHUP, 0};
  const bool ended = ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
  while (service_channel(true)) {
  }
  engine_->run();
  if (ended && !detach_seen_ && app_state_ == AppState::Attached) {
    app_state_ = AppState::Crashed;
    spdlog::error("application rank {} ended without finishing (crashed, killed or exited early)",
                  rank_.value);
  }
}

// ---------------------------------------------------------------------------
// Agreement between the tools

void ToolProcess::on_control_message(Rank src, std::span<const std::uint8_t> b) {
  if (b.empty()) return;
  switch (static_cast<ControlMsg>(b[0])) {
    case ControlMsg::Done: {
      Counts c;
      if (b.size() >= 1 + 2 * sizeof(std::uint64_t)) {
        std::memcpy(&c.sent, b.data() + 1, sizeof c.sent);
        std::memcpy(&c.received, b.data() + 1 + sizeof c.sent, sizeof c.received);
      }
      if (child_counts_.emplace(src.value, c).second)
        ++children_done_;
      else
        child_counts_[src.value] = c;  // the subtree's counts changed
      maybe_report_done();
      break;
    }
    case ControlMsg::Terminate:
      terminate_children();
      break;
    case ControlMsg::Abort:
      if (!aborted_) {
        aborted_ = true;
        abort_reason_.assign(b.begin() + 1, b.end());
        stopped_at_ns_ = realtime_ns();
        spdlog::debug("stopping: {}", abort_reason_);
        settle_app();
        flush_observers();
        if (consumer_) consumer_->set_tool_state(channel::ToolState::Failed);
        arm_app_write();
        terminate_ = true;
      }
      break;
  }
}

void ToolProcess::terminate_children() {
  const auto what = static_cast<std::uint8_t>(ControlMsg::Terminate);
  BinomialTree(size_, 0).for_each_child_largest_first(rank_.value, [&](std::uint32_t c) {
    transport_->send(Rank{c}, PeerChannel::Control, {&what, 1});
  });
  terminate_ = true;
}

// For vcx-run's progress line: "<events> <application state>", rewritten at
// most once a second and only when something changed, so an idle tool
// writes nothing.
void ToolProcess::maybe_write_progress() {
  const std::uint64_t now = now_ns();
  if (now - progress_written_ns_ < 1'000'000'000ULL) return;
  if (events_ == progress_events_ && app_state_ == progress_state_) return;
  progress_written_ns_ = now;
  progress_events_ = events_;
  progress_state_ = app_state_;
  write_file_atomically(session::progress(opts_.session_dir, rank_.value),
                        std::to_string(events_) + " " + app_state_name(app_state_) + "\n",
                        nullptr);
}

// A subtree is done when its applications finished and their calls are
// analysed. The run ends when the whole tree is and every analysis message
// sent has arrived: modules send none once their tool is done, so the sums
// over all tools' reports are final for "sent", and "received" reaches them.
void ToolProcess::maybe_report_done() {
  if (aborted_ || terminate_) return;
  if (!done_sent_) {
    if (app_state_ != AppState::Finalized || !engine_->idle()) return;
    const BinomialTree tree(size_, 0);
    if (children_done_ < tree.child_count(rank_.value)) return;
    // Modules send what they held back before this tool counts as done.
    for (ClockedCallObserver* o : observers_) o->on_idle();
    done_sent_ = true;
  }
  const Counts c = subtree_counts();
  if (rank_.value == 0) {
    if (c.sent == c.received) terminate_children();  // everyone is done
    return;
  }
  if (reported_counts_ == c && reported_once_) return;
  reported_counts_ = c;
  reported_once_ = true;
  std::uint8_t msg[1 + 2 * sizeof(std::uint64_t)];
  msg[0] = static_cast<std::uint8_t>(ControlMsg::Done);
  std::memcpy(msg + 1, &c.sent, sizeof c.sent);
  std::memcpy(msg + 1 + sizeof c.sent, &c.received, sizeof c.received);
  transport_->send(Rank{tree_parent_}, PeerChannel::Control, msg);
}

void ToolProcess::abort_all(const std::string& why, bool logged) {
  if (aborted_) return;
  aborted_ = true;
  abort_reason_ = why;
  stopped_at_ns_ = realtime_ns();
  if (!logged) spdlog::error("stopping the analysis: {}", why);
  if (engine_ && !engine_->idle())
    spdlog::warn("stopping with calls left to analyse; the first waits for {}",
                 engine_->blocked_on());
  // The job may be taken down before this tool ends: vcx-run reads the
  // reason from the stats written now.
  write_stats();
  std::vector<std::uint8_t> msg{static_cast<std::uint8_t>(ControlMsg::Abort)};
  msg.insert(msg.end(), why.begin(), why.end());
  for (std::uint32_t r = 0; r < size_; ++r)
    if (r != rank_.value) transport_->send(Rank{r}, PeerChannel::Control, msg);
  flush_observers();
  if (consumer_) consumer_->set_tool_state(channel::ToolState::Failed);
  arm_app_write();
  terminate_ = true;
}

namespace {
// Whether process `pid` on this node carries this session's token (vcx-run
// gives it to every application rank).
bool is_session_process(std::int32_t pid, const std::string& token) {
  if (token.empty()) return false;
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  std::string env((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return env.find(std::string("VCX_SESSION_TOKEN=") + token + '\0') != std::string::npos;
}
}  // namespace

void ToolProcess::flush_observers() {
  for (ClockedCallObserver* o : observers_) o->flush();
}

std::string ToolProcess::app_memory_map() const {
  if (app_pid_ <= 0 || !is_session_process(app_pid_, opts_.token)) return {};
  return process_maps(app_pid_);
}

std::string ToolProcess::source_of(std::uint64_t call_site) const {
  // Only an application rank of this node and session names its code here.
  if (call_site == 0 || app_pid_ <= 0 || !is_session_process(app_pid_, opts_.token)) return {};
  const std::string maps = process_maps(app_pid_);
  if (maps.empty()) return {};
  Symbolizer symbols(maps);
  return describe(symbols.resolve_program_call(call_site), call_site);
}

void ToolProcess::fatal(const std::string& why_) {
  std::string why = why_;
  if (reading_) {
    const std::string where = source_of(reading_->call_site);
    why += " (in " + std::string(call_name(static_cast<std::uint8_t>(reading_->model),
                                           reading_->type)) +
           (where.empty() ? "" : " at " + where) + ", event " + std::to_string(reading_->seq) +
           " of rank " + std::to_string(rank_.value) + ")";
  }
  spdlog::critical("{}", why);
  abort_all(why, true);
  // Give the abort notices a moment to leave.
  pump_transport(std::chrono::seconds(1));
  write_stats();
  std::fflush(nullptr);
  std::_Exit(70);
}

// ---------------------------------------------------------------------------
// The loop

int ToolProcess::run() {
  auto guard = asio::make_work_guard(io_);
  asio::signal_set signals(io_, SIGTERM, SIGINT, SIGHUP);
  signals.async_wait([this](const error_code& e, int sig) {
    if (!e) abort_all("tool rank " + std::to_string(rank_.value) + " received signal " +
                      std::to_string(sig));
  });

  // The launcher creates "app-exited" in the session directory when the
  // application job is over; a tool whose rank never attached learns from it
  // that nobody will come.
  int ino = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  std::unique_ptr<asio::posix::stream_descriptor> ino_desc;
  std::array<char, 4096> ino_buf{};
  const std::string exited_flag = session::file(opts_.session_dir, session::kAppExited);
  std::function<void()> arm_inotify;
  if (ino >= 0 && ::inotify_add_watch(ino, opts_.session_dir.c_str(), IN_CREATE | IN_MOVED_TO) >= 0) {
    ino_desc = std::make_unique<asio::posix::stream_descriptor>(io_, ino);
    arm_inotify = [&] {
      ino_desc->async_read_some(asio::buffer(ino_buf), [&](const error_code& e, std::size_t) {
        if (e) return;
        if (std::filesystem::exists(exited_flag) && app_state_ == AppState::NeverAttached) {
          app_state_ = AppState::Finalized;  // nothing to analyse, nothing to wait for
        }
        answer_where_request();
        arm_inotify();
      });
    };
    arm_inotify();
  } else if (ino >= 0) {
    ::close(ino);
  }
  if (std::filesystem::exists(exited_flag) && app_state_ == AppState::NeverAttached)
    app_state_ = AppState::Finalized;

  while (!terminate_) {
    io_.poll();
    const bool peer_news = transport_->poll() > 0;
    const bool progressed = service_channel();
    engine_->run();
    if (max_reply_wanted_ > replied_) release_early();
    maybe_report_done();
    if (opts_.progress) maybe_write_progress();
    if (terminate_) break;
    if (progressed || peer_news) nap_ns_ = 0;
    if (progressed) continue;
    for (ClockedCallObserver* o : observers_) o->on_idle();

    // Nothing to do: poll a little, then sleep until a socket has news.
    // A tool sharing its rank's core polls while the rank waits for it, and
    // while it is far behind its rank: the rank runs ahead anyway, and the
    // tool's turn-taking with its peers (one wake-up per message) is what
    // makes the run end late.
    if (nap_ns_ == 0 && (!opts_.shared_core || app_waits_for_reply() ||
                         engine_->backlog() >= kPollingBacklog)) {
      const std::uint64_t spin_until = now_ns() + opts_.spin_ns;
      bool woke = false;
      while (now_ns() < spin_until) {
        if (io_.poll() > 0 || transport_->poll() > 0 ||
            (consumer_ && !backlog_full() && !consumer_->empty())) {
          woke = true;
          break;
        }
      }
      if (woke) continue;
    }
    if (transport_->needs_polling()) {
      idle_nap();
      continue;
    }
    // With its backlog full the tool waits for the peers' messages only.
    const bool watch_app = consumer_ && !backlog_full();
    // With stalls the rank waits at every wait, and a peer's rank may wait
    // for this tool's part: no lazy sleep then.
    const bool lazily = watch_app && opts_.shared_core && opts_.no_stall && !consumer_->tcp();
    if (watch_app && !consumer_->prepare_sleep(lazily)) continue;
    if (lazily && !lazy_pending_) {
      // A timer still pending from an earlier sleep ends this one soon enough.
      lazy_pending_ = true;
      lazy_timer_.expires_after(kLazySleep);
      lazy_timer_.async_wait([this](const error_code&) { lazy_pending_ = false; });
    }
    if (!transport_->prepare_sleep()) {
      if (watch_app) consumer_->end_sleep();
      continue;
    }
    io_.run_one();
    transport_->end_sleep();
    if (watch_app) consumer_->end_sleep();
  }

  flush_observers();
  // Let queued messages (e.g. Terminate to others) leave before closing;
  // delay injection holds them back up to its longest delay more.
  pump_transport(std::chrono::seconds(2) +
                 std::chrono::ceil<std::chrono::milliseconds>(
                     std::chrono::microseconds(opts_.chaos_delay_us)));
  transport_->close();
  signals.cancel();
  if (ino_desc) ino_desc->close();
  return 0;
}

// A tool sharing its application's core polls only while the application
// sleeps until this tool answers: the core is idle then, and polling saves
// this tool's wake-up when the peer's message it waits for arrives. While the
// application runs, polling would take the core it needs.
bool ToolProcess::app_waits_for_reply() const {
  if (max_reply_wanted_ <= replied_) return false;
  return !block_.control || block_.control->app_sleeping.load(std::memory_order_relaxed) != 0;
}

// MPI cannot wake the loop, so with the MPI transport an idle tool naps,
// doubling from 10 us to 1 ms: a message from another tool waits at most one
// nap. Each nap is a timer on the event loop, so the application (its wake-up
// byte) and the sockets still end a nap at once.
void ToolProcess::idle_nap() {
  nap_ns_ = nap_ns_ == 0 ? kFirstNapNs : std::min(nap_ns_ * 2, kLongestNapNs);
  if (!nap_pending_) {
    // A nap cut short by a socket keeps its timer; it fires harmlessly later.
    nap_pending_ = true;
    nap_timer_.expires_after(std::chrono::nanoseconds(nap_ns_));
    nap_timer_.async_wait([this](const error_code&) { nap_pending_ = false; });
  }
  const bool watch_app = consumer_ && !backlog_full();
  if (watch_app && !consumer_->prepare_sleep()) return;
  io_.run_one();
  if (watch_app) consumer_->end_sleep();
}

// Runs the loop's sockets and the transport until every queued message has
// left, for at most `at_most`.
void ToolProcess::pump_transport(std::chrono::milliseconds at_most) {
  const auto deadline = std::chrono::steady_clock::now() + at_most;
  while (!transport_->flushed() && std::chrono::steady_clock::now() < deadline) {
    if (transport_->needs_polling()) {
      io_.poll();
      if (transport_->poll() == 0) {
        timespec ts{0, static_cast<long>(kFirstNapNs)};
        nanosleep(&ts, nullptr);
      }
    } else {
      io_.run_one_for(std::chrono::milliseconds(20));
    }
  }
}

namespace {
std::uint64_t cpu_ns(const rusage& ru) {
  auto ns = [](const timeval& t) {
    return static_cast<std::uint64_t>(t.tv_sec) * 1'000'000'000u +
           static_cast<std::uint64_t>(t.tv_usec) * 1'000u;
  };
  return ns(ru.ru_utime) + ns(ru.ru_stime);
}
}  // namespace

void ToolProcess::answer_where_request() {
  std::uint64_t number = 0;
  {
    std::ifstream in(session::file(opts_.session_dir, session::kWhereRequest));
    if (!(in >> number) || number <= where_answered_) return;
  }
  where_answered_ = number;
  std::string text = "rank " + std::to_string(rank_.value) + ": ";
  if (!any_call_read_) {
    text += "its tool has read no call yet";
  } else {
    text += "the last call its tool read was " +
            std::string(call_name(static_cast<std::uint8_t>(last_model_), last_type_)) +
            " (event " + std::to_string(last_seq_) + ")";
  }
  if (engine_ && !engine_->idle()) text += "; its tool waits for " + engine_->blocked_on();
  text += '\n';
  if (app_pid_ > 0 && app_state_ != AppState::Crashed) {
    std::string error;
    // Only this run's rank: with a TCP channel it may run on another node,
    // where the same pid is some other process.
    std::vector<ThreadStack> stacks;
    if (!is_session_process(app_pid_, opts_.token))
      error = "process " + std::to_string(app_pid_) + " is not this run's rank on this node";
    else
      stacks = sample_stacks(app_pid_, &error);
    if (stacks.empty()) {
      text += "  no stacks: " + error + "\n";
    } else {
      for (const std::string& line : describe_stacks(app_pid_, stacks, {"MPI_", "shmem_"}))
        text += "  " + line + "\n";
    }
  }
  write_file_atomically(session::where_answer(opts_.session_dir, rank_.value, number), text,
                        nullptr);
}

void ToolProcess::write_stats() const {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::uint64_t stall = 0, backpressure = 0;
  if (block_.control) {
    stall = block_.control->stall_ns.load();
    backpressure = block_.control->backpressure_ns.load();
  } else {
    stall = app_account_.stall_ns;
    backpressure = app_account_.backpressure_ns;
  }
  session::ToolStats st;
  st.rank = static_cast<int>(rank_.value);
  st.events = events_;
  st.clocked_calls = engine_ ? engine_->clocked_calls() : 0;
  st.stall_ns = stall;
  st.backpressure_ns = backpressure;
  st.released_replies = released_replies_;
  if (transport_) {
    st.messages_sent = transport_->stats().messages_sent;
    st.bytes_sent = transport_->stats().bytes_sent;
    st.shm_messages_sent = transport_->stats().shm_messages_sent;
    st.wakeups_sent = transport_->stats().wakeups_sent;
  }
  st.leased_acquisitions = engine_ ? engine_->leased_acquisitions() : 0;
  st.peak_backlog = peak_backlog_;
  st.stall = opts_.no_stall ? "never" : "waits";
  st.cpu_ns = cpu_ns(ru);
  st.transport = opts_.transport;
  st.channel = opts_.channel;
  st.max_rss_kb = ru.ru_maxrss > 0 ? static_cast<std::uint64_t>(ru.ru_maxrss) : 0;
  st.app = app_state_name(app_state_);
  st.aborted = aborted_;
  st.reason = abort_reason_;
  st.stopped_at_ns = stopped_at_ns_;
  write_file_atomically(session::stats(opts_.session_dir, rank_.value), st.to_json(), nullptr);
}

}  // namespace vcx::tool
