// The matches analysis (docs/analyses.md, "Wildcard matches"): for every
// receive posted with MPI_ANY_SOURCE, the source it matched and the other
// ranks whose message it could have matched. Each tool decides its own
// rank's receives from the translator's receive notes and the signals that
// reach it (WildcardMatches); the tools tell each other only where their
// ranks' synchronous sends completed (to the receiver's tool). At the end
// each tool writes its results, with its application's memory map so that
// vcx-run can name source lines, to <matches.dir>/rank-<R>.json.
//
// For vcx-run --explore, a tool also records every wildcard receive
// (matches.record): once decided, its source and the tick k of the first
// call known to follow its match, and for one with alternatives its posting
// clock. A replay that forces
// receive R pins every receive whose k is within R's posting clock: those
// matched before R was posted in every execution that agrees with this one.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "vcx/analysis_report.h"
#include "vcx/exchange.h"
#include "vcx/symbolizer.h"
#include "vcx/plugin.h"
#include "vcx/session_layout.h"
#include "matches_report.h"
#include "wildcard_matches.h"

namespace vcx::matches {
namespace {

using nlohmann::json;

// Note batches between two attempts to decide what waits (besides idle times).
constexpr std::uint64_t kDecideEvery = 256;
// Receives with alternatives kept in detail per tool; further ones are
// counted per source location only (a long master/worker run has one per
// task).
constexpr std::size_t kMaxFindings = 100000;
// Reports of completed synchronous sends wait for the tool's next idle
// moment unless this many bytes are waiting for one rank.
constexpr std::size_t kOutboxBytes = 4096;

class MatchesModule final : public Plugin, public ClockedCallObserver {
 public:
  MatchesModule(ToolHost& host, std::string dir, const std::string& record)
      : host_(host), self_(host.rank()), dir_(std::move(dir)),
        matches_(host.rank(), host.world_size()) {
    link_ = host_.analysis_link("matches");
    if (link_)
      link_->set_handler([this](Rank src, std::span<const std::uint8_t> b) { on_message(src, b); });
    matches_.expect_sync_reports(link_ != nullptr);
    outbox_.resize(host.world_size());
    if (!record.empty()) {
      const std::string path = record + "/rank-" + std::to_string(self_.value) + ".txt";
      record_.open(path);
      if (!record_) std::fprintf(stderr, "vcx: matches: cannot write %s\n", path.c_str());
      now_.assign(host.world_size(), 0);
      before_ = now_;
    }
  }

  ClockedCallObserver* observer() override { return this; }
  bool wants_receive_notes() const override { return true; }
  bool wants_signals() const override { return true; }

  void on_clocked_call(const ClockedCall& c) override {
    last_seq_ = c.seq;
    last_sent_ = std::any_of(c.messages.begin(), c.messages.end(),
                             [](const MessageEnd& m) { return m.sent; });
    if (record_.is_open()) {
      // A blocking receive is posted with the clock before its call.
      before_.swap(now_);
      now_.assign(c.clock.begin(), c.clock.end());
    }
  }

  void on_signal(const SignalArrival& s) override {
    matches_.signal(s.source, s.queue, s.position, s.synchronous, s.clock);
  }

  void on_signal_sent(Rank dst, QueueId, std::uint64_t) override {
    if (dst == self_) matches_.sent_to_self();
  }

  void on_notes(const NoteBatch& b) override {
    b.for_each([&](NoteKind kind, std::span<const std::uint8_t> p) {
      switch (kind) {
        case NoteKind::ReceivePosted: {
          ReceivePostedNote n;
          if (read_note(p, &n)) {
            matches_.posted(n);
            if (n.want_source == kNoteAnySource || n.forced != 0) {
              model_ = b.model;
              if (maps_.empty()) maps_ = read_maps();  // while the application runs
              if (record_.is_open()) keep_posting(b.clocked ? ClockSpan(before_) : b.clock);
            }
          }
          break;
        }
        case NoteKind::ReceiveBound: {
          ReceiveBoundNote n;
          if (read_note(p, &n)) matches_.bound(n);
          break;
        }
        case NoteKind::ReceiveOrdered: {
          ReceiveOrderedNote n;
          if (read_note(p, &n)) matches_.ordered(n.later, n.earlier);
          break;
        }
        case NoteKind::ReceiveCompleted: {
          ReceiveNote n;
          if (read_note(p, &n))
            matches_.completed(n.token, b.completion_tick(), b.clocked && last_sent_,
                               b.clocked ? last_seq_ : 0, b.call);
          break;
        }
        case NoteKind::ReceiveDropped: {
          ReceiveNote n;
          if (read_note(p, &n)) matches_.dropped(n.token);
          break;
        }
        case NoteKind::SyncSendCompleted: {
          SyncSendCompletedNote n;
          if (read_note(p, &n)) {
            // Every later event of this rank follows the match; so does
            // this call's, unless it sent too (a blocking MPI_Ssend).
            const ClockValue from = b.completion_tick() + (b.clocked && last_sent_ ? 1 : 0);
            sync_completed(n, from);
          }
          break;
        }
        default:
          break;  // memory notes are the race analysis's
      }
    });
    if (++batches_ % kDecideEvery == 0) decide(false);
  }

