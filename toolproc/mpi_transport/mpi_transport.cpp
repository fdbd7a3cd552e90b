#include "mpi_transport/mpi_transport.h"

#include <mpi.h>
#include <time.h>

#include <chrono>
#include <climits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

namespace vcx {
namespace {

using Buffer = std::vector<std::uint8_t>;

// Arrivals taken per poll() before the loop gets control back.
constexpr int kMaxArrivalsPerPoll = 256;
// How long close() waits for the other tools before leaving without them.
constexpr auto kCloseTimeout = std::chrono::seconds(10);

std::string mpi_error(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<std::size_t>(len));
}

void nap_us(long us) {
  timespec ts{0, us * 1000};
  nanosleep(&ts, nullptr);
}

// A FIFO over a vector that keeps its storage: after warm-up, pushing and
// popping allocate nothing.
template <class T>
class Fifo {
 public:
  bool empty() const { return head_ == items_.size(); }
  std::size_t size() const { return items_.size() - head_; }
  T& front() { return items_[head_]; }
  T& push_back() {
    if (head_ > 64 && head_ * 2 > items_.size()) {
      // A queue that never runs empty: drop the consumed prefix.
      items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
    return items_.emplace_back();
  }
  void pop_front() {
    if (++head_ == items_.size()) {
      items_.clear();
      head_ = 0;
    }
  }
  void clear() {
    items_.clear();
    head_ = 0;
  }

 private:
  std::vector<T> items_;
  std::size_t head_ = 0;
};

struct Arrival {
  MPI_Request request = MPI_REQUEST_NULL;
  int source = 0;
  int tag = 0;
  Buffer bytes;
};

struct Loopback {
  ToolPart channel = ToolPart::Control;
  Buffer bytes;
};

}  // namespace

struct MpiTransport::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  Rank self{};
  std::uint32_t size = 0;
  std::array<Handler, kToolParts> handlers;
  ErrorHandler on_error;
  TransportStats stats;

  // The free list: buffers of completed sends and delivered messages. A
  // buffer keeps its capacity, so once the list has grown to the number of
  // messages in flight at once, messages no longer allocate.
  std::vector<Buffer> free_buffers;
  std::uint64_t buffers_made = 0;

  // Send slots: a request and the buffer it reads, reused once MPI is done.
  std::vector<MPI_Request> send_requests;
  std::vector<Buffer> send_buffers;
  std::vector<int> free_slots;
  std::vector<int> completed;  // scratch for MPI_Testsome
  std::size_t in_flight = 0;

  Fifo<Arrival> arrivals;  // matched, in matching order
  Fifo<Loopback> loopback;
  bool closing = false;
  bool closed = false;
  bool broken = false;  // MPI reported an error: it is not used any more

  Buffer take_buffer(std::size_t bytes) {
    Buffer b;
    if (free_buffers.empty()) {
      ++buffers_made;
    } else {
      b = std::move(free_buffers.back());
      free_buffers.pop_back();
    }
    b.resize(bytes);
    return b;
  }
  void give_back(Buffer&& b) { free_buffers.push_back(std::move(b)); }

  void report(Rank peer, const std::string& what) {
    if (!closing && on_error) on_error(peer, what);
  }

  // After an error MPI's state is unknown: the transport stops using it.
  bool check(int rc, Rank peer, const char* call) {
    if (rc == MPI_SUCCESS) return true;
    const bool first = !broken;
    broken = true;
    if (first) report(peer, std::string(call) + " failed: " + mpi_error(rc));
    return false;
  }

  int take_slot() {
    if (!free_slots.empty()) {
      const int s = free_slots.back();
      free_slots.pop_back();
      return s;
    }
    send_requests.push_back(MPI_REQUEST_NULL);
    send_buffers.emplace_back();
    completed.resize(send_requests.size());
    return static_cast<int>(send_requests.size()) - 1;
  }

