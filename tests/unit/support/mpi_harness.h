// Driving the MPI translator plugin by hand: interceptor events built the
// way the interceptor lays them out, one translator per simulated rank, a
// recording ExchangeControl, and a job that feeds translators into real
// engines (support/engine_sim.h). Header-only, no test-framework macros.
#pragma once

#include <cctype>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "../../../translators/mpi/common/mpi_events.h"
#include "engine_sim.h"
#include "vcx/translator.h"

namespace vcx::mpitest {

using namespace vcx::mpi;
using vcx::sim::Clock;

constexpr std::uint64_t kWorldHandle = 0x1000;
constexpr std::uint64_t kSelfHandle = 0x1001;

// ---- a recording ExchangeControl ----

struct Bind {
  std::uint64_t token;
  Rank src;
  QueueId queue;
  bool operator==(const Bind&) const = default;
};

class RecordingControl final : public ExchangeControl {
 public:
  void register_group(GroupId id, std::span<const Rank> members,
                      std::uint32_t second_side = 0) override {
    groups.emplace_back(id, std::vector<Rank>(members.begin(), members.end()));
    sides.push_back(second_side);
  }
  ReceiveToken new_receive(bool answers_synchronous = true) override {
    answers_synchronous_[++last_token] = answers_synchronous;
    return ReceiveToken{last_token};
  }
  // Whether the receive was created as one that may answer a synchronous send.
  bool answers(std::uint64_t token) const { return answers_synchronous_.at(token); }
  void bind_receive(ReceiveToken t, Rank src, QueueId queue) override {
    binds.push_back(Bind{t.value, src, queue});
  }
  void drop_receive(ReceiveToken t) override { drops.push_back(t.value); }
  void abandon_receive(ReceiveToken t) override { abandoned.push_back(t.value); }
  void hold_receive(ReceiveToken t) override { holds.push_back(t.value); }
  void release_hold(ReceiveToken t) override { released_holds.push_back(t.value); }
  void discard_answer(const SendToken& t) override { discarded.push_back(t); }
  void order_receive_after(ReceiveToken later, ReceiveToken earlier) override {
    orders.emplace_back(later.value, earlier.value);
  }
  void keep_receive_order(ReceiveToken t) override { kept.insert(t.value); }
  void end_receive_order(ReceiveToken t) override { kept.erase(t.value); }
  void add_pending_receives(const PendingReceives* p) override { pending.push_back(p); }
  // What the engine would learn by asking the registered translator.
  bool may_bind(Rank src, QueueId q) const {
    for (const PendingReceives* p : pending)
      if (p->could_bind_later(src, q)) return true;
    return false;
  }
  SendToken reserve_send(Rank dst, QueueId queue) override {
    return SendToken{dst, queue, ++send_seq[std::make_tuple(dst.value, queue.a, queue.b)]};
  }

  std::vector<std::pair<GroupId, std::vector<Rank>>> groups;
  std::vector<std::uint32_t> sides;  // second_side of each registration in `groups`
  std::vector<Bind> binds;
  std::vector<std::uint64_t> drops;
  std::vector<std::uint64_t> abandoned;
  std::vector<std::uint64_t> holds;
  std::vector<std::uint64_t> released_holds;
  std::vector<SendToken> discarded;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> orders;  // (later, earlier)
  std::set<std::uint64_t> kept;  // receives kept for ordering now
  std::uint64_t last_token = 0;
  std::vector<const PendingReceives*> pending;
  std::map<std::tuple<std::uint32_t, std::uint64_t, std::uint64_t>, std::uint64_t> send_seq;

 private:
  std::map<std::uint64_t, bool> answers_synchronous_;
};

// ---- events as the interceptor lays them out ----

class Event {
 public:
  Event(Call call, const void* payload, std::size_t n) : words_((sizeof(EventHeader) + n + 7) / 8) {
    EventHeader h{};
    h.size = static_cast<std::uint32_t>(event_record_size(n));
    h.model = Model::Mpi;
    h.type = static_cast<std::uint16_t>(call);
    h.payload_size = static_cast<std::uint32_t>(n);
    std::memcpy(words_.data(), &h, sizeof h);
    if (n) std::memcpy(reinterpret_cast<std::uint8_t*>(words_.data()) + sizeof h, payload, n);
  }
  template <class T>
  static Event of(Call call, const T& payload) {
    return Event(call, &payload, sizeof payload);
  }
  EventHeader& header() { return *reinterpret_cast<EventHeader*>(words_.data()); }

