#include "vcx/shm_ring.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

#include "vcx/channel/memfd.h"

namespace vcx {
namespace {

constexpr std::uint64_t kAlign = sizeof(PeerRecord);

constexpr std::uint64_t record_bytes(std::uint32_t len) {
  return sizeof(PeerRecord) + ((static_cast<std::uint64_t>(len) + kAlign - 1) & ~(kAlign - 1));
}

// Record plus its padding: at most 2 * record - 8 bytes, which is below half
// the ring for records of at most max_chunk() bytes.
constexpr std::uint32_t max_chunk_of(std::uint64_t capacity) {
  return static_cast<std::uint32_t>(capacity / 4 - 2 * kAlign);
}

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

bool valid_capacity(std::uint64_t cap) { return cap >= 4096 && (cap & (cap - 1)) == 0; }

}  // namespace

bool create_peer_ring(std::uint32_t src, std::uint32_t dst, std::size_t capacity,
                      PeerRingMapping* out, std::string* error) {
  if (!valid_capacity(capacity)) {
    *error = "ring capacity must be a power of two >= 4096";
    return false;
  }
  const std::size_t bytes = peer_ring_bytes(capacity);
  int fd = -1;
  void* mem = nullptr;
  if (!channel::create_shared_memfd("vcx-peer-ring", bytes, "a peer ring", &fd, &mem, error))
    return false;
  auto* c = new (mem) PeerRingControl{};
  c->magic = kPeerRingMagic;
  c->layout_version = kPeerRingLayoutVersion;
  c->src = src;
  c->dst = dst;
  c->capacity = capacity;
  c->head.store(0, std::memory_order_relaxed);
  c->tail.store(0, std::memory_order_release);
  *out = PeerRingMapping{c, bytes, fd};
  return true;
}

bool map_peer_ring(int fd, std::uint32_t src, std::uint32_t dst, PeerRingMapping* out,
                   std::string* error) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    *error = errno_text("fstat of a peer ring");
    return false;
  }
  const auto bytes = static_cast<std::size_t>(st.st_size);
  if (bytes < sizeof(PeerRingControl)) {
    *error = "a peer ring too small to be one";
    return false;
  }
  void* mem = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (mem == MAP_FAILED) {
    *error = errno_text("mapping a peer ring");
    return false;
  }
  auto* c = static_cast<PeerRingControl*>(mem);
  const std::uint64_t cap = c->capacity;
  if (c->magic != kPeerRingMagic || c->layout_version != kPeerRingLayoutVersion ||
      c->src != src || c->dst != dst || !valid_capacity(cap) || peer_ring_bytes(cap) != bytes) {
    ::munmap(mem, bytes);
    *error = "not a peer ring from tool rank " + std::to_string(src) + " to " + std::to_string(dst);
    return false;
  }
  *out = PeerRingMapping{c, bytes, -1};
  return true;
}

void unmap_peer_ring(PeerRingMapping* m) {
  if (m->control) ::munmap(m->control, m->bytes);
  if (m->fd >= 0) ::close(m->fd);
  *m = PeerRingMapping{};
}

// ---------------------------------------------------------------------------

PeerRingWriter::PeerRingWriter(PeerRingControl* c)
    : c_(c),
      data_(reinterpret_cast<std::uint8_t*>(c) + sizeof(PeerRingControl)),
      mask_(c->capacity - 1),
      head_(c->head.load(std::memory_order_relaxed)),
      published_(head_),
      tail_cache_(c->tail.load(std::memory_order_acquire)),
      max_chunk_(max_chunk_of(c->capacity)) {}

std::uint64_t PeerRingWriter::needed(std::uint32_t len) const noexcept {
  const std::uint64_t rec = record_bytes(len);
  const std::uint64_t off = head_ & mask_;
  return (off + rec > mask_ + 1) ? (mask_ + 1 - off) + rec : rec;
}

bool PeerRingWriter::fits(std::uint64_t need) noexcept {
  if (head_ + need - tail_cache_ <= mask_ + 1) return true;
  tail_cache_ = c_->tail.load(std::memory_order_acquire);
  return head_ + need - tail_cache_ <= mask_ + 1;
}