  void complete_sends() {
    if (in_flight == 0 || broken) return;
    int done = 0;
    const int rc = MPI_Testsome(static_cast<int>(send_requests.size()), send_requests.data(), &done,
                                completed.data(), MPI_STATUSES_IGNORE);
    if (!check(rc, self, "MPI_Testsome on sends") || done == MPI_UNDEFINED) return;
    for (int i = 0; i < done; ++i) {
      const int s = completed[static_cast<std::size_t>(i)];
      give_back(std::move(send_buffers[static_cast<std::size_t>(s)]));
      free_slots.push_back(s);
      --in_flight;
    }
  }

  // Matches what has arrived, then hands on (or, when dropping, recycles)
  // every message whose data is in, in matching order. Returns the number
  // handed on.
  std::size_t take_arrivals(bool deliver) {
    if (broken) return 0;
    for (int i = 0; i < kMaxArrivalsPerPoll; ++i) {
      int found = 0;
      MPI_Message message = MPI_MESSAGE_NULL;
      MPI_Status status;
      if (!check(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &found, &message, &status), self,
                 "MPI_Improbe"))
        return 0;
      if (!found) break;
      int count = 0;
      MPI_Get_count(&status, MPI_BYTE, &count);
      Arrival& a = arrivals.push_back();
      a.source = status.MPI_SOURCE;
      a.tag = status.MPI_TAG;
      a.bytes = take_buffer(static_cast<std::size_t>(count));
      if (!check(MPI_Imrecv(a.bytes.data(), count, MPI_BYTE, &message, &a.request),
                 Rank{static_cast<std::uint32_t>(a.source)}, "MPI_Imrecv"))
        return 0;
    }
    std::size_t delivered = 0;
    while (!arrivals.empty()) {
      Arrival& a = arrivals.front();
      int done = 0;
      if (!check(MPI_Test(&a.request, &done, MPI_STATUS_IGNORE),
                 Rank{static_cast<std::uint32_t>(a.source)}, "MPI_Test on a receive"))
        return delivered;
      if (!done) break;  // later arrivals wait: delivery keeps matching order
      const Rank src{static_cast<std::uint32_t>(a.source)};
      const int tag = a.tag;
      Buffer bytes = std::move(a.bytes);
      arrivals.pop_front();
      // A handler may send (and so take buffers); nothing here is touched.
      if (deliver && tag >= 0 && static_cast<std::size_t>(tag) < kToolParts) {
        ++stats.messages_received;
        stats.bytes_received += bytes.size();
        if (const Handler& h = handlers[static_cast<std::size_t>(tag)]) h(src, bytes);
        ++delivered;
      }
      give_back(std::move(bytes));
    }
    return delivered;
  }

  std::size_t deliver_loopback() {
    // Only what is queued now: a handler that sends to itself is served on
    // the next poll, as TCP's posted loopback would be.
    std::size_t n = loopback.size();
    const std::size_t delivered = n;
    for (; n > 0; --n) {
      const ToolPart part = loopback.front().channel;
      Buffer bytes = std::move(loopback.front().bytes);
      loopback.pop_front();
      if (const Handler& h = handlers[static_cast<std::size_t>(part)]) h(self, bytes);
      give_back(std::move(bytes));
    }
    return delivered;
  }
};

MpiTransport::MpiTransport() : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  int rc = MPI_Comm_dup(MPI_COMM_WORLD, &m.comm);
  if (rc != MPI_SUCCESS) throw std::runtime_error("mpi transport: MPI_Comm_dup: " + mpi_error(rc));
  // Errors come back as codes and become peer-failure reports instead of
  // aborting from inside MPI.
  MPI_Comm_set_errhandler(m.comm, MPI_ERRORS_RETURN);
  int rank = 0, size = 0;
  MPI_Comm_rank(m.comm, &rank);
  MPI_Comm_size(m.comm, &size);
  m.self = Rank{static_cast<std::uint32_t>(rank)};
  m.size = static_cast<std::uint32_t>(size);
}

MpiTransport::~MpiTransport() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) close();
}

void MpiTransport::set_error_handler(ErrorHandler h) { impl_->on_error = std::move(h); }
void MpiTransport::set_handler(ToolPart part, Handler h) {
  impl_->handlers[static_cast<std::size_t>(part)] = std::move(h);
}
Rank MpiTransport::self() const { return impl_->self; }
std::uint32_t MpiTransport::size() const { return impl_->size; }
const TransportStats& MpiTransport::stats() const { return impl_->stats; }
std::uint64_t MpiTransport::buffers_made() const { return impl_->buffers_made; }
std::size_t MpiTransport::sends_in_flight() const { return impl_->in_flight; }

