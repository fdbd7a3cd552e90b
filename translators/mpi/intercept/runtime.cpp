#include "runtime.h"

#include "ending.h"
#include "vcx/channel/futex.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace vcx::mpi_intercept {
namespace {

std::atomic_flag g_lock = ATOMIC_FLAG_INIT;

void wake_tool(void* ctx) {
  const int fd = *static_cast<int*>(ctx);
  const char byte = 'w';
  // Non-blocking: if the socket buffer is full the tool is awake anyway.
  (void)::send(fd, &byte, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
}

bool tool_alive(void* ctx) {
  const int fd = *static_cast<int*>(ctx);
  pollfd p{fd, POLLIN | POLLRDHUP, 0};
  if (::poll(&p, 1, 0) <= 0) return true;
  // The tool never writes after the attach, so readable means end of file.
  return (p.revents & (POLLHUP | POLLRDHUP | POLLERR | POLLIN)) == 0;
}

// A communicator of the interceptor's own, with one receive posted that
// nothing ever matches: testing it runs MPI's whole progress engine while
// the application waits for its tool, and touches nothing of the
// application's.
MPI_Comm g_progress_comm = MPI_COMM_NULL;
MPI_Request g_progress_request = MPI_REQUEST_NULL;
int g_progress_buffer = 0;

// Threads waiting for their tool at the same time must not use the one
// request concurrently (MPI forbids it); one testing it is enough.
std::atomic_flag g_progress_busy = ATOMIC_FLAG_INIT;

void drive_progress(void*) {
  if (g_progress_request == MPI_REQUEST_NULL) return;
  if (g_progress_busy.test_and_set(std::memory_order_acquire)) return;
  int flag = 0;
  PMPI_Test(&g_progress_request, &flag, MPI_STATUS_IGNORE);
  g_progress_busy.clear(std::memory_order_release);
}

void start_progress() {
  PMPI_Comm_dup(MPI_COMM_SELF, &g_progress_comm);
  PMPI_Irecv(&g_progress_buffer, 1, MPI_INT, 0, 0, g_progress_comm, &g_progress_request);
}

void stop_progress() {
  if (g_progress_request != MPI_REQUEST_NULL) {
    PMPI_Cancel(&g_progress_request);
    PMPI_Wait(&g_progress_request, MPI_STATUS_IGNORE);
  }
  if (g_progress_comm != MPI_COMM_NULL) PMPI_Comm_free(&g_progress_comm);
}

bool continue_on_failure() {
  const char* v = std::getenv("VCX_ON_TOOL_FAILURE");
  return v && std::strcmp(v, "continue") == 0;
}

}  // namespace

Runtime& runtime() {
  static Runtime r;
  return r;
}

std::vector<MPI_Request>& Runtime::saved_requests() {
  thread_local std::vector<MPI_Request> v;
  return v;
}

std::vector<MPI_Status>& Runtime::statuses() {
  thread_local std::vector<MPI_Status> v;
  return v;
}

void Runtime::start(int thread_level) {
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank_);
  int world_size = 0;
  PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
  PMPI_Comm_group(MPI_COMM_WORLD, &world_group_);

  const char* dir = std::getenv("VCX_SESSION_DIR");
  if (!dir || !*dir) {
    if (world_rank_ == 0)
      std::fprintf(stderr,
                   "vcx: the vcx interceptor is loaded but the program was not started by "
                   "vcx-run; running without analysis\n");
    return;
  }
  watch_ending(dir, world_rank_);
  channel::AttachHello hello{};
  hello.magic = channel::kAttachMagic;
  hello.version = channel::kAttachVersion;
  hello.world_rank = static_cast<std::uint32_t>(world_rank_);
  hello.world_size = static_cast<std::uint32_t>(world_size);
  hello.pid = static_cast<std::int32_t>(::getpid());
  hello.model = static_cast<std::uint16_t>(Model::Mpi);
  if (const char* token = std::getenv("VCX_SESSION_TOKEN"))
    std::snprintf(hello.token, sizeof hello.token, "%s", token);

