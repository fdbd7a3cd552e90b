// The shared-memory ring between two tool processes on one node (one per
// ordered pair, see shm_transport.h): a single-producer/single-consumer byte
// ring of records, each an 8-byte header and its payload padded to 8 bytes.
// A record that would cross the end of the ring is preceded by a padding
// record that fills the rest, so that every payload is contiguous and is
// delivered straight from the ring.
//
// Neither end ever waits here: the writer learns that the ring is full and
// queues; the reader learns that the ring is empty. The flags below tell
// each end when the other needs a wake-up, which the transport sends.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>

#include "vcx/transport.h"

namespace vcx {

inline constexpr std::uint64_t kPeerRingMagic = 0x3130'5254'5250'5856ULL;  // "VXPRTR01"
inline constexpr std::uint32_t kPeerRingLayoutVersion = 1;

struct alignas(64) PeerRingControl {
  // Identity, written once by the writer before the reader maps it.
  std::uint64_t magic;
  std::uint32_t layout_version;
  std::uint32_t src;  // writing tool rank
  std::uint32_t dst;  // reading tool rank
  std::uint32_t reserved;
  std::uint64_t capacity;  // bytes of ring data, power of two

  // Writer side.
  alignas(64) std::atomic<std::uint64_t> head;  // bytes written, monotonic
  std::atomic<std::uint32_t> writer_waiting;    // writer queues until the ring drains

  // Reader side.
  alignas(64) std::atomic<std::uint64_t> tail;  // bytes consumed
  std::atomic<std::uint32_t> reader_sleeping;   // reader sleeps; ring its doorbell
};
static_assert(std::is_standard_layout_v<PeerRingControl>);
static_assert(sizeof(PeerRingControl) == 3 * 64);
static_assert(offsetof(PeerRingControl, capacity) == 24);
static_assert(offsetof(PeerRingControl, head) == 64);
static_assert(offsetof(PeerRingControl, tail) == 128);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);

enum class PeerRecordKind : std::uint8_t {
  Last = 1,     // the message ends with this record's payload
  More = 2,     // a chunk of a larger message; more records follow
  Padding = 3,  // skip `length` bytes (header included) to the ring's start
};

struct PeerRecord {
  std::uint32_t length;  // payload bytes (Padding: bytes to skip)
  std::uint8_t channel;  // ToolPart
  PeerRecordKind kind;
  std::uint16_t reserved;
};
static_assert(sizeof(PeerRecord) == 8);
static_assert(std::is_trivially_copyable_v<PeerRecord>);

inline constexpr std::size_t peer_ring_bytes(std::size_t capacity) {
  return sizeof(PeerRingControl) + capacity;
}

// A ring in a fresh memfd, mapped; `fd` is what the reader is given.
struct PeerRingMapping {
  PeerRingControl* control = nullptr;
  std::size_t bytes = 0;
  int fd = -1;
};
// Creates a ring of `capacity` bytes (a power of two >= 4096) from src to dst.
bool create_peer_ring(std::uint32_t src, std::uint32_t dst, std::size_t capacity,
                      PeerRingMapping* out, std::string* error);
// Maps a ring received from another tool and checks that it is one, from
// `src` to `dst`. Does not take ownership of `fd`.
bool map_peer_ring(int fd, std::uint32_t src, std::uint32_t dst, PeerRingMapping* out,
                   std::string* error);
void unmap_peer_ring(PeerRingMapping* m);

class PeerRingWriter {
 public:
  PeerRingWriter() = default;
  explicit PeerRingWriter(PeerRingControl* c);

  // Largest payload of one record: a quarter of the ring, so that a ring
  // drained to half always has room for the next record and its padding.
  std::uint32_t max_chunk() const noexcept { return max_chunk_; }
  // Writes one record (len <= max_chunk()) if there is room, without
  // publishing it; false when the ring is full.
  bool try_write(ToolPart part, PeerRecordKind kind, const std::uint8_t* data,
                 std::uint32_t len) noexcept;
  // Makes the records written so far visible. True when the reader sleeps
  // and must be woken (the wake-up is claimed: exactly one caller gets true).
  bool publish() noexcept;
  // After try_write failed for a record of `len` bytes: announces that the
  // writer waits for the reader to drain the ring. False (announcement taken
  // back) when room appeared meanwhile: try again.
  bool announce_waiting(std::uint32_t len) noexcept;
  // True while something written has not been consumed.
  bool unread() const noexcept;

 private:
  std::uint64_t needed(std::uint32_t len) const noexcept;
  bool fits(std::uint64_t need) noexcept;

  PeerRingControl* c_ = nullptr;
  std::uint8_t* data_ = nullptr;
  std::uint64_t mask_ = 0;
  std::uint64_t head_ = 0;  // written, maybe not yet published
  std::uint64_t published_ = 0;
  std::uint64_t tail_cache_ = 0;
  std::uint32_t max_chunk_ = 0;
};

class PeerRingReader {
 public:
  PeerRingReader() = default;
  explicit PeerRingReader(PeerRingControl* c);

  struct Record {
    ToolPart channel;
    PeerRecordKind kind;  // Last or More
    std::span<const std::uint8_t> payload;  // in the ring, valid until pop()
  };
  // The next record (padding skipped); false when the ring is empty. Sets
  // *malformed (and returns false) when the ring holds something no writer
  // writes. The header is read once, so a writer cannot change it under
  // the checks.
  bool peek(Record* out, bool* malformed) noexcept;
  // Releases the record last returned by peek(). True when the writer waits
  // for room and the ring has drained to half: wake it (claimed, as above).
  bool pop() noexcept;
  bool empty() const noexcept;
  // Announces that the reader is about to sleep; false (announcement taken
  // back) when a record arrived meanwhile.
  bool prepare_sleep() noexcept;
  void end_sleep() noexcept;

 private:
  PeerRingControl* c_ = nullptr;
  const std::uint8_t* data_ = nullptr;
  std::uint64_t mask_ = 0;
  std::uint64_t tail_ = 0;
  std::uint64_t head_cache_ = 0;
  std::uint64_t peeked_bytes_ = 0;  // record bytes of the record peek() returned
};

}  // namespace vcx
