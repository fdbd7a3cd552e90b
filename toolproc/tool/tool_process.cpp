#include "tool_process.h"

#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <spdlog/spdlog.h>

#include "vcx/atomic_file.h"
#include "vcx/binomial_tree.h"
#include "vcx/session_layout.h"
#include "vcx/stack_sampler.h"
#include "vcx/symbolizer.h"

namespace vcx::tool {
namespace {

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

ToolProcess::ToolProcess(ToolOptions opts, Rank rank, std::uint32_t size)
    : opts_(std::move(opts)),
      rank_(rank),
      size_(size),
      termination_(rank, size, [this](Rank dst, std::span<const std::uint8_t> b) {
        transport_->send(dst, ToolPart::Control, b);
      }) {}

ToolProcess::~ToolProcess() {
  // Modules' handlers are code of their plugins: gone before the plugins are.
  links_.clear();
  plugins_.clear();
  for (auto& p : loaded_) unload_plugin(p);
}

// What plugins send and receive through the host (the exchange), counted.
class ToolProcess::ExchangeTransport final : public PeerTransport {
 public:
  ExchangeTransport(ToolProcess& tool) : tool_(tool) {}
  void send(Rank dst, ToolPart part, std::span<const std::uint8_t> payload) override {
    if (part == ToolPart::Exchange) ++tool_.exchange_counts_.sent;
    tool_.transport_->send(dst, part, payload);
  }
  void set_handler(ToolPart part, Handler h) override {
    if (part != ToolPart::Exchange || !h) {
      tool_.transport_->set_handler(part, std::move(h));
      return;
    }
    tool_.transport_->set_handler(
        part, [this, h = std::move(h)](Rank src, std::span<const std::uint8_t> b) {
          ++tool_.exchange_counts_.received;
          h(src, b);
        });
  }
  Rank self() const override { return tool_.transport_->self(); }
  std::uint32_t size() const override { return tool_.transport_->size(); }

 private:
  ToolProcess& tool_;
};

PeerTransport& ToolProcess::transport() { return *exchange_transport_; }

std::string ToolProcess::prepare() {
  peers_.emplace(io_, opts_, rank_, size_);
  transport_ = &peers_->transport();
  exchange_transport_ = std::make_unique<ExchangeTransport>(*this);
  transport_->set_handler(ToolPart::Control, [this](Rank src, std::span<const std::uint8_t> b) {
    on_control_message(src, b);
  });
  transport_->set_handler(ToolPart::Analysis, [this](Rank src, std::span<const std::uint8_t> b) {
    on_analysis_message(src, b);
  });
  transport_->set_error_handler([this](Rank peer, const std::string& what) {
    if (termination_.over()) return;
    // Once this tool's subtree is done, the others stop as soon as
    // Terminate reaches them, which may be before it reaches this one: a
    // peer's connection closing then is the normal end. The parent's closes
    // only after it sent this tool Terminate, so its loss is still a failure.
    if (termination_.done() && termination_.parent() != peer) {
      spdlog::debug("after this tool was done: {}", what);
      return;
    }
    abort_all(what);
  });
  const std::string endpoint = peers_->listen(opts_);

  app_.listen([this] { return app_terms(); }, [this] { app_gone(); });
  return endpoint;
}

void ToolProcess::set_peer_endpoints(std::vector<std::string> endpoints) {
  peers_->set_peers(std::move(endpoints));
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
      if (o->wants_wait_states()) wait_observers_.push_back(o);
    }
  }
  if (!needs_stalls.empty() && opts_.stall == session::Stall::Never)
    throw std::runtime_error("the module " + needs_stalls + " needs the application to wait "
                             "for its tool at every wait: run without --stall never (or with "
                             "--stall waits)");
  opts_.no_stall = opts_.stall == session::Stall::Never ||
                   (opts_.stall == session::Stall::Auto && needs_stalls.empty());
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
    if (tool_.termination_.done())
      spdlog::warn("module {} sent a message after its tool was done; it may be lost", name_);
    buf_.resize(payload.size() + 1);
    buf_[0] = id_;
    if (!payload.empty()) std::memcpy(buf_.data() + 1, payload.data(), payload.size());
    ++tool_.analysis_counts_.sent;
    tool_.transport_->send(dst, ToolPart::Analysis, buf_);
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
  if (!app_.consumer() || event_seq <= replied_) return;
  replied_ = event_seq;
  app_.reply(event_seq);
}

