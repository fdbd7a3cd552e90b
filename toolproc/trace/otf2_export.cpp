#include "otf2_export.h"

#include <otf2/otf2.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <optional>
#include <string_view>

#include "site_names.h"

namespace vcx::trace {
namespace {

OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) {
  return OTF2_FLUSH;
}
OTF2_TimeStamp post_flush(void*, OTF2_FileType, OTF2_LocationRef) { return 0; }
OTF2_FlushCallbacks kFlushCallbacks = {pre_flush, post_flush};

void check(OTF2_ErrorCode rc, const char* what) {
  if (rc != OTF2_SUCCESS)
    throw TraceError(std::string("OTF2: ") + what + ": " + OTF2_Error_GetName(rc) + " (" +
                     OTF2_Error_GetDescription(rc) + ")");
}

// "MPI_Iallreduce_c" -> "allreduce": the operation a collective call does.
std::string operation_of(std::string_view name) {
  for (std::string_view prefix : {"MPI_", "shmem_", "shmemx_"})
    if (name.starts_with(prefix)) {
      name.remove_prefix(prefix.size());
      break;
    }
  std::string s(name);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view suffix : {"_init", "_c"})
    if (s.ends_with(suffix)) s.erase(s.size() - suffix.size());
  return s;
}

std::optional<OTF2_CollectiveOp> collective_op(std::string op) {
  static const std::map<std::string, OTF2_CollectiveOp> ops = {
      {"barrier", OTF2_COLLECTIVE_OP_BARRIER},
      {"barrier_all", OTF2_COLLECTIVE_OP_BARRIER},
      {"sync_all", OTF2_COLLECTIVE_OP_BARRIER},
      {"bcast", OTF2_COLLECTIVE_OP_BCAST},
      {"broadcast", OTF2_COLLECTIVE_OP_BCAST},
      {"gather", OTF2_COLLECTIVE_OP_GATHER},
      {"gatherv", OTF2_COLLECTIVE_OP_GATHERV},
      {"scatter", OTF2_COLLECTIVE_OP_SCATTER},
      {"scatterv", OTF2_COLLECTIVE_OP_SCATTERV},
      {"allgather", OTF2_COLLECTIVE_OP_ALLGATHER},
      {"allgatherv", OTF2_COLLECTIVE_OP_ALLGATHERV},
      {"alltoall", OTF2_COLLECTIVE_OP_ALLTOALL},
      {"alltoallv", OTF2_COLLECTIVE_OP_ALLTOALLV},
      {"alltoallw", OTF2_COLLECTIVE_OP_ALLTOALLW},
      {"allreduce", OTF2_COLLECTIVE_OP_ALLREDUCE},
      {"reduce", OTF2_COLLECTIVE_OP_REDUCE},
      {"reduce_scatter", OTF2_COLLECTIVE_OP_REDUCE_SCATTER},
      {"reduce_scatter_block", OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK},
      {"scan", OTF2_COLLECTIVE_OP_SCAN},
      {"exscan", OTF2_COLLECTIVE_OP_EXSCAN},
      {"fcollect", OTF2_COLLECTIVE_OP_ALLGATHER},
      {"collect", OTF2_COLLECTIVE_OP_ALLGATHERV},
  };
  if (auto it = ops.find(op); it != ops.end()) return it->second;
  // Non-blocking forms: MPI_Ibarrier is a barrier.
  if (op.size() > 1 && op[0] == 'i')
    if (auto it = ops.find(op.substr(1)); it != ops.end()) return it->second;
  return std::nullopt;
}

OTF2_RegionRole region_role(const std::string& name, bool collective) {
  const std::string op = operation_of(name);
  if (auto c = collective_op(op); c && collective) {
    switch (*c) {
      case OTF2_COLLECTIVE_OP_BARRIER: return OTF2_REGION_ROLE_BARRIER;
      case OTF2_COLLECTIVE_OP_BCAST:
      case OTF2_COLLECTIVE_OP_SCATTER:
      case OTF2_COLLECTIVE_OP_SCATTERV: return OTF2_REGION_ROLE_COLL_ONE2ALL;
      case OTF2_COLLECTIVE_OP_GATHER:
      case OTF2_COLLECTIVE_OP_GATHERV:
      case OTF2_COLLECTIVE_OP_REDUCE: return OTF2_REGION_ROLE_COLL_ALL2ONE;
      default: return OTF2_REGION_ROLE_COLL_ALL2ALL;
    }
  }
  if (collective) return OTF2_REGION_ROLE_COLL_OTHER;
  if (name.starts_with("MPI_") &&
      (op.find("send") != std::string::npos || op.find("recv") != std::string::npos ||
       op.starts_with("wait") || op.starts_with("test") || op.find("probe") != std::string::npos))
    return OTF2_REGION_ROLE_POINT2POINT;
  return OTF2_REGION_ROLE_FUNCTION;
}