  int timeout_ms = 30'000;
  if (const char* t = std::getenv("VCX_ATTACH_TIMEOUT_MS")) timeout_ms = std::atoi(t);
  // The tool decides the channel (shared memory or TCP) by what it publishes.
  std::string error;
  if (!channel::attach_in_session(dir, hello, timeout_ms, &attachment_, &error)) {
    std::fprintf(stderr, "vcx: rank %d: cannot reach its tool process: %s\n", world_rank_,
                 error.c_str());
    if (continue_on_failure()) {
      std::fprintf(stderr, "vcx: rank %d: running without analysis (VCX_ON_TOOL_FAILURE=continue)\n",
                   world_rank_);
      return;
    }
    record_ending("tool-failed", 70);
    PMPI_Abort(MPI_COMM_WORLD, 70);
    return;
  }
  no_stall_ = (attachment_.mode_flags & channel::kModeNoStall) != 0;
  serialise_ = thread_level == MPI_THREAD_MULTIPLE;
  channel::ProducerHooks hooks;
  hooks.ctx = &attachment_.socket_fd;
  hooks.wake_consumer = &wake_tool;
  hooks.tool_alive = &tool_alive;
  // Other ranks' operations (passive-target RMA, rendezvous transfers) may
  // need this rank's MPI to progress before the tool can answer; without
  // vcx the rank would be waiting inside MPI, progressing it.
  start_progress();
  hooks.progress = &drive_progress;
  channel::WaitPolicy policy;
  if (const char* s = std::getenv("VCX_SPIN_NS")) policy.spin_ns = std::strtoull(s, nullptr, 10);
  producer_ = channel::Producer(attachment_, hooks, policy);
  active_ = true;

  mpi::InitEvent ev{};
  ev.comm_world = comm_handle(MPI_COMM_WORLD);
  ev.comm_self = comm_handle(MPI_COMM_SELF);
  ev.world_rank = world_rank_;
  ev.world_size = world_size;
  ev.thread_level = thread_level;
  push(mpi::Call::Init, ev, false);
}

void Runtime::stop() {
  ending_finalized();
  if (!active_) return;
  const std::uint64_t seq = push(mpi::Call::Finalize, std::uint64_t{0}, true);
  wait(seq);
  lock();
  if (void* p = producer_.begin(Model::Control, static_cast<std::uint16_t>(ControlEvent::Detach),
                                0, sizeof(DetachEvent))) {
    *static_cast<DetachEvent*>(p) = DetachEvent{producer_.stall_ns(), producer_.backpressure_ns()};
    producer_.commit();
  }
  unlock();
  active_ = false;
  stop_progress();
  // The socket stays open until the process exits: its end tells the tool
  // that this rank is gone, and the tool still reads the ring meanwhile.
}

void Runtime::lock() {
  if (serialise_)
    while (g_lock.test_and_set(std::memory_order_acquire)) channel::cpu_relax();
}

void Runtime::unlock() {
  if (serialise_) g_lock.clear(std::memory_order_release);
}

void* Runtime::begin(mpi::Call call, std::size_t payload, bool needs_reply) {
  if (!active_) return nullptr;
  lock();
  reply_wanted_ = needs_reply && !no_stall_;
  const std::uint32_t flags = reply_wanted_ ? std::uint32_t{kEventNeedsReply} : 0u;
  void* p = producer_.begin(Model::Mpi, static_cast<std::uint16_t>(call), flags, payload);
  if (!p) {
    unlock();
    if (payload > producer_.max_payload()) {
      std::fprintf(stderr,
                   "vcx: rank %d: an MPI_%s event needs %zu bytes, more than the channel "
                   "carries; restart with a larger ring (vcx-run --ring-bytes)\n",
                   world_rank_, mpi::kCallNames[static_cast<int>(call)] + 4, payload);
      PMPI_Abort(MPI_COMM_WORLD, 70);
    }
    tool_failed("while the application was sending to it");
    return nullptr;
  }
  return p;
}

void* Runtime::begin_always_answered(mpi::Call call, std::size_t payload) {
  if (!active_) return nullptr;
  lock();
  reply_wanted_ = true;
  void* p = producer_.begin(Model::Mpi, static_cast<std::uint16_t>(call), kEventAlwaysReply,
                            payload);
  if (!p) {
    unlock();
    tool_failed("while the application was sending to it");
  }
  return p;
}

void Runtime::wait_always(std::uint64_t ticket) {
  if (!active_ || ticket == 0) return;
  if (producer_.wait_reply(ticket) != channel::WaitResult::Ok) tool_failed("while waiting for it");
}

std::uint64_t Runtime::commit() {
  const std::uint64_t seq = producer_.commit();
  const bool wanted = reply_wanted_;
  unlock();
  return wanted ? seq : 0;
}

void Runtime::wait(std::uint64_t ticket) {
  if (!active_ || no_stall_ || ticket == 0) return;
  if (producer_.wait_reply(ticket) != channel::WaitResult::Ok) tool_failed("while waiting for it");
}

