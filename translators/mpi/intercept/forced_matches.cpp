#include "forced_matches.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "../common/mpi_events.h"
#include "runtime.h"

namespace vcx::mpi_intercept {
namespace {

std::mutex g_applied_mutex;

[[noreturn]] void refuse(const std::string& why) {
  std::fprintf(stderr, "vcx: --force-match: %s\n", why.c_str());
  std::fflush(stderr);
  PMPI_Abort(MPI_COMM_WORLD, 70);
  std::_Exit(70);
}

}  // namespace

ForcedMatches& forced_matches() {
  static ForcedMatches f;
  return f;
}

void ForcedMatches::load(int world_rank, MPI_Group world_group, int thread_level) {
  const char* spec = std::getenv("VCX_FORCE_MATCH");
  if (!spec || !*spec) return;
  // "@FILE": a list too long for the environment, in a file vcx-run wrote.
  std::string listed;
  if (*spec == '@') {
    std::FILE* f = std::fopen(spec + 1, "r");
    if (!f) refuse(std::string("cannot read the forced matches in ") + (spec + 1));
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) listed.append(buf, n);
    std::fclose(f);
    spec = listed.c_str();
  }
  if (thread_level == MPI_THREAD_MULTIPLE)
    refuse("replaying with forced matches needs a program whose threads do not call MPI at "
           "once (MPI_THREAD_SERIALIZED at most): its wildcard receives are counted in program "
           "order");
  rank_ = world_rank;
  world_group_ = world_group;
  // "R:I=S" items, separated by commas or white space (vcx-run checked them).
  const char* p = spec;
  while (*p) {
    while (*p == ',' || *p == ' ' || *p == '\n' || *p == '\t') ++p;
    if (!*p) break;
    char* end = nullptr;
    const long r = std::strtol(p, &end, 10);
    if (end == p || *end != ':') refuse(std::string("malformed VCX_FORCE_MATCH: ") + spec);
    p = end + 1;
    const unsigned long long i = std::strtoull(p, &end, 10);
    if (end == p || *end != '=') refuse(std::string("malformed VCX_FORCE_MATCH: ") + spec);
    p = end + 1;
    const long src = std::strtol(p, &end, 10);
    if (end == p) refuse(std::string("malformed VCX_FORCE_MATCH: ") + spec);
    p = end;
    if (r == world_rank) forced_[i] = static_cast<int>(src);
  }
  active_ = !forced_.empty();
  if (active_) std::thread([this] { watch(); }).detach();
}

int ForcedMatches::comm_rank_of(MPI_Comm comm, int world_rank) const {
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  MPI_Group group;
  if (inter) {
    PMPI_Comm_remote_group(comm, &group);
  } else {
    PMPI_Comm_group(comm, &group);
  }
  int out = MPI_UNDEFINED;
  PMPI_Group_translate_ranks(world_group_, 1, &world_rank, group, &out);
  PMPI_Group_free(&group);
  if (out == MPI_UNDEFINED)
    refuse("rank " + std::to_string(rank_) + "'s wildcard receive " + std::to_string(postings_) +
           " is to match rank " + std::to_string(world_rank) +
           ", which is not in the communicator it receives on: this --force-match line does "
           "not belong to this program or run");
  return out;
}

// Noted when it is posted: a forced receive that never matches never returns.
void ForcedMatches::note_applied(int source) {
  if (applied_index_ == postings_) return;
  applied_index_ = postings_;
  std::lock_guard<std::mutex> lock(g_applied_mutex);
  applied_ += (applied_.empty() ? "" : ", ") + std::to_string(rank_) + ":" +
              std::to_string(postings_) + "=" + std::to_string(source);
}

int ForcedMatches::source_for(MPI_Comm comm, int source) {
  if (!active_ || source != MPI_ANY_SOURCE) return source;
  auto it = forced_.find(postings_);
  if (it == forced_.end()) return source;
  // The forced world rank, as a rank of the group the receive takes
  // messages from (the remote group of an intercommunicator).
  const int out = comm_rank_of(comm, it->second);
  note_applied(it->second);
  if (!forcing_) {
    forcing_ = true;
    outstanding_.fetch_add(1, std::memory_order_relaxed);
  }
  return out;
}

std::int32_t ForcedMatches::event_source(int source, int used) {
  if (source == MPI_ANY_SOURCE && used != MPI_ANY_SOURCE) return mpi::forced_source(used);
  return event_rank(source);
}

void ForcedMatches::posted(int source, const MPI_Request* request) {
  if (!active_ || source != MPI_ANY_SOURCE) return;
  ++postings_;
  if (!forcing_) return;
  forcing_ = false;
  if (request && *request != MPI_REQUEST_NULL) {
    forced_requests_.insert(*request);  // watched until it completes
  } else {
    outstanding_.fetch_sub(1, std::memory_order_relaxed);  // the blocking call returned
  }
}