OTF2_Paradigm paradigm_of(const std::string& name) {
  if (name.starts_with("MPI_")) return OTF2_PARADIGM_MPI;
  if (name.starts_with("shmem") || name.starts_with("vcx_flag")) return OTF2_PARADIGM_SHMEM;
  return OTF2_PARADIGM_USER;
}

class Otf2Writer {
 public:
  Otf2Writer(const TraceSet& trace, const std::string& out, const std::string& maps_dir)
      : trace_(trace), maps_dir_(maps_dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::exists(out, ec) && !fs::is_empty(out, ec))
      throw TraceError(out + " exists and is not empty; name a new directory for the archive");
    archive_ = OTF2_Archive_Open(out.c_str(), "traces", OTF2_FILEMODE_WRITE, 1024 * 1024,
                                 4 * 1024 * 1024, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!archive_) throw TraceError("OTF2: cannot create an archive in " + out);
    summary_.anchor = out + "/traces.otf2";
    check(OTF2_Archive_SetFlushCallbacks(archive_, &kFlushCallbacks, nullptr), "flush callbacks");
    check(OTF2_Archive_SetSerialCollectiveCallbacks(archive_), "collective callbacks");
    check(OTF2_Archive_SetCreator(archive_, "vcx-trace otf2"), "creator");
    attributes_ = OTF2_AttributeList_New();
  }
  ~Otf2Writer() {
    if (attributes_) OTF2_AttributeList_Delete(attributes_);
    if (archive_) OTF2_Archive_Close(archive_);
  }

  Otf2Summary run() {
    plan();
    check(OTF2_Archive_OpenEvtFiles(archive_), "opening event files");
    for (const RankTrace& r : trace_.ranks) write_events(r);
    check(OTF2_Archive_CloseEvtFiles(archive_), "closing event files");
    write_definitions();
    check(OTF2_Archive_Close(archive_), "closing the archive");
    archive_ = nullptr;
    return summary_;
  }

 private:
  // Attributes: seq, site, message position, then clock entry k at 3 + k.
  static constexpr OTF2_AttributeRef kSeq = 0, kSite = 1, kPosition = 2, kClock0 = 3;

  OTF2_StringRef string(const std::string& s) {
    auto [it, added] = strings_.try_emplace(s, static_cast<OTF2_StringRef>(strings_.size()));
    return it->second;
  }

  // Regions, communicators and windows the events need, and the time span.
  void plan() {
    first_time_ = UINT64_MAX;
    for (const RankTrace& r : trace_.ranks)
      for (const Record& c : r.calls) {
        // Collectives as their initiations: every member initiates each
        // one once, in the same order (its completion is a wait).
        const bool collective = c.group.value != 0 && trace_.groups.count(c.group.value) &&
                                !completes_requests(c.call);
        auto [it, added] = regions_.try_emplace(
            c.call, Region{static_cast<OTF2_RegionRef>(regions_.size()), collective});
        it->second.collective = it->second.collective || collective;
        if (collective) comm_of(c.group.value);
        if (collective && c.call.starts_with("MPI_Win_")) window_of(c.group.value);
        for (const MessageEnd& m : c.messages)
          if (trace_.groups.count(m.queue.a) && m.queue.b <= UINT32_MAX) comm_of(m.queue.a);
        if (c.enter_ns) first_time_ = std::min(first_time_, c.enter_ns);
        last_time_ = std::max(last_time_, std::max(c.enter_ns, c.leave_ns));
      }
    if (first_time_ == UINT64_MAX) first_time_ = 0;
  }

  std::uint32_t comm_of(std::uint64_t group) {
    auto [it, added] = comms_.try_emplace(group, static_cast<std::uint32_t>(comms_.size()));
    if (added) {
      // World rank -> rank in the communicator.
      auto& local = local_rank_[group];
      const auto& members = trace_.groups.at(group);
      for (std::uint32_t i = 0; i < members.size(); ++i) local.try_emplace(members[i].value, i);
    }
    return it->second;
  }
  std::uint32_t window_of(std::uint64_t group) {
    auto [it, added] = windows_.try_emplace(group, static_cast<std::uint32_t>(windows_.size()));
    return it->second;
  }

  std::uint64_t clamp(std::uint64_t t) {
    // Event times of a location must not decrease.
    last_written_ = std::max(last_written_, t);
    return last_written_;
  }

  void write_events(const RankTrace& r) {
    OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(archive_, r.rank.value);
    if (!w) throw TraceError("OTF2: no event writer for rank " + std::to_string(r.rank.value));
    SiteNames sites(maps_dir_, r.rank);
    last_written_ = 0;
    std::uint64_t events = 0;
    for (const Record& c : r.calls) {
      const Region& region = regions_.at(c.call);
      const std::uint64_t enter = clamp(c.enter_ns ? c.enter_ns : first_time_);
      check(OTF2_AttributeList_AddUint64(attributes_, kSeq, c.seq), "attribute");
      if (c.call_site)
        check(OTF2_AttributeList_AddStringRef(attributes_, kSite, string(sites.name(c.call_site))),
              "attribute");
      check(OTF2_EvtWriter_Enter(w, attributes_, enter, region.ref), "Enter");
      ++events;
      const bool collective =
          c.group.value != 0 && comms_.count(c.group.value) && !completes_requests(c.call);
      const bool window = collective && windows_.count(c.group.value);
      if (window) {
        check(OTF2_EvtWriter_RmaCollectiveBegin(w, nullptr, enter), "RmaCollectiveBegin");
        ++events;
      } else if (collective) {
        check(OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, enter), "MpiCollectiveBegin");
        ++events;
      }
      for (const MessageEnd& m : c.messages)
        if (m.sent) events += message(w, r.rank, m, enter);
      const std::uint64_t leave = clamp(std::max(c.leave_ns, enter));
      for (const MessageEnd& m : c.messages)
        if (!m.sent) events += message(w, r.rank, m, leave);
      if (window) {
        check(OTF2_EvtWriter_RmaCollectiveEnd(w, nullptr, leave, OTF2_COLLECTIVE_OP_BARRIER,
                                              OTF2_RMA_SYNC_LEVEL_PROCESS |
                                                  OTF2_RMA_SYNC_LEVEL_MEMORY,
                                              windows_.at(c.group.value), OTF2_UNDEFINED_UINT32,
                                              0, 0),
              "RmaCollectiveEnd");
        ++events;
      } else if (collective) {
        const OTF2_CollectiveOp op =
            collective_op(operation_of(c.call)).value_or(OTF2_COLLECTIVE_OP_CREATE_HANDLE);
        check(OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, leave, op,
                                              comms_.at(c.group.value), OTF2_UNDEFINED_UINT32, 0,
                                              0),
              "MpiCollectiveEnd");
        ++events;
      }
      for (std::size_t k = 0; k < c.clock.size(); ++k)
        if (c.clock[k] != 0)
          check(OTF2_AttributeList_AddUint64(attributes_, static_cast<OTF2_AttributeRef>(kClock0 + k),
                                             c.clock[k]),
                "attribute");
      check(OTF2_EvtWriter_Leave(w, attributes_, leave, region.ref), "Leave");
      ++events;
    }
    events_[r.rank.value] = events;
    summary_.events += events;
    check(OTF2_Archive_CloseEvtWriter(archive_, w), "closing an event writer");
  }

  // MpiSend/MpiRecv of one message, if its queue is a communicator.
  std::uint64_t message(OTF2_EvtWriter* w, Rank self, const MessageEnd& m, std::uint64_t t) {
    (void)self;
    // Application messages name a communicator and carry a tag; the
    // synchronisation of windows (post, start, complete, wait) and user
    // annotations travel on queues of their own.
    const auto local = local_rank_.find(m.queue.a);
    if (local == local_rank_.end() || !local->second.count(m.peer.value) ||
        m.queue.b > UINT32_MAX) {
      ++summary_.messages_left_out;
      return 0;
    }
    const auto peer = local->second.find(m.peer.value);
    check(OTF2_AttributeList_AddUint64(attributes_, kPosition, m.position), "attribute");
    const OTF2_CommRef comm = comms_.at(m.queue.a);
    const auto tag = static_cast<std::uint32_t>(m.queue.b);
    if (m.sent)
      check(OTF2_EvtWriter_MpiSend(w, attributes_, t, peer->second, comm, tag, m.bytes),
            "MpiSend");
    else
      check(OTF2_EvtWriter_MpiRecv(w, attributes_, t, peer->second, comm, tag, m.bytes),
            "MpiRecv");
    ++summary_.messages;
    return 1;
  }

  void write_definitions() {
    // Empty local definitions: every location's ids are the global ones.
    check(OTF2_Archive_OpenDefFiles(archive_), "opening definition files");
    for (const RankTrace& r : trace_.ranks) {
      OTF2_DefWriter* d = OTF2_Archive_GetDefWriter(archive_, r.rank.value);
      if (!d) throw TraceError("OTF2: no definition writer");
      check(OTF2_Archive_CloseDefWriter(archive_, d), "closing a definition writer");
    }
    check(OTF2_Archive_CloseDefFiles(archive_), "closing definition files");

    OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(archive_);
    if (!g) throw TraceError("OTF2: no global definition writer");
    // Every string first: OTF2 wants a string defined before it is used.
    const OTF2_StringRef empty = string("");
    const OTF2_StringRef node = string("vcx run");
    const OTF2_StringRef node_class = string("node");
    std::vector<OTF2_StringRef> rank_names(trace_.world_size);
    for (std::uint32_t r = 0; r < trace_.world_size; ++r)
      rank_names[r] = string("rank " + std::to_string(r));
    for (auto& [name, region] : regions_) region.name = string(name);
    std::map<std::uint64_t, OTF2_StringRef> comm_names;
    for (const auto& [group, ref] : comms_) {
      char b[40];
      std::snprintf(b, sizeof b, "group 0x%llx", static_cast<unsigned long long>(group));
      comm_names[group] = string(b);
    }
    const OTF2_StringRef world_name = string("all ranks");
    const OTF2_StringRef seq = string("vcx::seq"), site = string("vcx::site"),
                         position = string("vcx::message_position");
    const OTF2_StringRef seq_d = string("the call's number among its rank's clocked calls");
    const OTF2_StringRef site_d = string("the program's source line of the call");
    const OTF2_StringRef position_d =
        string("the message's position on its queue: a send and the receive with equal "
               "ranks, communicator, tag and position are one message");
    const OTF2_StringRef clock_d = string("entry of the call's vector clock (0 if absent)");
    std::vector<OTF2_StringRef> clock_names(trace_.world_size);
    for (std::uint32_t k = 0; k < trace_.world_size; ++k)
      clock_names[k] = string("vcx::clock[" + std::to_string(k) + "]");
    std::vector<std::pair<OTF2_StringRef, std::string>> ordered;
    for (const auto& [s, ref] : strings_) ordered.emplace_back(ref, s);
    std::sort(ordered.begin(), ordered.end());
    for (const auto& [ref, s] : ordered)
      check(OTF2_GlobalDefWriter_WriteString(g, ref, s.c_str()), "String");

    const std::uint64_t length = last_time_ > first_time_ ? last_time_ - first_time_ : 0;
    check(OTF2_GlobalDefWriter_WriteClockProperties(g, 1'000'000'000, first_time_, length + 1,
                                                    OTF2_UNDEFINED_TIMESTAMP),
          "ClockProperties");
    check(OTF2_GlobalDefWriter_WriteAttribute(g, kSeq, seq, seq_d, OTF2_TYPE_UINT64), "Attribute");
    check(OTF2_GlobalDefWriter_WriteAttribute(g, kSite, site, site_d, OTF2_TYPE_STRING),
          "Attribute");
    check(OTF2_GlobalDefWriter_WriteAttribute(g, kPosition, position, position_d, OTF2_TYPE_UINT64),
          "Attribute");
    for (std::uint32_t k = 0; k < trace_.world_size; ++k)
      check(OTF2_GlobalDefWriter_WriteAttribute(g, static_cast<OTF2_AttributeRef>(kClock0 + k),
                                                clock_names[k], clock_d, OTF2_TYPE_UINT64),
            "Attribute");
    check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, node, node_class,
                                                   OTF2_UNDEFINED_SYSTEM_TREE_NODE),
          "SystemTreeNode");
    for (std::uint32_t r = 0; r < trace_.world_size; ++r)
      check(OTF2_GlobalDefWriter_WriteLocationGroup(g, r, rank_names[r],
                                                    OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                                    OTF2_UNDEFINED_LOCATION_GROUP),
            "LocationGroup");
    // Every rank is a location, also one whose file is missing (no events):
    // the groups name them all.
    for (std::uint32_t r = 0; r < trace_.world_size; ++r)
      check(OTF2_GlobalDefWriter_WriteLocation(g, r, rank_names[r], OTF2_LOCATION_TYPE_CPU_THREAD,
                                               events_[r], r),
            "Location");
    std::vector<std::pair<const std::string*, const Region*>> regions(regions_.size());
    for (const auto& [name, region] : regions_) regions[region.ref] = {&name, &region};
    for (const auto& [name, region] : regions)
      check(OTF2_GlobalDefWriter_WriteRegion(g, region->ref, region->name, region->name, empty,
                                             region_role(*name, region->collective),
                                             paradigm_of(*name), OTF2_REGION_FLAG_NONE, empty, 0,
                                             0),
            "Region");
    // Group 0 lists the locations of the MPI paradigm (every rank, by
    // rank); a communicator's group lists its members as ranks in it.
    std::vector<std::uint64_t> everyone(trace_.world_size);
    for (std::uint32_t r = 0; r < trace_.world_size; ++r) everyone[r] = r;
    check(OTF2_GlobalDefWriter_WriteGroup(g, 0, world_name, OTF2_GROUP_TYPE_COMM_LOCATIONS,
                                          OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                          trace_.world_size, everyone.data()),
          "Group");
    for (const auto& [ref, group] : by_ref(comms_)) {
      const auto& members = trace_.groups.at(group);
      std::vector<std::uint64_t> m(members.size());
      for (std::size_t i = 0; i < members.size(); ++i) m[i] = members[i].value;
      check(OTF2_GlobalDefWriter_WriteGroup(g, 1 + ref, comm_names[group],
                                            OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                            OTF2_GROUP_FLAG_NONE,
                                            static_cast<std::uint32_t>(m.size()), m.data()),
            "Group");
      check(OTF2_GlobalDefWriter_WriteComm(g, ref, comm_names[group], 1 + ref, OTF2_UNDEFINED_COMM,
                                           OTF2_COMM_FLAG_NONE),
            "Comm");
    }
    for (const auto& [ref, group] : by_ref(windows_))
      check(OTF2_GlobalDefWriter_WriteRmaWin(g, ref, comm_names[group], comms_.at(group),
                                             OTF2_RMA_WIN_FLAG_NONE),
            "RmaWin");
    check(OTF2_Archive_CloseGlobalDefWriter(archive_, g), "closing the global definitions");
  }

  // OTF2 wants definitions of a kind in the order of their ids.
  static std::vector<std::pair<std::uint32_t, std::uint64_t>> by_ref(
      const std::map<std::uint64_t, std::uint32_t>& ids) {
    std::vector<std::pair<std::uint32_t, std::uint64_t>> v;
    for (const auto& [id, ref] : ids) v.emplace_back(ref, id);
    std::sort(v.begin(), v.end());
    return v;
  }

  struct Region {
    OTF2_RegionRef ref;
    bool collective;
    OTF2_StringRef name = 0;
  };

  const TraceSet& trace_;
  std::string maps_dir_;
  OTF2_Archive* archive_ = nullptr;
  OTF2_AttributeList* attributes_ = nullptr;
  Otf2Summary summary_;
  std::map<std::string, OTF2_StringRef> strings_;
  std::map<std::string, Region> regions_;
  std::map<std::uint64_t, std::uint32_t> comms_;    // group id -> comm ref
  std::map<std::uint64_t, std::uint32_t> windows_;  // group id -> window ref
  std::map<std::uint64_t, std::map<std::uint32_t, std::uint32_t>> local_rank_;
  std::map<std::uint32_t, std::uint64_t> events_;   // per location
  std::uint64_t first_time_ = 0, last_time_ = 0, last_written_ = 0;
};

}  // namespace

Otf2Summary write_otf2(const TraceSet& trace, const std::string& out,
                       const std::string& maps_dir) {
  Otf2Writer w(trace, out, maps_dir);
  return w.run();
}

}  // namespace vcx::trace
