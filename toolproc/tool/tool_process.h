// One tool process: attaches its application rank, translates its events,
// drives the exchange engine, and agrees with the other tools when to stop.
// Single-threaded: one io_context carries the application socket, the peer
// transport and the channel; it sleeps in epoll when there is nothing to do
// (in naps of at most 1 ms with the MPI transport, which must be polled).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "app_connection.h"
#include "peer_transport.h"
#include "termination.h"
#include "tool_options.h"
#include "vcx/analysis.h"
#include "vcx/app_listener.h"
#include "vcx/asio.h"
#include "vcx/call_program.h"
#include "vcx/channel/attach.h"
#include "vcx/channel/consumer.h"
#include "vcx/exchange.h"
#include "vcx/plugin.h"
#include "vcx/plugin_loader.h"
#include "vcx/translator.h"

namespace vcx::tool {

class ToolProcess final : public ToolHost {
 public:
  ToolProcess(ToolOptions opts, Rank rank, std::uint32_t size);
  ~ToolProcess() override;

  // Listens for peers and for the application; returns this tool's peer
  // endpoint for the others.
  std::string prepare();
  void set_peer_endpoints(std::vector<std::string> endpoints);
  // Loads the engine, translators and modules; throws with a clear message.
  void load_plugins();
  // Runs until every tool agreed to stop (or one aborted). Returns the exit
  // status for the tool process.
  int run();
  void write_stats() const;
  // vcx-run asked where the ranks are (<session>/where-request holds the
  // request's number): writes where-<rank>-<number>.txt once per request.
  void answer_where_request();
  // "file:line" of an application call site, "" if the rank is not this node's
  // or its code is not known.
  std::string app_memory_map() const override;
  std::string source_of(std::uint64_t call_site) const;

  // ToolHost
  Rank rank() const override { return rank_; }
  std::uint32_t world_size() const override { return size_; }
  const Options& options() const override { return opts_.plugin_options; }
  PeerTransport& transport() override;
  void reply(std::uint64_t event_seq) override;
  const char* call_name(std::uint8_t model, std::uint16_t call) const override;
  [[noreturn]] void fatal(const std::string& why) override;
  channel::LeaseTable* app_leases() override { return app_.leases(); }
  bool notes_wanted() const override;
  bool receive_notes_wanted() const override;
  AnalysisLink* analysis_link(const char* module) override;
  std::int32_t app_pid() const override { return app_.pid(); }

 private:
  // What an attaching rank is told (AppConnection::Terms).
  AppConnection::Terms app_terms() const;
  // Reads and translates what the application pushed; `all` reads past a
  // full backlog (the application is gone: nothing is left to hold back).
  bool service_channel(bool all = false);
  bool wants_reply(std::uint32_t event_flags) const;
  // Hands a timed event's times to the modules that want them.
  void report_event_time(const EventHeader& ev);
  void handle_control_event(const EventHeader& ev);
  void app_gone();
  void release_early();
  void settle_app();
  void on_control_message(Rank src, std::span<const std::uint8_t> bytes);
  void maybe_report_done();
  void maybe_write_progress();
  // Stops the analysis of every tool; `logged`: the reason was logged already.
  void abort_all(const std::string& why, bool logged = false);
  void flush_observers();
  // vcx-run ended the run on an analysis's finding (session::kRunEnded):
  // the ranks' end is expected, no error.
  bool run_ended_by_vcx() const;
  void idle_nap();
  bool app_waits_for_reply() const;
  void pump_transport(std::chrono::milliseconds at_most);

  // Where the rank is, for the modules that want it (wait_watch.cpp): the
  // rank's blocked-call slot, looked at every kWaitCheck while one does.
  void start_wait_watch();
  void check_wait_state();
  void tell_wait_state(const RankWait& w);
  std::vector<ClockedCallObserver*> wait_observers_;
  std::optional<asio::steady_timer> wait_timer_;
  std::uint64_t wait_seen_ = 0;      // the slot entry seen at the last look (+1), 0: none
  std::uint64_t wait_told_ = 0;      // the entry told as blocked (+1), 0: none
  bool finish_told_ = false;

  ToolOptions opts_;
  Rank rank_;
  std::uint32_t size_;
  asio::io_context io_;
  std::optional<PeerLinks> peers_;
  ToolTransport* transport_ = nullptr;  // peers_'s
  asio::steady_timer nap_timer_{io_};
  bool nap_pending_ = false;
  // Ends a lazy sleep (the rank does not wake this tool for every call).
  asio::steady_timer lazy_timer_{io_};
  bool lazy_pending_ = false;
  AppConnection app_{io_, opts_, rank_, size_};
  bool detach_seen_ = false;

  std::vector<LoadedPlugin> loaded_;
  std::vector<std::unique_ptr<Plugin>> plugins_;
  ExchangeEngine* engine_ = nullptr;
  std::array<Translator*, 8> translators_{};
  std::vector<ClockedCallObserver*> observers_;
  std::vector<ClockedCallObserver*> timed_observers_;  // kNeedsTimestamps
  CallProgram program_;

  std::uint64_t events_ = 0;
  std::size_t peak_backlog_ = 0;  // the engine's largest backlog (programs)
  // The engine's backlog is full: the tool reads no more events until it
  // shrinks (the channel then fills and holds the application back).
  bool backlog_full() const;

  // The application event being read, for fatal()'s message.

  const EventHeader* reading_ = nullptr;
  // The last application call read, for "where the ranks are".
  Model last_model_{};
  std::uint16_t last_type_ = 0;
  std::uint64_t last_seq_ = 0;
  bool any_call_read_ = false;
  // The last event read, of any model: a control event (a clock sync of a
  // traced run) may be the last before a blocking call.
  std::uint64_t read_seq_ = 0;
  std::uint64_t where_answered_ = 0;  // the last request number answered
  std::uint64_t progress_written_ns_ = 0;
  std::uint64_t progress_events_ = ~std::uint64_t{0};
  AppState progress_state_ = AppState::NeverAttached;
  std::uint64_t max_reply_wanted_ = 0;  // highest ingested event that waits for a reply
  std::uint64_t replied_ = 0;
  std::uint64_t released_replies_ = 0;  // replies given early to avoid a deadlock

  std::uint64_t nap_ns_ = 0;  // current idle nap with a polled transport; 0 when busy

  // Analysis messages (vcx/analysis.h): modules send them only before their
  // tool is done, so the run may end once every one sent has arrived.
  class ModuleLink;
  std::vector<std::unique_ptr<ModuleLink>> links_;  // by the id byte their messages start with
  void on_analysis_message(Rank src, std::span<const std::uint8_t> b);
  Termination::Counts analysis_counts_;  // this tool's own
  // The exchange's messages are counted the same way, so that the run ends
  // only once each has reached its engine (which may learn from a late one
  // that members of a collective called different operations).
  class ExchangeTransport;
  std::unique_ptr<ExchangeTransport> exchange_transport_;
  Termination::Counts exchange_counts_;
  Termination::Counts counts_now_;  // what termination_ reads
  Termination::Counts message_counts() const {
    return {analysis_counts_.sent + exchange_counts_.sent,
            analysis_counts_.received + exchange_counts_.received};
  }
  // The end of the run, agreed with the other tools.
  Termination termination_;
  std::uint64_t stopped_at_ns_ = 0;  // when this tool stopped the analysis (realtime)
};

}  // namespace vcx::tool