bool MpiTransport::flushed() const { return impl_->in_flight == 0 && impl_->loopback.empty(); }

void MpiTransport::send(Rank dst, ToolPart part, std::span<const std::uint8_t> payload) {
  Impl& m = *impl_;
  if (m.closing) return;
  ++m.stats.messages_sent;
  m.stats.bytes_sent += payload.size();
  if (dst == m.self) {
    Loopback& l = m.loopback.push_back();
    l.channel = part;
    l.bytes = m.take_buffer(payload.size());
    std::copy(payload.begin(), payload.end(), l.bytes.begin());
    return;
  }
  if (dst.value >= m.size || m.broken) return;
  if (payload.size() > static_cast<std::size_t>(INT_MAX)) {
    m.report(dst, "a message of " + std::to_string(payload.size()) + " bytes is too large for MPI");
    return;
  }
  const int slot = m.take_slot();
  Buffer& b = m.send_buffers[static_cast<std::size_t>(slot)];
  b = m.take_buffer(payload.size());
  std::copy(payload.begin(), payload.end(), b.begin());
  const int rc =
      MPI_Isend(b.data(), static_cast<int>(b.size()), MPI_BYTE, static_cast<int>(dst.value),
                static_cast<int>(part), m.comm, &m.send_requests[static_cast<std::size_t>(slot)]);
  if (!m.check(rc, dst, "MPI_Isend")) {
    m.give_back(std::move(b));
    m.free_slots.push_back(slot);
    return;
  }
  ++m.in_flight;
}

std::size_t MpiTransport::poll() {
  Impl& m = *impl_;
  if (m.closing) return 0;
  m.complete_sends();
  std::size_t delivered = m.take_arrivals(true);
  delivered += m.deliver_loopback();
  return delivered;
}

void MpiTransport::close() {
  Impl& m = *impl_;
  if (m.closed) return;
  m.closing = true;
  m.closed = true;
  m.loopback.clear();
  spdlog::debug("mpi transport: {} messages sent, {} received, {} buffers made",
                m.stats.messages_sent, m.stats.messages_received, m.buffers_made);
  if (m.broken || m.comm == MPI_COMM_NULL) return;
  const auto deadline = std::chrono::steady_clock::now() + kCloseTimeout;
  auto in_time = [&] { return std::chrono::steady_clock::now() < deadline; };
  // Our sends complete once their receivers matched them (large messages)
  // or MPI buffered them; peers still running take them in their loop,
  // closing peers drop them below.
  while (m.in_flight > 0 && !m.broken && in_time()) {
    m.complete_sends();
    if (m.take_arrivals(false) == 0 && m.in_flight > 0) nap_us(20);
  }
  // Once everybody is here, nobody sends any more; keep taking arrivals so
  // that the peers' last sends complete.
  MPI_Request barrier = MPI_REQUEST_NULL;
  bool agreed = false;
  if (!m.broken && m.check(MPI_Ibarrier(m.comm, &barrier), m.self, "MPI_Ibarrier")) {
    while (!m.broken && in_time()) {
      int done = 0;
      if (!m.check(MPI_Test(&barrier, &done, MPI_STATUS_IGNORE), m.self, "MPI_Test on the barrier"))
        break;
      if (done) {
        agreed = true;
        break;
      }
      m.take_arrivals(false);
      nap_us(20);
    }
  }
  if (!agreed) {
    spdlog::warn("mpi transport: not every tool closed within {} s; leaving without them",
                 std::chrono::duration_cast<std::chrono::seconds>(kCloseTimeout).count());
    return;
  }
  // Sends made before the barrier have completed everywhere; what is still
  // on its way here is taken so that nothing is left matched but unreceived.
  while (!m.broken && in_time()) {
    m.take_arrivals(false);
    if (m.arrivals.empty()) break;
    nap_us(20);
  }
  if (!m.broken) MPI_Comm_free(&m.comm);
}

}  // namespace vcx