bool PeerRingWriter::try_write(ToolPart part, PeerRecordKind kind, const std::uint8_t* data,
                               std::uint32_t len) noexcept {
  const std::uint64_t rec = record_bytes(len);
  if (!fits(needed(len))) return false;
  std::uint64_t off = head_ & mask_;
  if (off + rec > mask_ + 1) {
    const PeerRecord pad{static_cast<std::uint32_t>(mask_ + 1 - off),
                         static_cast<std::uint8_t>(part), PeerRecordKind::Padding, 0};
    std::memcpy(data_ + off, &pad, sizeof pad);
    head_ += pad.length;
    off = 0;
  }
  const PeerRecord h{len, static_cast<std::uint8_t>(part), kind, 0};
  std::memcpy(data_ + off, &h, sizeof h);
  if (len > 0) std::memcpy(data_ + off + sizeof h, data, len);
  head_ += rec;
  return true;
}

bool PeerRingWriter::publish() noexcept {
  if (published_ == head_) return false;
  published_ = head_;
  // seq_cst pairs with the reader's prepare_sleep(): either it sees these
  // records or this sees that it sleeps.
  c_->head.store(head_, std::memory_order_seq_cst);
  return c_->reader_sleeping.load(std::memory_order_seq_cst) != 0 &&
         c_->reader_sleeping.exchange(0, std::memory_order_seq_cst) != 0;
}

bool PeerRingWriter::announce_waiting(std::uint32_t len) noexcept {
  c_->writer_waiting.store(1, std::memory_order_seq_cst);
  tail_cache_ = c_->tail.load(std::memory_order_seq_cst);
  if (head_ + needed(len) - tail_cache_ <= mask_ + 1) {
    c_->writer_waiting.store(0, std::memory_order_relaxed);
    return false;
  }
  return true;
}

bool PeerRingWriter::unread() const noexcept {
  return c_->tail.load(std::memory_order_acquire) != head_;
}

// ---------------------------------------------------------------------------

PeerRingReader::PeerRingReader(PeerRingControl* c)
    : c_(c),
      data_(reinterpret_cast<const std::uint8_t*>(c) + sizeof(PeerRingControl)),
      mask_(c->capacity - 1),
      tail_(c->tail.load(std::memory_order_relaxed)),
      head_cache_(c->head.load(std::memory_order_acquire)) {}

bool PeerRingReader::empty() const noexcept {
  return c_->head.load(std::memory_order_acquire) == tail_;
}

bool PeerRingReader::peek(Record* out, bool* malformed) noexcept {
  for (;;) {
    if (tail_ == head_cache_) {
      head_cache_ = c_->head.load(std::memory_order_acquire);
      if (tail_ == head_cache_) return false;
    }
    const std::uint64_t off = tail_ & mask_;
    PeerRecord r;
    std::memcpy(&r, data_ + off, sizeof r);
    const std::uint64_t room = mask_ + 1 - off;  // bytes to the ring's end
    if (r.kind == PeerRecordKind::Padding) {
      if (r.length != room || head_cache_ - tail_ < room) {
        *malformed = true;
        return false;
      }
      tail_ += room;  // consumed with the record that follows
      continue;
    }
    const std::uint64_t bytes = record_bytes(r.length);
    if ((r.kind != PeerRecordKind::Last && r.kind != PeerRecordKind::More) ||
        r.channel >= kToolParts || r.length > max_chunk_of(mask_ + 1) || bytes > room ||
        bytes > head_cache_ - tail_) {
      *malformed = true;
      return false;
    }
    peeked_bytes_ = bytes;
    *out = Record{static_cast<ToolPart>(r.channel), r.kind,
                  std::span<const std::uint8_t>(data_ + off + sizeof r, r.length)};
    return true;
  }
}

bool PeerRingReader::pop() noexcept {
  tail_ += peeked_bytes_;
  peeked_bytes_ = 0;
  // seq_cst pairs with the writer's announce_waiting(): either it sees this
  // tail or this sees that it waits. It is woken once, at half a ring.
  c_->tail.store(tail_, std::memory_order_seq_cst);
  return c_->writer_waiting.load(std::memory_order_seq_cst) != 0 &&
         c_->head.load(std::memory_order_acquire) - tail_ <= (mask_ + 1) / 2 &&
         c_->writer_waiting.exchange(0, std::memory_order_seq_cst) != 0;
}

bool PeerRingReader::prepare_sleep() noexcept {
  c_->reader_sleeping.store(1, std::memory_order_seq_cst);
  if (c_->head.load(std::memory_order_seq_cst) != tail_) {
    c_->reader_sleeping.store(0, std::memory_order_relaxed);
    return false;
  }
  return true;
}

void PeerRingReader::end_sleep() noexcept {
  c_->reader_sleeping.store(0, std::memory_order_relaxed);
}

}  // namespace vcx