  void on_idle() override {
    send_outboxes();
    decide(false);
  }

  void flush() override {
    decide(true);
    write_results();
    if (record_.is_open()) record_.flush();
  }

 private:
  // Where a synchronous send of this rank completed, for the tool of the
  // rank that received it.
  struct SyncWire {
    std::uint64_t queue_a;
    std::uint64_t queue_b;
    std::uint64_t position;
    std::uint64_t from;  // this rank's clock entry from which events follow the match
  };
  static_assert(sizeof(SyncWire) == 32);

  void sync_completed(const SyncSendCompletedNote& n, ClockValue from) {
    if (n.dst == self_.value) {
      matches_.sync_completed(self_, QueueId{n.queue_a, n.queue_b}, n.position, from);
      return;
    }
    if (!link_ || n.dst >= outbox_.size()) return;
    const SyncWire w{n.queue_a, n.queue_b, n.position, from};
    std::vector<std::uint8_t>& box = outbox_[n.dst];
    if (box.empty()) pending_.push_back(n.dst);
    const std::size_t at = box.size();
    box.resize(at + sizeof w);
    std::memcpy(box.data() + at, &w, sizeof w);
    if (box.size() >= kOutboxBytes) send_outboxes();
  }

  void send_outboxes() {
    for (const std::uint32_t dst : pending_) {
      link_->send(Rank{dst}, outbox_[dst]);
      outbox_[dst].clear();
    }
    pending_.clear();
  }

  void on_message(Rank src, std::span<const std::uint8_t> bytes) {
    for (std::size_t at = 0; at + sizeof(SyncWire) <= bytes.size(); at += sizeof(SyncWire)) {
      SyncWire w;
      std::memcpy(&w, bytes.data() + at, sizeof w);
      matches_.sync_completed(src, QueueId{w.queue_a, w.queue_b}, w.position, w.from);
    }
  }

  void decide(bool final) {
    matches_.decide(final);
    for (WildcardResult& r : matches_.results()) {
      if (record_.is_open()) record_decision(r);
      Location& at = locations_[{r.pc, r.call}];
      at.call = r.call;
      ++at.receives;
      if (r.alternatives.empty()) continue;
      ++at.with_alternatives;
      if (findings_.size() >= kMaxFindings) {
        ++findings_dropped_;
        continue;
      }
      findings_.push_back(std::move(r));
    }
    matches_.results().clear();
  }

  // A wildcard receive's posting clock, kept until it is decided.
  void keep_posting(ClockSpan clock) {
    posted_clocks_[postings_++].assign(clock.begin(), clock.end());
  }

  // "d <index> <source> <k>" for every wildcard receive, and before it
  // "p <index> <posting clock>" for one with alternatives (a replay may
  // force it): what --explore pins replays with.
  void record_decision(const WildcardResult& r) {
    auto posted = posted_clocks_.find(r.index);
    if (posted != posted_clocks_.end()) {
      if (!r.alternatives.empty()) {
        record_ << "p " << r.index;
        for (const ClockValue v : posted->second) record_ << ' ' << v;
        record_ << '\n';
      }
      posted_clocks_.erase(posted);
    }
    record_ << "d " << r.index << ' ' << r.matched_source << ' ' << r.known_tick << '\n';
  }

  // The application's memory map, for naming code addresses later.
  std::string read_maps() const { return process_maps(host_.app_pid()); }

