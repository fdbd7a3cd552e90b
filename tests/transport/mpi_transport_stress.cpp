// The MPI transport under load, run as `mpiexec -n N mpi-transport-stress`.
//
// Each phase, every rank sends kPerPeer messages to every rank (itself
// included) in one burst without polling in between, cycling through the
// tool parts, with sizes from 0 to 8 KiB and now and then a large one (well
// above MPICH's eager limit). Then it polls until all messages addressed to
// it arrived. Receivers check, per sender, the order (a sequence number that
// runs across parts), the part, the size and every byte. Between and
// after phases it checks what is exact whatever the timing:
//   * a burst leaves every remote send in flight (send() never waits for
//     MPI) and, on a fresh transport, makes exactly one buffer per message;
//   * a second burst takes all its buffers from the free list (no new one);
//   * the counters: messages and bytes sent and received.
// A third phase passes a token around the ring from inside the handlers
// (with a hop to itself on each rank), as the exchange engine sends from its
// handlers. Finally every rank closes the transport.
#include <mpi.h>

#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "mpi_transport/mpi_transport.h"

namespace {

using vcx::ToolPart;
using vcx::Rank;

constexpr int kPerPeer = 1500;
constexpr std::size_t kMaxSmall = 8192;
constexpr std::size_t kLarge = 300 * 1024;
constexpr int kLaps = 300;
constexpr auto kPhaseLimit = std::chrono::seconds(120);

int me = 0, n = 0;

[[noreturn]] void fail(const char* fmt, ...) {
  std::va_list ap;
  va_start(ap, fmt);
  std::fprintf(stderr, "mpi-transport-stress rank %d: FAILED: ", me);
  std::vfprintf(stderr, fmt, ap);
  std::fputc('\n', stderr);
  va_end(ap);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

std::size_t message_size(int src, int dst, int seq) {
  if (seq % 397 == 396) return kLarge + static_cast<std::size_t>(seq % 7);
  return (static_cast<std::size_t>(seq) * 7919u + static_cast<std::size_t>(src) * 31u +
          static_cast<std::size_t>(dst) * 17u) %
         (kMaxSmall + 1);
}

ToolPart message_part(int seq) { return static_cast<ToolPart>(seq % 3); }

std::uint8_t message_byte(int src, int dst, int seq, std::size_t j) {
  return static_cast<std::uint8_t>(src * 131 + dst * 71 + seq * 29 + static_cast<int>(j) * 13);
}

// The first four bytes carry the sequence number when there is room.
void fill(std::vector<std::uint8_t>& buf, int src, int dst, int seq) {
  buf.resize(message_size(src, dst, seq));
  for (std::size_t j = 0; j < buf.size(); ++j) buf[j] = message_byte(src, dst, seq, j);
  if (buf.size() >= 4) {
    const auto s = static_cast<std::uint32_t>(seq);
    for (int b = 0; b < 4; ++b)
      buf[static_cast<std::size_t>(b)] = static_cast<std::uint8_t>(s >> (8 * b));
  }
}

struct Receiver {
  std::vector<int> next;  // per sender: the sequence number expected next
  std::uint64_t bytes_from_others = 0;
  long received = 0;

  void check(Rank src, ToolPart part, std::span<const std::uint8_t> p) {
    const int s = static_cast<int>(src.value);
    if (s < 0 || s >= n) fail("message from unknown rank %d", s);
    const int seq = next[static_cast<std::size_t>(s)]++;
    if (part != message_part(seq))
      fail("from rank %d, message %d came for part %d, sent for %d", s, seq,
           static_cast<int>(part), static_cast<int>(message_part(seq)));
    const std::size_t want = message_size(s, me, seq);
    if (p.size() != want)
      fail("from rank %d, message %d has %zu bytes, sent %zu (out of order?)", s, seq, p.size(),
           want);
    if (p.size() >= 4) {
      std::uint32_t got = 0;
      for (int b = 0; b < 4; ++b)
        got |= static_cast<std::uint32_t>(p[static_cast<std::size_t>(b)]) << (8 * b);
      if (got != static_cast<std::uint32_t>(seq))
        fail("from rank %d, expected message %d, got message %u", s, seq, got);
    }
    for (std::size_t j = 4; j < p.size(); ++j)
      if (p[j] != message_byte(s, me, seq, j))
        fail("from rank %d, message %d: byte %zu differs", s, seq, j);
    if (s != me) bytes_from_others += p.size();
    ++received;
  }
};

void poll_until(vcx::MpiTransport& t, const char* what, const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + kPhaseLimit;
  while (!done()) {
    t.poll();
    if (std::chrono::steady_clock::now() > deadline)
      fail("%s: not done after the time limit", what);
  }
}

// One burst of kPerPeer messages to every rank, then polls until every
// message addressed to this rank has arrived and every send completed.
void phase(vcx::MpiTransport& t, Receiver& rx, int first_seq, std::uint64_t* sent_bytes,
           const char* name, std::uint64_t* buffers_after_burst) {
  std::vector<std::uint8_t> buf;
  const std::uint64_t in_flight_before = t.sends_in_flight();
  for (int i = 0; i < kPerPeer; ++i) {
    const int seq = first_seq + i;
    for (int d = 0; d < n; ++d) {
      fill(buf, me, d, seq);
      t.send(Rank{static_cast<std::uint32_t>(d)}, message_part(seq), buf);
      *sent_bytes += buf.size();
    }
  }
  *buffers_after_burst = t.buffers_made();
  const std::uint64_t remote =
      static_cast<std::uint64_t>(kPerPeer) * static_cast<std::uint64_t>(n - 1);
  if (t.sends_in_flight() - in_flight_before != remote)
    fail("%s: %zu sends in flight after the burst, expected %llu", name, t.sends_in_flight(),
         static_cast<unsigned long long>(remote));
  const long expect = rx.received + static_cast<long>(kPerPeer) * n;
  poll_until(t, name, [&] { return rx.received == expect && t.flushed(); });
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  {
    vcx::MpiTransport t;
    if (t.self().value != static_cast<std::uint32_t>(me) ||
        t.size() != static_cast<std::uint32_t>(n))
      fail("transport says rank %u of %u", t.self().value, t.size());
    Receiver rx;
    rx.next.assign(static_cast<std::size_t>(n), 0);
    for (std::size_t c = 0; c < vcx::kToolParts; ++c)
      t.set_handler(static_cast<ToolPart>(c),
                    [&rx, c](Rank src, std::span<const std::uint8_t> p) {
                      rx.check(src, static_cast<ToolPart>(c), p);
                    });
    bool peer_failed = false;
    t.set_error_handler([&](Rank peer, const std::string& what) {
      peer_failed = true;
      fail("transport reported rank %u: %s", peer.value, what.c_str());
    });

    std::uint64_t sent_bytes = 0, after_a = 0, after_b = 0;
    const std::uint64_t per_phase =
        static_cast<std::uint64_t>(kPerPeer) * static_cast<std::uint64_t>(n);
    phase(t, rx, 0, &sent_bytes, "phase 1", &after_a);
    if (after_a != per_phase)
      fail("phase 1: the burst made %llu buffers, expected one per message (%llu)",
           static_cast<unsigned long long>(after_a), static_cast<unsigned long long>(per_phase));
    const std::uint64_t grown = t.buffers_made();
    MPI_Barrier(MPI_COMM_WORLD);
    phase(t, rx, kPerPeer, &sent_bytes, "phase 2", &after_b);
    if (after_b != grown)
      fail("phase 2: the burst made %llu new buffers; the free list held enough",
           static_cast<unsigned long long>(after_b - grown));

    const auto& st = t.stats();
    if (st.messages_sent != 2 * per_phase || st.bytes_sent != sent_bytes)
      fail("sent counters %llu messages / %llu bytes, expected %llu / %llu",
           static_cast<unsigned long long>(st.messages_sent),
           static_cast<unsigned long long>(st.bytes_sent),
           static_cast<unsigned long long>(2 * per_phase),
           static_cast<unsigned long long>(sent_bytes));
    const std::uint64_t from_others = 2ull * kPerPeer * static_cast<std::uint64_t>(n - 1);
    if (st.messages_received != from_others || st.bytes_received != rx.bytes_from_others)
      fail("received counters %llu messages / %llu bytes, expected %llu / %llu",
           static_cast<unsigned long long>(st.messages_received),
           static_cast<unsigned long long>(st.bytes_received),
           static_cast<unsigned long long>(from_others),
           static_cast<unsigned long long>(rx.bytes_from_others));

    // Nobody sends the token before everybody stopped checking phase 2.
    MPI_Barrier(MPI_COMM_WORLD);
    // Phase 3: a token ring driven from the handlers. Each rank forwards the
    // token to itself for its Analysis part first, then to its right
    // neighbour for its Control part; rank 0 counts laps.
    int laps = 0, hops = 0;
    std::vector<std::uint8_t> token(64);
    const Rank right{static_cast<std::uint32_t>((me + 1) % n)};
    const Rank left{static_cast<std::uint32_t>((me - 1 + n) % n)};
    t.set_handler(ToolPart::Control, [&](Rank src, std::span<const std::uint8_t> p) {
      if (src != left || p.size() != token.size())
        fail("token from rank %u, %zu bytes", src.value, p.size());
      ++hops;
      t.send(t.self(), ToolPart::Analysis, p);
    });
    t.set_handler(ToolPart::Analysis, [&](Rank src, std::span<const std::uint8_t> p) {
      if (src != t.self()) fail("self hop came from rank %u", src.value);
      if (me == 0 && ++laps == kLaps) return;
      t.send(right, ToolPart::Control, p);
    });
    if (me == 0) t.send(right, ToolPart::Control, token);
    poll_until(t, "token ring", [&] { return hops == kLaps; });
    if (me == 0 && laps != kLaps) fail("token made %d laps, expected %d", laps, kLaps);
    poll_until(t, "token ring flush", [&] { return t.flushed(); });

    t.close();
    if (peer_failed) fail("a peer failure was reported");
    std::printf(
        "mpi-transport-stress rank %d: %llu buffers for %llu messages sent and %llu received\n", me,
        static_cast<unsigned long long>(t.buffers_made()),
        static_cast<unsigned long long>(t.stats().messages_sent),
        static_cast<unsigned long long>(t.stats().messages_received));
  }
  MPI_Finalize();
  return 0;
}
