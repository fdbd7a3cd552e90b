// The interceptor's record of local loads and stores (vcx/intercept/
// local_accesses.h) behind the real runtime for instrumented programs
// (libvcx-tsan.so, linked into this binary): accesses go through the
// runtime's __tsan_* entry points as an instrumented program's do, and the
// records that come out are compared with what the definition says: one
// record per exposure an access overlaps, clamped to it, offsets from the
// exposure's base; the accesses of one instruction to adjacent bytes
// between two flushes merged into one record; nothing for memory that is
// not exposed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <random>
#include <tuple>
#include <vector>

#include "vcx/instrument.h"
#include "vcx/intercept/local_accesses.h"

extern "C" {
void __tsan_read4(void* p);
void __tsan_write4(void* p);
void __tsan_write1(void* p);
void __tsan_read_range(void* p, std::uintptr_t size);
std::uint32_t __tsan_atomic32_fetch_add(volatile std::uint32_t* a, std::uint32_t v, int mo);
}

namespace vcx::intercept {
namespace {

struct Batch {
  Model model;
  std::uint16_t call;
  LocalAccessBatch head;
  std::vector<LocalAccessRecord> records;
};

// One recorder bound to the runtime for the length of a test.
class Bound {
 public:
  Bound() {
    current() = this;
    bound = rec.start(&send, this, 1 << 16, &handler);
    rec.set_event(Model::Mpi, 77);
    rec.set_event(Model::Shmem, 99);
    rec.flush();  // the announcements
    announcements = std::move(batches);
    batches.clear();
  }
  ~Bound() {
    rec.stop();
    current() = nullptr;
  }
  // Every record sent since the last call, flushed first.
  std::vector<LocalAccessRecord> take() {
    rec.flush();
    std::vector<LocalAccessRecord> out;
    for (const Batch& b : batches)
      out.insert(out.end(), b.records.begin(), b.records.end());
    batches.clear();
    return out;
  }

  LocalAccesses rec;
  bool bound = false;
  std::vector<Batch> announcements;
  std::vector<Batch> batches;

