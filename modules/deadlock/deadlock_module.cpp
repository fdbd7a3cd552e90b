// The deadlock analysis (docs/analyses.md, "deadlock"). In each tool: where
// its rank is, written for vcx-run whenever that changes (state_file.h),
// and the answers to vcx-run's confirmation requests. In vcx-run: the
// decision over all ranks while the run goes on (deadlock_watch.h), and the
// report at the end.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "call_log.h"
#include "collective_mismatch.h"
#include "deadlock_watch.h"
#include "state_file.h"
#include "vcx/analysis_report.h"
#include "vcx/atomic_file.h"
#include "vcx/exchange.h"
#include "vcx/options.h"
#include "vcx/plugin.h"

namespace vcx::deadlock {
namespace {

class DeadlockModule final : public Plugin, public ClockedCallObserver {
 public:
  DeadlockModule(ToolHost& host, std::string dir, std::uint64_t log_budget)
      : host_(host), dir_(make_dir(std::move(dir))), log_(dir_, host.rank().value, log_budget) {}

  ClockedCallObserver* observer() override { return this; }
  void on_clocked_call(const ClockedCall& call) override {
    // Source lines of a potential deadlock come from the map as it is while
    // the application runs.
    if (!maps_written_ && call.call_site != 0) write_maps(host_.rank().value);
    log_.add(call, host_);
  }
  void on_send_completed(const SendCompletion& c) override { log_.add(c, host_); }
  void on_group(GroupId id, std::span<const Rank> members) override {
    log_.add_group(id, members);
  }
  void flush() override { log_.flush(); }
  bool wants_wait_states() const override { return true; }
  bool wants_collective_mismatches() const override { return true; }

  void on_collective_mismatch(const CollectiveMismatch& m) override {
    const std::uint32_t rank = host_.rank().value;
    write_maps(rank);
    mismatches_.add(m);
    write_file_atomically(mismatch_path(dir_, rank), mismatches_.text(), nullptr);
  }

  void on_wait_state(const RankWait& w) override {
    const std::uint32_t rank = host_.rank().value;
    if (w.status == RankWait::Status::Blocked && !w.wait) {
      answer_confirmation(rank, w.entered);
      return;
    }
    RankView v;
    v.pid = host_.app_pid();
    v.status = w.status;
    v.entered = w.entered;
    if (w.wait) v.wait = *w.wait;
    if (w.facts) v.facts = *w.facts;
    if (w.status == RankWait::Status::Blocked) write_maps(rank);
    write_file_atomically(state_path(dir_, rank), state_text(v, rank), nullptr);
  }

 private:
  // The rank's memory map, for source lines: once, before the first record
  // that has a return address.
  void write_maps(std::uint32_t rank) {
    if (maps_written_) return;
    maps_written_ = true;
    write_file_atomically(maps_path(dir_, rank), host_.app_memory_map(), nullptr);
  }

  void answer_confirmation(std::uint32_t rank, std::uint64_t entered) {
    const std::optional<ConfirmRequest> c = parse_confirm(read_text(confirm_path(dir_)));
    if (!c || c->number <= answered_) return;
    for (const auto& [r, e] : c->entries) {
      if (r != rank || e != entered) continue;
      answered_ = c->number;
      write_file_atomically(confirmed_path(dir_, rank),
                            "{\"number\":" + std::to_string(c->number) +
                                ",\"entered\":" + std::to_string(entered) + "}",
                            nullptr);
      return;
    }
  }

  static std::string make_dir(std::string dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    return dir;
  }

  ToolHost& host_;
  std::string dir_;
  CallLog log_;
  bool maps_written_ = false;
  std::uint64_t answered_ = 0;
  MismatchRecords mismatches_;
};

const OptionSpec kOptions[] = {
    {"deadlock.dir", "",
     "directory for each tool's state (vcx-run --analysis deadlock sets it)"},
    {"deadlock.potential-records", "1000000",
     "records of each rank's calls kept for the potential-deadlock check (about 48 bytes "
     "each, on disk; the check covers the calls up to where they run out; 0 turns it off)",
     OptionKind::Count},
    {nullptr, nullptr, nullptr},
};

Plugin* create(ToolHost& host, std::string* error) {
  const std::string dir = option_text(host.options(), kOptions, "deadlock.dir");
  if (dir.empty()) {
    if (error)
      *error = "deadlock: no results directory (deadlock.dir); run it with vcx-run "
               "--analysis deadlock";
    return nullptr;
  }
  return new DeadlockModule(host, dir,
                            option_count(host.options(), kOptions, "deadlock.potential-records"));
}

void build_report(const ReportRequest& request, AnalysisReport* out) {
  try {
    build_deadlock_report(request, out);
  } catch (const std::exception& e) {
    out->problems.push_back(std::string("the deadlock report failed: ") + e.what());
  }
}

void watch(const ReportRequest& request, RunVerdict* out) {
  try {
    watch_for_deadlock(request, out);
  } catch (const std::exception& e) {
    // A broken state file is no deadlock: the run goes on.
    (void)e;
  }
}

const AnalysisReporting kReporting = {&build_report, &watch, /*on_by_default=*/true};

const PluginDescriptor kDescriptor = {
    kPluginAbiVersion,
    PluginKind::Module,
    "deadlock",
    "deadlocks: ranks blocked in calls that nothing can release any more, with each rank's call "
    "and line, the run ending when one is certain; potential deadlocks, runs that finished only "
    "because MPI buffered standard sends; and collectives whose members make different calls",
    kOptions,
    &create,
    0,  // needs nothing of the run (no stalls)
    &kReporting,
};

}  // namespace
}  // namespace vcx::deadlock

VCX_PLUGIN(vcx::deadlock::kDescriptor)