// ---------------------------------------------------------------------------
// The application connection

AppConnection::Terms ToolProcess::app_terms() const {
  AppConnection::Terms t;
  t.mode_flags = (opts_.no_stall ? std::uint32_t{channel::kModeNoStall} : 0u) |
                 (opts_.shmem_flags ? 0u : std::uint32_t{channel::kModeNoFlagWrites}) |
                 (opts_.yields() ? std::uint32_t{channel::kModeYieldInWaits} : 0u) |
                 (notes_wanted() ? std::uint32_t{channel::kModeLocalAccesses} : 0u) |
                 (timed_observers_.empty() ? 0u : std::uint32_t{channel::kModeTimestamps});
  t.app_spin_ns = opts_.app_spin();
  return t;
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
    app_.set_state(AppState::Finalized);
    if (ev.payload_size >= sizeof(DetachEvent)) {
      DetachEvent account;
      std::memcpy(&account, &ev + 1, sizeof account);
      app_.take_account(account);
    }
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
  channel::Consumer* const consumer = app_.consumer();
  if (!consumer) return false;
  int n = 0;
  const bool full = !all && backlog_full();
  for (; n < 4096 && !full; ++n) {
    const EventHeader* ev = consumer->peek();
    if (!ev) break;
    ++events_;
    read_seq_ = ev->seq;
    if (ev->model == Model::Control) {
      handle_control_event(*ev);
    } else {
      const auto m = static_cast<std::size_t>(ev->model);
      Translator* t = m < translators_.size() ? translators_[m] : nullptr;
      if (!t)
        fatal("events of model " + std::to_string(m) +
              " arrived but no translator for it is loaded (see vcx-run --help, --translators)");
      program_.reset(ev->model, ev->type, ev->seq, ev->call_site);
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
    consumer->pop();
  }
  peak_backlog_ = std::max(peak_backlog_, engine_->backlog());
  if (channel::TcpConsumer* tcp = consumer->tcp(); tcp && n < 4096 && !full) {
    if (tcp->closed() && !app_.ended()) {
      // Everything the application sent before its end has been read.
      if (tcp->malformed())
        spdlog::error("application rank {} sent a malformed event stream", rank_.value);
      app_.stream_ended();
    } else {
      app_.wait_readable();
    }
  }
  return n > 0;
}

void ToolProcess::app_gone() {
  if (app_.state() == AppState::Crashed) return;
  // Alive when the analysis stopped (settle_app), so taken down with the job.
  if (termination_.aborted()) return;
  // Whatever the application pushed before it went is still in the ring.
  while (service_channel(true)) {
  }
  if (detach_seen_) return;
  app_.set_state(AppState::Crashed);
  if (run_ended_by_vcx()) {
    abort_all("vcx-run ended the run", true);
    return;
  }
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
  if (app_.state() != AppState::Attached) return;
  const bool ended = app_.hung_up();
  while (service_channel(true)) {
  }
  engine_->run();
  if (ended && !detach_seen_ && app_.state() == AppState::Attached) {
    app_.set_state(AppState::Crashed);
    spdlog::error("application rank {} ended without finishing (crashed, killed or exited early)",
                  rank_.value);
  }
}

// ---------------------------------------------------------------------------
// Agreement between the tools

void ToolProcess::on_control_message(Rank src, std::span<const std::uint8_t> b) {
  switch (termination_.on_message(src, b)) {
    case Termination::Heard::Nothing:
      maybe_report_done();  // a child's Done may complete this subtree
      break;
    case Termination::Heard::Terminate:
      break;
    case Termination::Heard::Abort:
      stopped_at_ns_ = realtime_ns();
      spdlog::debug("stopping: {}", termination_.abort_reason());
      settle_app();
      flush_observers();
      app_.tell_failed();
      break;
  }
}

// A subtree is done when its applications finished and their calls are
// analysed (termination.h).
void ToolProcess::maybe_report_done() {
  const bool finished = app_.state() == AppState::Finalized && engine_ && engine_->idle();
  // `own` is read after before_done: what the modules send then counts.
  counts_now_ = message_counts();
  termination_.update(finished, counts_now_, [&] {
    // Modules send what they held back before this tool counts as done.
    for (ClockedCallObserver* o : observers_) o->on_idle();
    counts_now_ = message_counts();
  });
}

void ToolProcess::abort_all(const std::string& why, bool logged) {
  if (termination_.aborted()) return;
  termination_.abort(why, [&] {
    stopped_at_ns_ = realtime_ns();
    const bool expected = run_ended_by_vcx();
    if (!logged && !expected) spdlog::error("stopping the analysis: {}", why);
    if (engine_ && !engine_->idle() && !expected)
      spdlog::warn("stopping with calls left to analyse; the first waits for {}",
                   engine_->blocked_on());
    // The job may be taken down before this tool ends: vcx-run reads the
    // reason from the stats written now.
    write_stats();
  });
  flush_observers();
  app_.tell_failed();
}

bool ToolProcess::run_ended_by_vcx() const {
  std::error_code ec;
  return std::filesystem::exists(session::file(opts_.session_dir, session::kRunEnded), ec);
}

void ToolProcess::flush_observers() {
  for (ClockedCallObserver* o : observers_) o->flush();
}

std::string ToolProcess::app_memory_map() const {
  if (!app_.rank_on_this_node()) return app_.maps_at_attach();
  const std::string maps = process_maps(app_.pid());
  return maps.empty() ? app_.maps_at_attach() : maps;
}

std::string ToolProcess::source_of(std::uint64_t call_site) const {
  // Only an application rank of this node and session names its code here.
  if (call_site == 0 || !app_.rank_on_this_node()) return {};
  const std::string maps = process_maps(app_.pid());
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
        if (std::filesystem::exists(exited_flag) && app_.state() == AppState::NeverAttached) {
          app_.set_state(AppState::Finalized);  // nothing to analyse, nothing to wait for
        }
        answer_where_request();
        arm_inotify();
      });
    };
    arm_inotify();
  } else if (ino >= 0) {
    ::close(ino);
  }
  if (std::filesystem::exists(exited_flag) && app_.state() == AppState::NeverAttached)
    app_.set_state(AppState::Finalized);
  start_wait_watch();

  while (!termination_.over()) {
    io_.poll();
    const bool peer_news = transport_->poll() > 0;
    const bool progressed = service_channel();
    engine_->run();
    if (max_reply_wanted_ > replied_) release_early();
    maybe_report_done();
    if (opts_.progress) maybe_write_progress();
    if (termination_.over()) break;
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
            (app_.consumer() && !backlog_full() && !app_.consumer()->empty())) {
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
    channel::Consumer* const consumer = app_.consumer();
    const bool watch_app = consumer && !backlog_full();
    // With stalls the rank waits at every wait, and a peer's rank may wait
    // for this tool's part: no lazy sleep then.
    const bool lazily = watch_app && opts_.shared_core && opts_.no_stall && !consumer->tcp();
    if (watch_app && !consumer->prepare_sleep(lazily)) continue;
    if (lazily && !lazy_pending_) {
      // A timer still pending from an earlier sleep ends this one soon enough.
      lazy_pending_ = true;
      lazy_timer_.expires_after(kLazySleep);
      lazy_timer_.async_wait([this](const error_code&) { lazy_pending_ = false; });
    }
    if (!transport_->prepare_sleep()) {
      if (watch_app) consumer->end_sleep();
      continue;
    }
    io_.run_one();
    transport_->end_sleep();
    if (watch_app) consumer->end_sleep();
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
  return app_.rank_sleeping();
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
  channel::Consumer* const consumer = app_.consumer();
  const bool watch_app = consumer && !backlog_full();
  if (watch_app && !consumer->prepare_sleep()) return;
  io_.run_one();
  if (watch_app) consumer->end_sleep();
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

}  // namespace vcx::tool
