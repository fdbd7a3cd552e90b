// The trace module: writes every clocked call of this rank, and the times and
// call sites of the application's events, to <trace.dir>/rank-<R>.vcxt
// (format in vcx/trace_format.h); the application's memory map goes beside it
// (rank-<R>.maps) so that vcx-trace can name the call sites' source lines
// after the run.
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "vcx/atomic_file.h"
#include "vcx/exchange.h"
#include "vcx/plugin.h"
#include "vcx/trace_format.h"

namespace vcx {
namespace {

// Every tool process of the job creates the same directory at about the same
// time, so "already exists" is success at every level.
bool make_dirs(const std::string& dir, std::string* error) {
  for (std::size_t i = 1; i <= dir.size(); ++i) {
    if (i != dir.size() && dir[i] != '/') continue;
    const std::string prefix = dir.substr(0, i);
    if (::mkdir(prefix.c_str(), 0700) == 0 || errno == EEXIST) continue;
    *error = "trace: cannot create directory " + prefix + ": " + std::strerror(errno);
    return false;
  }
  struct stat st{};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    *error = "trace: " + dir + " is not a directory";
    return false;
  }
  return true;
}

class TraceModule final : public Plugin, public ClockedCallObserver {
 public:
  explicit TraceModule(ToolHost& host) : host_(host) {}
  ~TraceModule() override { finish(); }

  bool open(const std::string& dir, std::string* error) {
    reported_ = true;  // failures here go to *error, not to stderr
    if (!make_dirs(dir, error)) return false;
    dir_ = dir;
    path_ = dir + "/" + trace::rank_file_name(host_.rank());
    if (!writer_.open(path_, host_.rank(), host_.world_size(), error)) {
      *error = "trace: " + *error;
      return false;
    }
    reported_ = false;
    return true;
  }

  ClockedCallObserver* observer() override { return this; }

  void on_clocked_call(const ClockedCall& call) override {
    if (call.call_name && *call.call_name) {
      writer_.append(call);
    } else {
      ClockedCall named = call;
      named.call_name = host_.call_name(static_cast<std::uint8_t>(call.model), call.call);
      writer_.append(named);
    }
    report_failure();
  }

  void on_group(GroupId id, std::span<const Rank> members) override {
    writer_.append_group(id, members);
    report_failure();
  }

  void on_clock_sync(const ClockSync& s) override {
    writer_.append_sync(s);
    // The last measurement comes right before the application finalises:
    // its map now also has the libraries it loaded since the first event.
    if (s.phase == 1) write_maps();
    report_failure();
  }

  void on_event_time(const EventTime& t) override {
    if (!maps_written_) write_maps();
    writer_.append_time(t);
    report_failure();
  }

  void flush() override {
    writer_.flush();
    report_failure();
  }

 private:
  void finish() {
    writer_.close();
    report_failure();
  }

  // A full disk should not end the analysis of the run, but the user must
  // learn that the trace is incomplete; once is enough.
  void report_failure() {
    if (reported_ || !writer_.failed()) return;
    reported_ = true;
    std::fprintf(stderr, "vcx: %s; the trace of rank %u is incomplete\n",
                 writer_.error().c_str(), host_.rank().value);
  }

  // While the application runs: the objects its call sites are in.
  void write_maps() {
    maps_written_ = true;
    const std::string maps = host_.app_memory_map();
    if (maps.empty()) return;
    const std::string path = dir_ + "/" + trace::rank_maps_name(host_.rank());
    std::string error;
    if (!write_file_atomically(path, maps, &error))
      std::fprintf(stderr, "vcx: trace: %s; call sites of rank %u stay unresolved\n",
                   error.c_str(), host_.rank().value);
  }

  ToolHost& host_;
  std::string dir_;
  std::string path_;
  bool maps_written_ = false;
  trace::Writer writer_;
  bool reported_ = false;
};

const OptionSpec kOptions[] = {
    {"trace.dir", "", "directory for the per-rank trace files"},
    {nullptr, nullptr, nullptr},
};

Plugin* create(ToolHost& host, std::string* error) {
  std::string scratch;
  if (!error) error = &scratch;
  const std::string dir = option_text(host.options(), kOptions, "trace.dir");
  if (dir.empty()) {
    *error = "trace: no trace directory given (set trace.dir, e.g. vcx-run --trace DIR)";
    return nullptr;
  }
  auto m = std::make_unique<TraceModule>(host);
  if (!m->open(dir, error)) return nullptr;
  return m.release();
}

const PluginDescriptor kDescriptor = {
    kPluginAbiVersion,
    PluginKind::Module,
    "trace",
    "writes every clocked call with its vector clock to a per-rank binary trace",
    kOptions,
    &create,
    kNeedsTimestamps,
    nullptr,  // an output, no analysis: vcx-run --trace
};

}  // namespace
}  // namespace vcx

VCX_PLUGIN(vcx::kDescriptor)