  void write_results() {
    if (maps_.empty()) maps_ = read_maps();
    const auto model = static_cast<std::uint8_t>(model_);
    json out;
    out["version"] = 1;
    out["rank"] = self_.value;
    out["ranks"] = host_.world_size();
    out["maps"] = maps_;
    out["stats"] = json{{"unreported", matches_.unreported()},
                        {"findings_dropped", findings_dropped_},
                        {"receives_kept", matches_.receives_kept()},
                        {"messages_kept", matches_.messages_kept()},
                        {"peak_messages", matches_.peak_messages()}};
    json locations = json::array();
    for (const auto& [key, at] : locations_)
      locations.push_back(json{{"pc", key.first},
                               {"call", host_.call_name(model, at.call)},
                               {"receives", at.receives},
                               {"with_alternatives", at.with_alternatives}});
    out["locations"] = std::move(locations);
    // Written beside its place and renamed, as write_file_atomically does, but
    // streamed: a document of all results would cost far more memory than
    // the results themselves.
    const std::string path = session::analysis_result(dir_, self_.value);
    const std::string tmp = path + ".tmp";
    {
      std::ofstream f(tmp);
      std::string head = out.dump();
      head.pop_back();  // the closing brace
      f << head << ",\"results\":[";
      bool first = true;
      for (const WildcardResult& r : findings_) {
        f << (first ? "" : ",")
          << json{{"index", r.index},
                  {"call", host_.call_name(model, r.call)},
                  {"pc", r.pc},
                  {"seq", r.completed_seq},
                  {"completed_by", host_.call_name(model, r.completed_call)},
                  {"matched_source", r.matched_source},
                  {"alternative_sources", r.alternatives}}
                 .dump();
        first = false;
      }
      f << "]}\n";
      if (!f) {
        std::fprintf(stderr, "vcx: matches: cannot write %s\n", tmp.c_str());
        return;
      }
    }
    std::rename(tmp.c_str(), path.c_str());
  }

  struct Location {
    std::uint16_t call = 0;
    std::uint64_t receives = 0;
    std::uint64_t with_alternatives = 0;
  };

  ToolHost& host_;
  Rank self_;
  std::string dir_;
  WildcardMatches matches_;
  Model model_ = Model::Mpi;
  AnalysisLink* link_ = nullptr;
  std::vector<std::vector<std::uint8_t>> outbox_;  // per destination rank
  std::vector<std::uint32_t> pending_;             // ranks with something in their outbox
  std::uint64_t last_seq_ = 0;
  bool last_sent_ = false;  // the latest clocked call sent a message (MPI_Sendrecv)
  std::uint64_t batches_ = 0;
  // By the posting call's address (and call, where the address is unknown).
  std::map<std::pair<std::uint64_t, std::uint16_t>, Location> locations_;
  std::vector<WildcardResult> findings_;         // receives with alternatives
  std::uint64_t findings_dropped_ = 0;           // further ones, not kept
  std::string maps_;
  // matches.record: every wildcard receive, for --explore's pins.
  std::ofstream record_;
  std::uint64_t postings_ = 0;
  std::unordered_map<std::uint64_t, std::vector<ClockValue>> posted_clocks_;  // undecided ones
  std::vector<ClockValue> now_, before_;  // the latest clocked call's clock, and the one before
};

const OptionSpec kOptions[] = {
    {"matches.dir", "", "directory for each tool's results (vcx-run --analysis matches sets it)"},
    {"matches.record", "",
     "directory to record every wildcard receive in, for replays (vcx-run --explore sets it)"},
    {nullptr, nullptr, nullptr},
};

Plugin* create(ToolHost& host, std::string* error) {
  const std::string dir = option_text(host.options(), kOptions, "matches.dir");
  if (dir.empty()) {
    if (error)
      *error =
          "matches: no results directory (matches.dir); run it with vcx-run --analysis matches";
    return nullptr;
  }
  return new MatchesModule(host, dir, option_text(host.options(), kOptions, "matches.record"));
}

// After the run, in vcx-run: the report from every tool's file.
void build_report(const ReportRequest& request, AnalysisReport* out) {
  try {
    MatchesReport r = build_matches_report(request.dir, request.ranks);
    out->text = std::move(r.text);
    out->findings = r.findings.dump();
    out->counted = r.with_alternatives;
    out->problems = std::move(r.problems);
  } catch (const std::exception& e) {
    out->problems.push_back(std::string("the matches report failed: ") + e.what());
  }
}

const AnalysisReporting kReporting = {&build_report, nullptr};

const PluginDescriptor kDescriptor = {
    kPluginAbiVersion,
    PluginKind::Module,
    "matches",
    "wildcard receives: the source each matched and the other ranks whose message it could have "
    "matched",
    kOptions,
    &create,
    0,  // needs nothing of the run (no stalls)
    &kReporting,
};

}  // namespace
}  // namespace vcx::matches

VCX_PLUGIN(vcx::matches::kDescriptor)