 private:
  static Bound*& current() {
    static Bound* b = nullptr;
    return b;
  }
  static void handler(std::uintptr_t addr, std::uintptr_t bytes, int write, std::uintptr_t pc) {
    if (Bound* b = current()) b->rec.access(addr, bytes, write != 0, pc);
  }
  static void send(void* ctx, Model model, std::uint16_t call, const void* data,
                   std::size_t bytes) {
    auto* self = static_cast<Bound*>(ctx);
    Batch b{model, call, {}, {}};
    REQUIRE(bytes >= sizeof b.head);
    std::memcpy(&b.head, data, sizeof b.head);
    REQUIRE(bytes == sizeof b.head + b.head.count * sizeof(LocalAccessRecord));
    b.records.resize(b.head.count);
    std::memcpy(b.records.data(), static_cast<const std::uint8_t*>(data) + sizeof b.head,
                b.head.count * sizeof(LocalAccessRecord));
    self->batches.push_back(std::move(b));
  }
};

Exposure memory(const void* lo, std::size_t bytes, std::uint64_t tag, std::int32_t owner,
                Model model = Model::Mpi) {
  Exposure e;
  e.lo = reinterpret_cast<std::uintptr_t>(lo);
  e.hi = e.lo + bytes;
  e.base = e.lo;
  e.tag = e.key = tag;
  e.owner = owner;
  e.model = model;
  return e;
}

// Each of these is one instruction of an instrumented program: the call
// into the runtime, then the access (so the call is no tail call, and its
// return address is the same from every caller).
__attribute__((noipa)) void store_at_a(int* p) {
  __tsan_write4(p);
  *p = 1;
}
__attribute__((noipa)) void store_at_b(int* p) {
  __tsan_write4(p);
  *p = 2;
}
__attribute__((noipa)) int load_at_a(int* p) {
  __tsan_read4(p);
  return *p;
}

TEST_CASE("the runtime binds, and a fresh recorder announces each model once", "[local]") {
  Bound b;
  REQUIRE(b.bound);
  // The first flush sent one empty announcing batch per model.
  REQUIRE(b.announcements.size() == 2);
  for (const Batch& x : b.announcements) {
    CHECK(x.head.count == 0);
    CHECK(x.head.flags == kLocalAccessesStart);
    CHECK(x.call == (x.model == Model::Mpi ? 77 : 99));
  }
  b.rec.set_event(Model::Mpi, 77);  // again: no second announcement
  CHECK(b.take().empty());
  CHECK(b.batches.empty());
}

TEST_CASE("an access to exposed memory is one record, offsets from the base", "[local]") {
  Bound b;
  static int window[16];
  b.rec.expose(memory(window, sizeof window, 5, 3));
  store_at_a(&window[4]);
  const auto r = b.take();
  REQUIRE(r.size() == 1);
  CHECK(r[0].tag == 5);
  CHECK(r[0].offset == 16);
  CHECK(r[0].bytes == 4);
  CHECK(r[0].write == 1);
  CHECK(r[0].owner == 3);
  CHECK(r[0].kind == LocalAccessKind::Memory);
  CHECK(r[0].pc != 0);
}

TEST_CASE("memory that is not exposed gives nothing", "[local]") {
  Bound b;
  static int window[16];
  int private_memory[16] = {};
  b.rec.expose(memory(window, sizeof window, 5, 0));
  for (int& x : private_memory) store_at_a(&x);
  store_at_a(&window[16 - 1] + 1);  // one past the end
  CHECK(b.take().empty());
}

TEST_CASE("one instruction's sweep between two flushes is one record", "[local]") {
  Bound b;
  static int window[64];
  b.rec.expose(memory(window, sizeof window, 9, 1));
  for (int i = 10; i < 40; ++i) store_at_a(&window[i]);
  for (int i = 39; i >= 0; --i) store_at_a(&window[i]);  // backwards, overlapping
  for (int i = 0; i < 64; ++i) load_at_a(&window[i]);
  auto r = b.take();
  std::sort(r.begin(), r.end(), [](auto& x, auto& y) { return x.write < y.write; });
  REQUIRE(r.size() == 2);
  CHECK((r[0].write == 0 && r[0].offset == 0 && r[0].bytes == 256));
  CHECK((r[1].write == 1 && r[1].offset == 0 && r[1].bytes == 160));
  // After a flush (an event of the rank) the same accesses are new ones.
  store_at_a(&window[0]);
  CHECK(b.take().size() == 1);
}

TEST_CASE("different instructions, or gaps, are different records", "[local]") {
  Bound b;
  static int window[64];
  b.rec.expose(memory(window, sizeof window, 9, 1));
  store_at_a(&window[0]);
  store_at_b(&window[1]);
  store_at_a(&window[3]);  // a gap after window[0]
  const auto r = b.take();
  REQUIRE(r.size() == 3);
  std::map<std::uint64_t, std::uint64_t> bytes_at;
  for (const auto& x : r) bytes_at[x.offset] = x.bytes;
  CHECK(bytes_at == std::map<std::uint64_t, std::uint64_t>{{0, 4}, {4, 4}, {12, 4}});
}

TEST_CASE("memory exposed twice gives a record for each exposure, clamped", "[local]") {
  Bound b;
  static char window[64];
  b.rec.expose(memory(window, sizeof window, 2, 0));
  Exposure buffer;
  buffer.lo = reinterpret_cast<std::uintptr_t>(&window[8]);
  buffer.hi = buffer.lo + 4;
  buffer.owner = 0;
  buffer.kind = LocalAccessKind::Buffer;
  b.rec.expose(buffer);
  __tsan_read_range(&window[6], 8);  // window[6..13]
  auto r = b.take();
  REQUIRE(r.size() == 2);
  std::sort(r.begin(), r.end(), [](auto& x, auto& y) { return x.kind < y.kind; });
  CHECK((r[0].kind == LocalAccessKind::Memory && r[0].offset == 6 && r[0].bytes == 8));
  CHECK((r[1].kind == LocalAccessKind::Buffer && r[1].bytes == 4 &&
         r[1].offset == reinterpret_cast<std::uintptr_t>(&window[8])));
  // The buffer's operation completes: only the window is left.
  b.rec.unexpose_if([](const Exposure& e) { return e.kind == LocalAccessKind::Buffer; });
  __tsan_read_range(&window[6], 8);
  r = b.take();
  REQUIRE(r.size() == 1);
  CHECK(r[0].kind == LocalAccessKind::Memory);
}

TEST_CASE("atomics are performed and recorded as writes", "[local]") {
  Bound b;
  static std::uint32_t counter[2] = {5, 0};
  b.rec.expose(memory(counter, sizeof counter, 4, 0));
  CHECK(__tsan_atomic32_fetch_add(&counter[0], 3, 5) == 5);
  CHECK(counter[0] == 8);
  const auto r = b.take();
  REQUIRE(r.size() == 1);
  CHECK((r[0].write == 1 && r[0].offset == 0 && r[0].bytes == 4));
}

TEST_CASE("records of each model go out as that model's events, in batches", "[local]") {
  Bound b;
  static char a[4096], s[64];
  b.rec.expose(memory(a, sizeof a, 1, 0, Model::Mpi));
  b.rec.expose(memory(s, sizeof s, 1, 0, Model::Shmem));
  // Every other byte: no two accesses of the instruction are adjacent.
  for (int i = 0; i < 4096; i += 2) __tsan_write1(&a[i]);
  __tsan_write1(&s[3]);
  b.rec.flush();
  std::size_t mpi = 0, shmem = 0;
  for (const Batch& x : b.batches) {
    CHECK(x.head.count <= 256);
    if (x.model == Model::Mpi) {
      CHECK(x.call == 77);
      mpi += x.records.size();
    } else {
      CHECK((x.model == Model::Shmem && x.call == 99));
      shmem += x.records.size();
    }
  }
  CHECK(mpi == 2048);
  CHECK(shmem == 1);
}

// Random exposures (more than the runtime's ranges, so they are merged
// across gaps) and random accesses: the records are exactly the accesses'
// overlaps with the exposures, byte for byte.
TEST_CASE("random exposures and accesses against the definition", "[local]") {
  std::mt19937_64 rng(GENERATE(1, 2, 3, 4, 5));
  Bound b;
  static char arena[1 << 16];
  std::vector<Exposure> exposed;
  const int n = std::uniform_int_distribution<int>(1, 30)(rng);
  for (int i = 0; i < n; ++i) {
    const std::size_t at = rng() % (sizeof arena - 512), len = 1 + rng() % 256;
    Exposure e = memory(&arena[at], len, static_cast<std::uint64_t>(i + 1), i % 3);
    exposed.push_back(e);
    b.rec.expose(e);
  }
  // Per exposure tag, the bytes the accesses touched (read, write).
  std::map<std::tuple<std::uint64_t, int>, std::vector<bool>> want, got;
  for (const Exposure& e : exposed)
    for (int w = 0; w < 2; ++w) {
      want[{e.tag, w}].assign(e.hi - e.lo, false);
      got[{e.tag, w}].assign(e.hi - e.lo, false);
    }
  for (int k = 0; k < 3000; ++k) {
    const std::size_t at = rng() % (sizeof arena - 8);
    const bool write = rng() % 2;
    if (write)
      __tsan_write4(&arena[at]);
    else
      __tsan_read4(&arena[at]);
    const auto lo = reinterpret_cast<std::uintptr_t>(&arena[at]);
    for (const Exposure& e : exposed)
      for (std::uintptr_t x = std::max(lo, e.lo); x < std::min(lo + 4, e.hi); ++x)
        want[{e.tag, write ? 1 : 0}][x - e.lo] = true;
  }
  for (const LocalAccessRecord& r : b.take()) {
    auto it = got.find({r.tag, r.write});
    REQUIRE(it != got.end());
    REQUIRE(r.offset + r.bytes <= it->second.size());
    for (std::uint64_t x = r.offset; x < r.offset + r.bytes; ++x) it->second[x] = true;
  }
  CHECK(got == want);
}

}  // namespace
}  // namespace vcx::intercept