void ForcedMatches::not_posted(int source) {
  if (!active_ || source != MPI_ANY_SOURCE || !forcing_) return;
  forcing_ = false;
  outstanding_.fetch_sub(1, std::memory_order_relaxed);
}

std::optional<int> ForcedMatches::starting(MPI_Request r) {
  if (!active_) return std::nullopt;
  auto p = persistent_.find(r);
  if (p == persistent_.end()) return std::nullopt;
  auto f = forced_.find(postings_);
  if (f == forced_.end()) {
    ++postings_;
    return std::nullopt;
  }
  const int source = comm_rank_of(p->second.comm, f->second);
  note_applied(f->second);
  ++postings_;
  // Watched until the stand-in completes.
  forced_requests_.insert(r);
  outstanding_.fetch_add(1, std::memory_order_relaxed);
  return source;
}

void ForcedMatches::start_forced(MPI_Request r, int source) {
  const PersistentReceive& p = persistent_.at(r);
  MPI_Request stand_in = MPI_REQUEST_NULL;
#if MPI_VERSION >= 4
  const int rc =
      p.large ? PMPI_Irecv_c(p.buf, p.count, p.type, source, p.tag, p.comm, &stand_in)
              : PMPI_Irecv(p.buf, static_cast<int>(p.count), p.type, source, p.tag, p.comm,
                           &stand_in);
#else
  const int rc = PMPI_Irecv(p.buf, static_cast<int>(p.count), p.type, source, p.tag, p.comm,
                            &stand_in);
#endif
  if (rc != MPI_SUCCESS)
    refuse("rank " + std::to_string(rank_) + " could not post the receive that replays its "
           "persistent wildcard receive with a forced source (MPI_Irecv failed)");
  shadows_[r] = stand_in;
}

void ForcedMatches::persistent_wildcard(MPI_Request r, const PersistentReceive& p) {
  if (!active_) return;
  PersistentReceive kept = p;
  MPI_Datatype dup = MPI_DATATYPE_NULL;
  if (PMPI_Type_dup(p.type, &dup) == MPI_SUCCESS) {
    kept.type = dup;
    kept.own_type = true;
  }
  persistent_[r] = kept;
}

void ForcedMatches::persistent_freed(MPI_Request r) {
  if (auto p = persistent_.find(r); p != persistent_.end()) {
    if (p->second.own_type) PMPI_Type_free(&p->second.type);
    persistent_.erase(p);
  }
  if (auto s = shadows_.find(r); s != shadows_.end()) {
    PMPI_Request_free(&s->second);  // an active receive may be freed; it completes unseen
    shadows_.erase(s);
  }
}

MPI_Request* ForcedMatches::substitute_slow(MPI_Request* user, int n) {
  thread_local std::vector<MPI_Request> used;
  used.assign(user, user + n);
  bool any = false;
  for (MPI_Request& r : used) {
    if (r == MPI_REQUEST_NULL) continue;
    if (auto s = shadows_.find(r); s != shadows_.end()) {
      r = s->second;
      any = true;
    }
  }
  return any ? used.data() : user;
}

void ForcedMatches::restore_slow(MPI_Request* user, const MPI_Request* used, int n) {
  for (int i = 0; i < n; ++i) {
    auto s = user[i] == MPI_REQUEST_NULL ? shadows_.end() : shadows_.find(user[i]);
    if (s == shadows_.end()) {
      user[i] = used[i];
    } else if (used[i] == MPI_REQUEST_NULL) {
      shadows_.erase(s);  // the stand-in completed; the program's request is inactive
    } else {
      s->second = used[i];
    }
  }
}

void ForcedMatches::watch() {
  int timeout = 60;
  if (const char* t = std::getenv("VCX_FORCE_MATCH_TIMEOUT"); t && std::atoi(t) > 0)
    timeout = std::atoi(t);
  std::uint64_t last = calls_.load(std::memory_order_relaxed);
  int still = 0;
  for (;;) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const std::uint64_t now = calls_.load(std::memory_order_relaxed);
    if (now != last || outstanding_.load(std::memory_order_relaxed) == 0) {
      last = now;
      still = 0;
      continue;
    }
    if (++still < timeout) continue;
    std::string applied;
    {
      std::lock_guard<std::mutex> lock(g_applied_mutex);
      applied = applied_;
    }
    std::fprintf(stderr,
                 "vcx: rank %d made no MPI call for %d s while a wildcard receive the replay "
                 "forced was unmatched (forced so far: %s): a forced match that cannot happen "
                 "in this run leaves its receive waiting for ever. Check the --force-match line (the rank, the "
                 "receive's index, the source), or give the program longer with "
                 "VCX_FORCE_MATCH_TIMEOUT=SECONDS.\n",
                 rank_, timeout, applied.c_str());
    std::fflush(stderr);
    std::_Exit(70);
  }
}

}  // namespace vcx::mpi_intercept