 private:
  std::vector<std::uint64_t> words_;  // 8-byte aligned storage
};

template <class Head, class Item>
inline Event with_items(Call call, const Head& head, const std::vector<Item>& items) {
  std::vector<std::uint8_t> bytes(sizeof head + items.size() * sizeof(Item));
  std::memcpy(bytes.data(), &head, sizeof head);
  if (!items.empty())
    std::memcpy(bytes.data() + sizeof head, items.data(), items.size() * sizeof(Item));
  return Event(call, bytes.data(), bytes.size());
}

// The mode the interceptor reports for a send call, from its name:
// MPI_[I]{S,B,R}send[_init][_c].
inline SendMode send_mode(Call call) {
  std::string name = kCallNames[static_cast<std::size_t>(call)] + 4;  // drop "MPI_"
  for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (name[0] == 'i') name.erase(0, 1);  // the non-blocking forms
  if (name.rfind("ssend", 0) == 0) return SendMode::Synchronous;
  if (name.rfind("bsend", 0) == 0) return SendMode::Buffered;
  if (name.rfind("rsend", 0) == 0) return SendMode::Ready;
  return SendMode::Standard;
}

// A communicator constructor as the interceptor reports it: world ranks of
// the (local) group and of the remote group, neighbours as communicator ranks.
struct CommSpec {
  Call call = Call::Comm_split;
  std::uint64_t parent = kWorldHandle;
  std::uint64_t newcomm = 0;
  std::vector<std::int32_t> local, remote;
  bool is_null = false;
  bool same_group = false;
  bool topology = false;
  std::vector<std::int32_t> in, out;
  CommContext context = CommContext::Parent;
  std::int32_t tag = 0;
};

// ---- one rank's translator ----

class Tx {
 public:
  Tx(std::uint32_t rank, std::uint32_t size, ExchangeControl* ctl = nullptr)
      : net_(size, 1), transport_(net_, Rank{rank}, size), host_(Rank{rank}, size, transport_) {
    lib_ = load_plugin(VCX_PLUGIN_DIR, PluginKind::Translator, "mpi");
    std::string err;
    plugin_ = lib_.descriptor->create(host_, &err);
    if (!plugin_) throw std::runtime_error("creating the mpi translator: " + err);
    t_ = plugin_->translator();
    if (!t_) throw std::runtime_error("the mpi plugin is not a translator");
    ctl_ = ctl ? ctl : &own_;
  }
  ~Tx() {
    delete plugin_;
    unload_plugin(lib_);
  }
  Tx(const Tx&) = delete;
  Tx& operator=(const Tx&) = delete;

  Translator& translator() { return *t_; }
  RecordingControl& rec() { return own_; }
  vcx::sim::SimHost& host() { return host_; }

  CallProgram feed(Event ev) {
    ev.header().seq = ++seq_;
    CallProgram out;
    out.reset(Model::Mpi, ev.header().type, seq_);
    t_->translate(ev.header(), *ctl_, out);
    return out;
  }