void Runtime::tool_failed(const char* what) {
  if (!active_) return;
  active_ = false;
  // The tools stop when an application rank ends without MPI_Finalize; the
  // job is ending then (mpiexec stops the other ranks when one fails), and
  // until it does this rank runs on as it would without vcx.
  if (another_rank_ended(std::getenv("VCX_SESSION_DIR"))) {
    std::fprintf(stderr,
                 "vcx: rank %d: analysis stopped because another application rank ended; "
                 "running on without it\n",
                 world_rank_);
    return;
  }
  // One write per line: the ranks share the terminal.
  if (continue_on_failure()) {
    std::fprintf(stderr,
                 "vcx: rank %d: the tool process stopped %s; running on without analysis "
                 "(--on-tool-failure=continue)\n",
                 world_rank_, what);
    return;
  }
  std::fprintf(stderr,
               "vcx: rank %d: the tool process stopped %s; aborting the job "
               "(vcx-run --on-tool-failure=continue lets it run on unanalysed)\n",
               world_rank_, what);
  // mpiexec may take the job down before it forwards the line above; vcx-run
  // says it again from this record.
  record_ending("tool-failed", 70);
  PMPI_Abort(MPI_COMM_WORLD, 70);
}

// MPICH's handles are ints: the generation goes above them.
static_assert(sizeof(MPI_Request) <= sizeof(std::uint32_t), "request ids pack handle and generation");

std::uint64_t Runtime::new_request_id(MPI_Request r) {
  if (!serialise_) return request_handle(r);
  const auto h = static_cast<std::uint32_t>(r);
  lock();
  const std::uint32_t generation = ++generations_[h];
  unlock();
  return std::uint64_t{generation} << 32 | h;
}

std::uint64_t Runtime::request_id(MPI_Request r) {
  if (!serialise_) return request_handle(r);
  const auto h = static_cast<std::uint32_t>(r);
  lock();
  const auto it = generations_.find(h);
  const std::uint32_t generation = it == generations_.end() ? 0 : it->second;
  unlock();
  return std::uint64_t{generation} << 32 | h;
}

void Runtime::remember(MPI_Request r, RequestKind k, bool persistent) {
  if ((k == RequestKind::Other && !persistent) || !active_ || r == MPI_REQUEST_NULL) return;
  const std::uint64_t id = request_id(r);
  lock();
  insert(id, k, persistent, !persistent);
  unlock();
}

void Runtime::insert(std::uint64_t key, RequestKind k, bool persistent, bool active) {
  if ((request_count_ + 1) * 2 > requests_.size()) {
    std::vector<Entry> old(requests_.size() * 2);
    old.swap(requests_);
    request_count_ = 0;
    for (const Entry& e : old)
      if (e.used) insert(e.key, e.kind, e.persistent, e.active);
  }
  std::size_t i = mix64(key) & (requests_.size() - 1);
  while (requests_[i].used && requests_[i].key != key) i = (i + 1) & (requests_.size() - 1);
  if (!requests_[i].used) ++request_count_;
  requests_[i] = Entry{key, k, persistent, active, true};
}

Runtime::Entry* Runtime::find(std::uint64_t key) {
  const std::size_t mask = requests_.size() - 1;
  for (std::size_t i = mix64(key) & mask; requests_[i].used; i = (i + 1) & mask)
    if (requests_[i].key == key) return &requests_[i];
  return nullptr;
}

void Runtime::activate(MPI_Request r) {
  const std::uint64_t id = request_id(r);
  lock();
  if (Entry* e = find(id)) e->active = true;
  unlock();
}

std::optional<RequestKind> Runtime::complete(std::uint64_t id) {
  lock();
  std::optional<RequestKind> result = RequestKind::Other;
  if (Entry* e = find(id)) {
    result = e->kind;
    if (e->persistent) {
      if (!e->active) result.reset();
      e->active = false;
    } else {
      erase(id);
    }
  }
  unlock();
  return result;
}

void Runtime::forget(std::uint64_t id) {
  lock();
  erase(id);
  unlock();
}

void Runtime::erase(std::uint64_t key) {
  const std::size_t mask = requests_.size() - 1;
  std::size_t i = mix64(key) & mask;
  while (requests_[i].used && requests_[i].key != key) i = (i + 1) & mask;
  if (!requests_[i].used) return;
  // Backward-shift deletion keeps probe chains intact without tombstones.
  std::size_t hole = i;
  for (std::size_t j = (i + 1) & mask; requests_[j].used; j = (j + 1) & mask) {
    const std::size_t home = mix64(requests_[j].key) & mask;
    const bool movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
    if (movable) {
      requests_[hole] = requests_[j];
      hole = j;
    }
  }
  requests_[hole].used = false;
  --request_count_;
}

}  // namespace vcx::mpi_intercept
