#include "trace_set.h"

namespace vcx::trace {

bool completes_requests(const std::string& call) {
  return call.starts_with("MPI_Wait") || call.starts_with("MPI_Test");
}

TraceSet TraceSet::load(const std::string& dir) {
  TraceSet t;
  std::vector<RankFile> files;
  std::string err;
  if (!list_rank_files(dir, files, &err)) throw TraceError(err);
  if (files.empty())
    throw TraceError(dir + " is not a vcx trace (no rank-<R>" + kFileSuffix + " files in it)");
  Reader reader;
  for (const RankFile& f : files) {
    if (!reader.open(f.path, &err)) throw TraceError(err);
    if (reader.rank() != f.rank)
      throw TraceError(f.path + " holds the trace of rank " + std::to_string(reader.rank().value));
    if (t.world_size == 0) t.world_size = reader.world_size();
    if (reader.world_size() != t.world_size)
      throw TraceError(f.path + " was written for " + std::to_string(reader.world_size()) +
                       " ranks, the other files for " + std::to_string(t.world_size));
    RankTrace rt{f.rank, f.path, {}, {}, false};
    Record rec;
    while (reader.next(rec)) {
      t.timed = t.timed || rec.enter_ns != 0;
      rt.calls.push_back(std::move(rec));
    }
    if (!reader.error().empty()) throw TraceError(reader.error());
    rt.truncated = reader.truncated();
    rt.syncs = reader.syncs();
    for (const auto& [id, members] : reader.groups()) t.groups.try_emplace(id, members);
    t.ranks.push_back(std::move(rt));
  }
  return t;
}

Timelines TraceSet::timelines(bool aligned) const {
  Timelines lines(world_size);
  std::vector<std::vector<ClockSync>> syncs(world_size);
  for (const RankTrace& r : ranks) {
    for (const Record& c : r.calls) lines.add_call(r.rank.value, c.enter_ns, c.leave_ns, c.clock);
    syncs[r.rank.value] = r.syncs;
  }
  if (aligned) lines.align(syncs);
  return lines;
}

void TraceSet::correct_times(const CorrectionOptions& o, CorrectionReport* report) {
  Timelines lines = timelines(o.use_offsets);
  const CorrectionReport r = lines.correct(o);
  for (RankTrace& rt : ranks)
    for (std::size_t i = 0; i < rt.calls.size(); ++i) {
      rt.calls[i].enter_ns = static_cast<std::uint64_t>(lines.enter(rt.rank.value, i));
      rt.calls[i].leave_ns = static_cast<std::uint64_t>(lines.leave(rt.rank.value, i));
    }
  if (report) *report = r;
}

}  // namespace vcx::trace