  // ---- the calls, as the interceptor reports them ----
  CallProgram init(std::uint32_t rank, std::uint32_t size) {
    InitEvent e{};
    e.comm_world = kWorldHandle;
    e.comm_self = kSelfHandle;
    e.world_rank = static_cast<std::int32_t>(rank);
    e.world_size = static_cast<std::int32_t>(size);
    return feed(Event::of(Call::Init, e));
  }
  CallProgram send(Call call, std::int32_t dest, std::int32_t tag,
                   std::uint64_t comm = kWorldHandle, std::uint64_t request = 0) {
    SendEvent e{};
    e.comm = comm;
    e.request = request;
    e.dest = dest;
    e.tag = tag;
    e.mode = send_mode(call);
    return feed(Event::of(call, e));
  }
  CallProgram recv(std::int32_t source, std::int32_t tag, std::int32_t st_source,
                   std::int32_t st_tag, std::uint64_t comm = kWorldHandle) {
    RecvEvent e{};
    e.comm = comm;
    e.source = source;
    e.tag = tag;
    e.status_source = st_source;
    e.status_tag = st_tag;
    return feed(Event::of(Call::Recv, e));
  }
  CallProgram irecv(std::uint64_t request, std::int32_t source, std::int32_t tag,
                    std::uint64_t comm = kWorldHandle) {
    IrecvEvent e{};
    e.comm = comm;
    e.request = request;
    e.source = source;
    e.tag = tag;
    return feed(Event::of(Call::Irecv, e));
  }
  CallProgram complete(Call call, const std::vector<Completion>& done) {
    CompletionEvent head{};
    head.count = static_cast<std::uint32_t>(done.size());
    return feed(with_items(call, head, done));
  }
  CallProgram wait(std::uint64_t request, std::int32_t source = 0, std::int32_t tag = 0,
                   bool cancelled = false) {
    return complete(Call::Wait, {Completion{request, source, tag, cancelled ? 1 : 0, 0}});
  }
  CallProgram sendrecv(std::int32_t dest, std::int32_t stag, std::int32_t source, std::int32_t rtag,
                       std::int32_t st_source, std::int32_t st_tag) {
    SendrecvEvent e{};
    e.comm = kWorldHandle;
    e.dest = dest;
    e.send_tag = stag;
    e.source = source;
    e.recv_tag = rtag;
    e.status_source = st_source;
    e.status_tag = st_tag;
    return feed(Event::of(Call::Sendrecv, e));
  }
  // Blocking collectives (request 0), initiations and persistent _init calls.
  CallProgram collective(Call call, std::uint64_t comm = kWorldHandle, std::int32_t root = 0,
                         std::uint64_t request = 0) {
    CollectiveEvent e{};
    e.comm = comm;
    e.request = request;
    e.root = root;
    return feed(Event::of(call, e));
  }
  CallProgram comm_new(const CommSpec& spec) {
    CommCreateEvent e{};
    e.parent = spec.parent;
    e.newcomm = spec.newcomm;
    e.is_null = spec.is_null;
    e.same_group = spec.same_group;
    e.nlocal = static_cast<std::uint32_t>(spec.local.size());
    e.nremote = static_cast<std::uint32_t>(spec.remote.size());
    e.nin = spec.topology ? static_cast<std::int32_t>(spec.in.size()) : -1;
    e.nout = spec.topology ? static_cast<std::int32_t>(spec.out.size()) : -1;
    e.context = spec.context;
    e.tag = spec.tag;
    std::vector<std::int32_t> items = spec.local;
    for (const auto* v : {&spec.remote, &spec.in, &spec.out})
      items.insert(items.end(), v->begin(), v->end());
    return feed(with_items(spec.call, e, items));
  }
  // An intracommunicator constructor collective over its parent.
  CallProgram comm_new(Call call, std::uint64_t parent, std::uint64_t newcomm,
                       const std::vector<std::int32_t>& world_ranks, bool is_null = false,
                       bool same_group = false) {
    CommSpec spec;
    spec.call = call;
    spec.parent = parent;
    spec.newcomm = newcomm;
    spec.local = world_ranks;
    spec.is_null = is_null;
    spec.same_group = same_group;
    return comm_new(spec);
  }
  CallProgram start(const std::vector<std::uint64_t>& requests) {
    StartEvent head{};
    head.count = static_cast<std::uint32_t>(requests.size());
    return feed(with_items(requests.size() == 1 ? Call::Start : Call::Startall, head, requests));
  }
  CallProgram request_free(std::uint64_t request) {
    return feed(Event::of(Call::Request_free, RequestEvent{request}));
  }
  CallProgram recv_init(std::uint64_t request, std::int32_t source, std::int32_t tag,
                        std::uint64_t comm = kWorldHandle) {
    IrecvEvent e{};
    e.comm = comm;
    e.request = request;
    e.source = source;
    e.tag = tag;
    return feed(Event::of(Call::Recv_init, e));
  }
  // MPI_Mprobe / MPI_Improbe that found a message (status as MPI filled it).
  CallProgram mprobe(Call call, std::uint64_t message, std::int32_t source, std::int32_t tag,
                     std::int32_t st_source, std::int32_t st_tag,
                     std::uint64_t comm = kWorldHandle) {
    MprobeEvent e{};
    e.comm = comm;
    e.message = message;
    e.source = source;
    e.tag = tag;
    e.status_source = st_source;
    e.status_tag = st_tag;
    return feed(Event::of(call, e));
  }
  CallProgram mrecv(Call call, std::uint64_t message, std::uint64_t request = 0,
                    std::int32_t st_source = 0, std::int32_t st_tag = 0) {
    MrecvEvent e{};
    e.message = message;
    e.request = request;
    e.status_source = st_source;
    e.status_tag = st_tag;
    return feed(Event::of(call, e));
  }

 private:
  vcx::sim::Network net_;
  vcx::sim::SimTransport transport_;
  vcx::sim::SimHost host_;
  LoadedPlugin lib_;
  Plugin* plugin_ = nullptr;
  Translator* t_ = nullptr;
  RecordingControl own_;
  ExchangeControl* ctl_ = nullptr;
  std::uint64_t seq_ = 0;
};

inline std::vector<Op> ops(const CallProgram& p) { return {p.ops().begin(), p.ops().end()}; }

// ---- one-sided communication, as the interceptor reports it ----

inline CallProgram win_create(Tx& tx, std::uint64_t comm, std::uint64_t win,
                              Call call = Call::Win_create) {
  WinCreateEvent e{};
  e.comm = comm;
  e.win = win;
  e.disp_unit = 1;
  return tx.feed(Event::of(call, e));
}
// Fence, free, complete, wait/test (arg: the flag; the interceptor reports
// MPI_Win_wait with 1), lock/unlock (rank: the target in the window's group;
// arg: kLockExclusive/kLockShared), lock_all/unlock_all.
inline CallProgram win_call(Tx& tx, Call call, std::uint64_t win, std::int32_t rank = 0,
                            std::int32_t arg = 0) {
  WinEvent e{};
  e.win = win;
  e.rank = rank;
  e.arg = arg;
  return tx.feed(Event::of(call, e));
}
// Post and start: the group as world ranks.
inline CallProgram win_group(Tx& tx, Call call, std::uint64_t win,
                             const std::vector<std::int32_t>& world_ranks) {
  WinGroupEvent head{};
  head.win = win;
  head.count = static_cast<std::uint32_t>(world_ranks.size());
  return tx.feed(with_items(call, head, world_ranks));
}
inline CallProgram rma(Tx& tx, Call call, std::uint64_t win, std::int32_t target_rank,
                       RmaKind kind = RmaKind::Put, std::uint64_t request = 0) {
  RmaAccessEvent e{};
  e.win = win;
  e.origin_addr = 0x7000;
  e.origin_bytes = 64;
  e.target_disp = 8;
  e.target_bytes = 64;
  e.request = request;
  e.target_rank = target_rank;
  e.target_extent = 8;
  e.kind = kind;
  return tx.feed(Event::of(call, e));
}

inline GroupId world_id(Tx& tx) { return tx.rec().groups.at(0).first; }
inline QueueId wq(Tx& tx, std::int32_t tag) {
  return QueueId{world_id(tx).value, static_cast<std::uint64_t>(static_cast<std::uint32_t>(tag))};
}

inline std::vector<Rank> ranks(std::initializer_list<std::uint32_t> v) {
  std::vector<Rank> out;
  for (auto x : v) out.push_back(Rank{x});
  return out;
}

// A job of n ranks, each with its MPI translator feeding its real engine
// through a MirrorControl, so the reference model sees every group, binding
// and program too.
struct Job {
  vcx::sim::EngineSim sim;
  std::vector<std::unique_ptr<vcx::sim::MirrorControl>> ctl;
  std::vector<std::unique_ptr<Tx>> tx;
  explicit Job(std::uint32_t n, std::uint64_t seed) : sim(n, seed) {
    for (std::uint32_t r = 0; r < n; ++r) {
      ctl.push_back(std::make_unique<vcx::sim::MirrorControl>(sim, r));
      tx.push_back(std::make_unique<Tx>(r, n, ctl[r].get()));
      submit(r, tx[r]->init(r, n));
    }
  }
  sim::EngineSim::Submitted submit(std::uint32_t r, const CallProgram& p,
                                   bool needs_reply = false) {
    return sim.submit_program(r, p, needs_reply);
  }
  Clock clock(std::uint32_t r, std::size_t call) const { return sim.calls(r).at(call).clock; }
};

}  // namespace vcx::mpitest
