// A simulated tool job for exchange-engine tests: one real engine (loaded from
// the built plugin) per simulated rank, a fake ToolHost each, and an in-memory
// network that keeps every ordered (src, dst) pair FIFO but interleaves pairs
// at random (seeded), delivering one message at a time and running every
// engine between deliveries.
//
// Alongside, a reference model computes the clocks the rules (clock-rules.md)
// give for the same programs: a plain sequential interpreter with global
// knowledge of the matching (no trees, no sparse messages, no timing). Tests
// compare the engines' recorded clocks against it. The one thing it cannot
// know up front, the order in which depositions grant locks, it takes from
// the run (see "Locks as their depositions handled them").
//
// Header-only and free of test-framework macros so any test can reuse it;
// problems are reported as strings ("" = fine) or as exceptions.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "../../../engines/vclock/vclock_engine.h"
#include "vcx/call_program.h"
#include "vcx/exchange.h"
#include "vcx/options.h"
#include "vcx/channel/lease_table.h"
#include "vcx/plugin.h"
#include "vcx/plugin_loader.h"
#include "vcx/transport.h"
#include "vcx/vector_clock.h"

namespace vcx::sim {

using Clock = std::vector<ClockValue>;

inline std::string str(const Clock& c) { return clock_to_string(c); }

// What a fake host's fatal() throws: engines call it on protocol violations.
class SimFatal : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// ---------------------------------------------------------------------------
// Network and per-rank services

class Network {
 public:
  Network(std::uint32_t n, std::uint64_t seed) : n_(n), rng_(seed), queues_(n * n), handlers_(n) {}

  // Sees every message when it is sent and again when it is delivered (just
  // before its handler runs), so that a test can log what engines decided.
  using Tap = std::function<void(bool delivered, Rank src, Rank dst, ToolPart part,
                                 std::span<const std::uint8_t> bytes)>;
  void set_tap(Tap t) { tap_ = std::move(t); }

  void send(Rank src, Rank dst, ToolPart part, std::span<const std::uint8_t> bytes) {
    if (dst.value >= n_)
      throw SimFatal("send to rank " + std::to_string(dst.value) + " of " + std::to_string(n_));
    if (tap_) tap_(false, src, dst, part, bytes);
    queues_[src.value * n_ + dst.value].push_back(
        Msg{part, std::vector<std::uint8_t>(bytes.begin(), bytes.end())});
    ++sent_;
  }
  void set_handler(Rank self, ToolPart part, PeerTransport::Handler h) {
    handlers_[self.value][static_cast<std::size_t>(part)] = std::move(h);
  }

  // Delivers the oldest message of one randomly chosen non-empty pair.
  bool deliver_one() {
    std::vector<std::size_t> ready;
    for (std::size_t i = 0; i < queues_.size(); ++i)
      if (!queues_[i].empty()) ready.push_back(i);
    if (ready.empty()) return false;
    const std::size_t pick = ready[rng_() % ready.size()];
    Msg m = std::move(queues_[pick].front());
    queues_[pick].pop_front();
    const Rank src{static_cast<std::uint32_t>(pick / n_)};
    const Rank dst{static_cast<std::uint32_t>(pick % n_)};
    auto& h = handlers_[dst.value][static_cast<std::size_t>(m.part)];
    if (!h) throw SimFatal("message for rank " + std::to_string(dst.value) + " without a handler");
    ++delivered_;
    if (tap_) tap_(true, src, dst, m.part, m.bytes);
    h(src, m.bytes);
    return true;
  }

  std::size_t pending() const {
    std::size_t n = 0;
    for (const auto& q : queues_) n += q.size();
    return n;
  }
  std::uint64_t sent() const { return sent_; }
  std::uint64_t delivered() const { return delivered_; }

 private:
  struct Msg {
    ToolPart part;
    std::vector<std::uint8_t> bytes;
  };
  std::uint32_t n_;
  std::mt19937_64 rng_;
  std::vector<std::deque<Msg>> queues_;  // index src * n + dst
  std::vector<std::array<PeerTransport::Handler, kToolParts>> handlers_;
  Tap tap_;
  std::uint64_t sent_ = 0;
  std::uint64_t delivered_ = 0;
};

class SimTransport final : public PeerTransport {
 public:
  SimTransport(Network& net, Rank self, std::uint32_t size) : net_(net), self_(self), size_(size) {}
  void send(Rank dst, ToolPart part, std::span<const std::uint8_t> payload) override {
    net_.send(self_, dst, part, payload);
  }
  void set_handler(ToolPart part, Handler h) override {
    net_.set_handler(self_, part, std::move(h));
  }
  Rank self() const override { return self_; }
  std::uint32_t size() const override { return size_; }

 private:
  Network& net_;
  Rank self_;
  std::uint32_t size_;
};

class SimHost final : public ToolHost {
 public:
  SimHost(Rank rank, std::uint32_t size, PeerTransport& t) : rank_(rank), size_(size), t_(t) {}
  Rank rank() const override { return rank_; }
  std::uint32_t world_size() const override { return size_; }
  const Options& options() const override { return options_; }
  PeerTransport& transport() override { return t_; }
  void reply(std::uint64_t event_seq) override { replies.push_back(event_seq); }
  const char* call_name(std::uint8_t model, std::uint16_t call) const override {
    auto key = std::make_pair(model, call);
    auto it = names_.find(key);
    if (it == names_.end())
      it = names_.emplace(key, "call-" + std::to_string(model) + "-" + std::to_string(call)).first;
    return it->second.c_str();
  }
  [[noreturn]] void fatal(const std::string& why) override {
    throw SimFatal("rank " + std::to_string(rank_.value) + ": " + why);
  }
  channel::LeaseTable* app_leases() override { return leases; }
  bool receive_notes_wanted() const override { return receive_notes; }

  Options options_;
  // The application's lease table, when a test plays the application's
  // side of leases (nullptr: locks are never leased, as over TCP).
  channel::LeaseTable* leases = nullptr;
  // Whether translators write receive notes (set before the first event).
  bool receive_notes = false;
  std::vector<std::uint64_t> replies;

 private:
  Rank rank_;
  std::uint32_t size_;
  PeerTransport& t_;
  mutable std::map<std::pair<std::uint8_t, std::uint16_t>, std::string> names_;
};

// Keeps a copy of everything a ClockedCall only points at.
class Recorder final : public ClockedCallObserver {
 public:
  struct Call {
    Rank rank{};
    std::uint64_t seq = 0;
    std::uint16_t call = 0;
    std::string name;
    std::vector<Rank> peers;
    GroupId group{};
    QueueId queue{};
    Clock clock;
  };
  void on_clocked_call(const ClockedCall& c) override {
    calls.push_back(Call{c.rank, c.seq, c.call, c.call_name,
                         std::vector<Rank>(c.peers.begin(), c.peers.end()), c.group, c.queue,
                         Clock(c.clock.begin(), c.clock.end())});
  }
  std::vector<Call> calls;
};

// Stands in for a translator's unbound receives: says which (source, queue)
// a receive not yet bound here may still be bound to.
class SimPending final : public PendingReceives {
 public:
  bool could_bind_later(Rank src, QueueId q) const override {
    return all_ || keys_.count({src.value, q.a, q.b}) != 0;
  }
  void set(Rank src, QueueId q, bool on) {
    if (on)
      keys_.insert({src.value, q.a, q.b});
    else
      keys_.erase({src.value, q.a, q.b});
  }
  void set_all(bool on) { all_ = on; }
  void clear() {
    keys_.clear();
    all_ = false;
  }

 private:
  bool all_ = false;
  std::set<std::tuple<std::uint32_t, std::uint64_t, std::uint64_t>> keys_;
};

// ---------------------------------------------------------------------------
// Programs

struct Prog {
  std::uint16_t call = 1;
  bool clocked = true;
  std::vector<Op> ops;

  static Prog clocked_call(std::uint16_t call = 1) { return Prog{call, true, {}}; }
  static Prog unclocked(std::uint16_t call = 2) { return Prog{call, false, {}}; }

  Prog& signal(Rank dst, QueueId q, std::uint64_t seq, bool sync = false) {
    Op op;
    op.kind = OpKind::Signal;
    op.flags = sync ? kSignalSynchronous : 0;
    op.peer = dst;
    op.queue = q;
    op.value = seq;
    ops.push_back(op);
    return *this;
  }
  Prog& wait(ReceiveToken t) { return token_op(OpKind::Wait, t); }
  Prog& snapshot(ReceiveToken t) { return token_op(OpKind::Snapshot, t); }
  Prog& wait_ack(Rank receiver, QueueId q, std::uint64_t seq) {
    Op op;
    op.kind = OpKind::WaitAck;
    op.peer = receiver;
    op.queue = q;
    op.value = seq;
    ops.push_back(op);
    return *this;
  }
  Prog& wait_ack(const SendToken& t) { return wait_ack(t.dst, t.queue, t.seq); }
  // The signal part alone (a non-blocking initiation); `flags` are CollectiveFlags.
  Prog& contribute(const CollectiveRef& c, std::uint16_t flags = 0) {
    coll_op(OpKind::CollectiveContribute, c);
    ops.back().flags = flags;
    return *this;
  }
  Prog& complete(const CollectiveRef& c) { return coll_op(OpKind::CollectiveComplete, c); }
  // A blocking collective: one call contributes and completes, which lets
  // the engine use the sparse all-to-all contribution.
  Prog& collective(const CollectiveRef& c) {
    coll_op(OpKind::CollectiveContribute, c);
    ops.back().flags = kCollectiveBlocking;
    return complete(c);
  }
  // A lock held at `deposition`, named `resource` there.
  Prog& acquire(Rank deposition, std::uint64_t resource, bool shared = false) {
    return resource_op(OpKind::Acquire, deposition, resource, shared);
  }
  Prog& release(Rank deposition, std::uint64_t resource, bool shared = false) {
    return resource_op(OpKind::Release, deposition, resource, shared);
  }

 private:
  Prog& resource_op(OpKind k, Rank deposition, std::uint64_t resource, bool shared) {
    Op op;
    op.kind = k;
    op.flags = shared ? kResourceShared : 0;
    op.peer = deposition;
    op.queue = QueueId{resource, 0};
    ops.push_back(op);
    return *this;
  }
  Prog& token_op(OpKind k, ReceiveToken t) {
    Op op;
    op.kind = k;
    op.value = t.value;
    ops.push_back(op);
    return *this;
  }
  Prog& coll_op(OpKind k, const CollectiveRef& c) {
    Op op;
    op.kind = k;
    op.collective = c;
    ops.push_back(op);
    return *this;
  }
};

inline CollectiveRef coll(GroupId g, std::uint64_t instance,
                          CollectiveKind kind = CollectiveKind::AllToAll, Rank root = Rank{0}) {
  CollectiveRef c;
  c.group = g;
  c.instance = instance;
  c.kind = kind;
  c.root = root;
  return c;
}

// ---------------------------------------------------------------------------
// Locks as their depositions handled them
//
// Which acquisition a deposition grants first is decided at run time, by
// the order requests arrive; that order legitimately depends on timing, so
// the reference model cannot derive it and takes it from the run. It is read
// off the engines' own messages: a request counts when the deposition handles
// it (its delivery), a grant when the deposition sends it, a release when the
// deposition handles it. Grants are sent from within those handlers, so the
// log is each deposition's exact order of decisions. (The order in which
// acquisitions complete at the requesters would not do: shared grants sent in
// one order may complete in another, and it says nothing about overlap.)

struct LockEvent {
  enum class Kind : std::uint8_t { Request, Grant, Release };
  Kind kind{};
  std::uint32_t deposition = 0;
  std::uint64_t resource = 0;
  std::uint32_t rank = 0;    // requester, grantee or releaser
  std::uint64_t number = 0;  // the requester's acquisition number (Request, Grant)
  bool shared = false;
};
using LockKey = std::pair<std::uint32_t, std::uint64_t>;  // deposition, resource
struct GrantRecord {
  std::uint32_t to = 0;
  bool shared = false;
};
// Per lock, the grants in the order the deposition made them.
using GrantOrder = std::map<LockKey, std::vector<GrantRecord>>;

inline GrantOrder grant_order(const std::vector<LockEvent>& log) {
  GrantOrder out;
  for (const LockEvent& e : log)
    if (e.kind == LockEvent::Kind::Grant)
      out[{e.deposition, e.resource}].push_back(GrantRecord{e.rank, e.shared});
  return out;
}

inline std::string lock_name(const LockKey& k) {
  return "resource " + std::to_string(k.second) + " at rank " + std::to_string(k.first);
}

// "" if the log keeps the lock rules (docs/clock-rules.md): an exclusive
// grant overlaps no other and overtakes no earlier request; a shared grant
// needs only that no exclusive holder exists (it may pass waiting exclusive
// requests); and a request that can be granted is granted before the
// deposition handles anything else for that lock (so shared grants run side
// by side). With `finished`, nothing may still be held or waiting.
inline std::string check_lock_log(const std::vector<LockEvent>& log, bool finished = true) {
  struct Request {
    std::uint32_t rank;
    std::uint64_t number;
    bool shared;
  };
  struct State {
    std::deque<Request> waiting;
    std::multiset<std::uint32_t> shared_holders;
    std::optional<std::uint32_t> exclusive;
  };
  // A waiting request the deposition should have granted already.
  auto grantable = [](const State& s) {
    if (s.waiting.empty() || s.exclusive) return false;
    if (s.shared_holders.empty()) return true;
    for (const Request& q : s.waiting)
      if (q.shared) return true;
    return false;
  };
  std::map<LockKey, State> locks;
  for (std::size_t i = 0; i < log.size(); ++i) {
    const LockEvent& e = log[i];
    const LockKey key{e.deposition, e.resource};
    State& s = locks[key];
    const std::string at = "lock log " + std::to_string(i) + ", " + lock_name(key) + ", rank " +
                           std::to_string(e.rank) + ": ";
    switch (e.kind) {
      case LockEvent::Kind::Request:
        if (grantable(s)) return at + "arrived while a grantable request was left waiting";
        s.waiting.push_back(Request{e.rank, e.number, e.shared});
        break;
      case LockEvent::Kind::Grant: {
        auto it = std::find_if(s.waiting.begin(), s.waiting.end(), [&](const Request& q) {
          return q.rank == e.rank && q.number == e.number;
        });
        if (it == s.waiting.end()) return at + "granted without a request";
        if (it->shared != e.shared) return at + "granted in the other mode";
        if (!e.shared && it != s.waiting.begin())
          return at + "granted acquisition " + std::to_string(e.number) + " ahead of rank " +
                 std::to_string(s.waiting.front().rank) + "'s earlier request " +
                 std::to_string(s.waiting.front().number);
        if (s.exclusive)
          return at + "granted while rank " + std::to_string(*s.exclusive) + " holds it exclusively";
        if (!e.shared && !s.shared_holders.empty())
          return at + "granted exclusively while " + std::to_string(s.shared_holders.size()) +
                 " shared holder(s) hold it";
        s.waiting.erase(it);
        if (e.shared)
          s.shared_holders.insert(e.rank);
        else
          s.exclusive = e.rank;
        break;
      }
      case LockEvent::Kind::Release:
        if (grantable(s)) return at + "released while a grantable request was left waiting";
        if (e.shared) {
          auto it = s.shared_holders.find(e.rank);
          if (it == s.shared_holders.end()) return at + "a shared release without holding it";
          s.shared_holders.erase(it);
        } else {
          if (s.exclusive != e.rank) return at + "an exclusive release without holding it";
          s.exclusive.reset();
        }
        break;
    }
  }
  for (const auto& [key, s] : locks) {
    if (grantable(s)) return lock_name(key) + ": a grantable request was never granted";
    if (!finished) continue;
    if (!s.waiting.empty())
      return lock_name(key) + ": " + std::to_string(s.waiting.size()) + " request(s) never granted";
    if (s.exclusive || !s.shared_holders.empty()) return lock_name(key) + ": still held";
  }
  return "";
}

// How many clocks each deposition legitimately keeps for its locks once all
// are released: the last exclusive release, and the maximum of the shared
// releases since (while there is one); none for a retired lock.
inline std::map<std::uint32_t, std::size_t> lock_clocks_kept(const std::vector<LockEvent>& log,
                                                           const std::set<LockKey>& retired = {}) {
  std::map<LockKey, std::pair<bool, bool>> state;  // exclusive release seen, shared since
  for (const LockEvent& e : log) {
    if (e.kind != LockEvent::Kind::Release) continue;
    auto& [exclusive, shared] = state[{e.deposition, e.resource}];
    if (e.shared) {
      shared = true;
    } else {
      exclusive = true;
      shared = false;
    }
  }
  std::map<std::uint32_t, std::size_t> out;
  for (const auto& [key, st] : state)
    if (!retired.count(key)) out[key.first] += (st.first ? 1 : 0) + (st.second ? 1 : 0);
  return out;
}

// ---------------------------------------------------------------------------
// Reference model: the clock rules applied sequentially, with the matching
// known up front. Collectives are full max-exchanges among the participants.
// Locks are granted in the order the run's depositions chose (GrantOrder).

class ReferenceModel {
 public:
  explicit ReferenceModel(std::uint32_t n) : n_(n), programs_(n) {}

  void program(Rank r, const Prog& p) { programs_[r.value].push_back(p); }
  // The n-th receive bound on (src, queue) and not dropped takes the n-th signal.
  void bind(Rank r, ReceiveToken t, Rank src, QueueId q) {
    bindings_[{r.value, t.value}] = Binding{src, q, 0};
    order_[std::make_tuple(r.value, src.value, q.a, q.b)].push_back(t.value);
  }
  void drop(Rank r, ReceiveToken t) {
    dropped_.insert({r.value, t.value});
    auto it = bindings_.find({r.value, t.value});
    if (it == bindings_.end()) return;
    auto& v =
        order_[std::make_tuple(r.value, it->second.src.value, it->second.q.a, it->second.q.b)];
    v.erase(std::remove(v.begin(), v.end(), t.value), v.end());
    bindings_.erase(it);
  }
  // MPI's non-overtaking rule for receives: `later` matched after `earlier`,
  // so a synchronous answer from `later` carries the message `earlier`
  // matched and what `earlier`'s answer carries beyond its own posting.
  void follow(Rank r, ReceiveToken later, ReceiveToken earlier) {
    follows_[{r.value, later.value}].push_back(earlier.value);
  }
  // `second_side`: where the second side of a two-sided group starts (0: one side).
  void group(GroupId g, std::span<const Rank> members, std::uint32_t second_side = 0) {
    groups_[g.value] = Group{std::vector<Rank>(members.begin(), members.end()), second_side};
  }

  // Clocks of every clocked call, per rank; throws if the programs cannot all
  // finish (a test bug: the scenario itself deadlocks, or `grants` misses or
  // misorders a grant). Acquisitions are granted in the order of `grants`.
  std::vector<std::vector<Clock>> clocks(const GrantOrder& grants = {}) const {
    State s(n_);
    s.grants = &grants;
    bool progress = true;
    while (progress) {
      progress = false;
      for (std::uint32_t r = 0; r < n_; ++r) progress |= advance(s, r);
    }
    for (std::uint32_t r = 0; r < n_; ++r)
      if (s.prog[r] < programs_[r].size())
        throw std::logic_error("reference model: rank " + std::to_string(r) +
                               " cannot finish program " + std::to_string(s.prog[r]) + " op " +
                               std::to_string(s.op[r]));
    return s.out;
  }

 private:
  struct Group {
    std::vector<Rank> members;
    std::uint32_t second_side = 0;
  };
  struct Binding {
    Rank src;
    QueueId q;
    std::uint64_t pos;
  };
  using MsgKey = std::tuple<std::uint32_t, std::uint32_t, std::uint64_t, std::uint64_t,
                            std::uint64_t>;  // src, dst, queue, position
  // A lock as the rules see it: who holds it now, the last exclusive release
  // and the maximum of the shared releases since.
  struct Lock {
    std::size_t next = 0;  // position in the grant order of the next grant
    std::uint32_t shared_holders = 0;
    bool exclusive = false;
    std::optional<Clock> exclusive_release;
    std::optional<Clock> shared_since;
  };
  struct State {
    explicit State(std::uint32_t n)
        : clock(n, Clock(n, 0)), prog(n, 0), op(n, 0), started(n, false), out(n) {}
    std::vector<Clock> clock;
    std::vector<std::size_t> prog, op;
    std::vector<bool> started;
    std::map<MsgKey, Clock> deposits, answers;
    std::map<MsgKey, std::uint64_t> answer_token;  // the receive that gave the answer
    std::map<std::pair<std::uint64_t, std::uint64_t>, std::map<std::uint32_t, Clock>> contrib;
    std::vector<std::vector<Clock>> out;
    const GrantOrder* grants = nullptr;
    std::map<LockKey, Lock> locks;
  };

  static void merge(Clock& into, const Clock& from) {
    for (std::size_t i = 0; i < into.size(); ++i) into[i] = std::max(into[i], from[i]);
  }
  std::optional<Binding> binding(std::uint32_t r, std::uint64_t token) const {
    auto it = bindings_.find({r, token});
    if (it == bindings_.end()) return std::nullopt;
    Binding b = it->second;
    const auto& v = order_.at(std::make_tuple(r, b.src.value, b.q.a, b.q.b));
    b.pos = static_cast<std::uint64_t>(std::find(v.begin(), v.end(), token) - v.begin()) + 1;
    return b;
  }
  bool is_dropped(std::uint32_t r, std::uint64_t token) const {
    return dropped_.count({r, token}) != 0;
  }
  // What the receives `token` follows bring to its answer; false while a
  // message among them has not been signalled yet.
  bool carry(const State& s, std::uint32_t r, std::uint64_t token, Clock& into) const {
    auto it = follows_.find({r, token});
    if (it == follows_.end()) return true;
    for (const std::uint64_t e : it->second) {
      if (is_dropped(r, e)) continue;
      const auto b = binding(r, e);
      if (!b) return false;
      auto d = s.deposits.find({b->src.value, r, b->q.a, b->q.b, b->pos});
      if (d == s.deposits.end()) return false;
      merge(into, d->second);
      if (!carry(s, r, e, into)) return false;
    }
    return true;
  }

  bool advance(State& s, std::uint32_t r) const {
    bool any = false;
    while (s.prog[r] < programs_[r].size()) {
      const Prog& p = programs_[r][s.prog[r]];
      if (!s.started[r]) {
        s.started[r] = true;
        if (p.clocked) ++s.clock[r][r];
      }
      while (s.op[r] < p.ops.size()) {
        if (!exec(s, r, p.ops[s.op[r]])) return any;
        ++s.op[r];
        any = true;
      }
      if (p.clocked) s.out[r].push_back(s.clock[r]);
      ++s.prog[r];
      s.op[r] = 0;
      s.started[r] = false;
      any = true;
    }
    return any;
  }

  bool exec(State& s, std::uint32_t r, const Op& op) const {
    Clock& c = s.clock[r];
    switch (op.kind) {
      case OpKind::Signal:
        s.deposits[{r, op.peer.value, op.queue.a, op.queue.b, op.value}] = c;
        return true;
      case OpKind::Wait: {
        if (is_dropped(r, op.value)) return true;
        const auto b = binding(r, op.value);
        if (!b) return false;
        auto it = s.deposits.find({b->src.value, r, b->q.a, b->q.b, b->pos});
        if (it == s.deposits.end()) return false;
        merge(c, it->second);
        return true;
      }
      case OpKind::Snapshot: {
        const auto b = binding(r, op.value);
        if (b) {
          const MsgKey key{b->src.value, r, b->q.a, b->q.b, b->pos};
          s.answers.emplace(key, c);
          s.answer_token.emplace(key, op.value);
        }
        return true;
      }
      case OpKind::WaitAck: {
        const MsgKey key{r, op.peer.value, op.queue.a, op.queue.b, op.value};
        auto it = s.answers.find(key);
        if (it == s.answers.end()) return false;
        Clock answer = it->second;
        if (!carry(s, op.peer.value, s.answer_token.at(key), answer)) return false;
        merge(c, answer);
        return true;
      }
      case OpKind::CollectiveContribute:
      case OpKind::CollectiveComplete: {
        const CollectiveRef& k = op.collective;
        auto g = groups_.find(k.group.value);
        if (g == groups_.end()) throw std::logic_error("reference model: unknown group");
        const std::vector<Rank>& members = g->second.members;
        const auto me = static_cast<std::size_t>(
            std::find(members.begin(), members.end(), Rank{r}) - members.begin());
        if (me == members.size()) throw std::logic_error("reference model: not a member");
        // Two-sided groups: [0, split) is the first side, [split, n) the second.
        const std::size_t split = g->second.second_side;
        const bool first_side = me < split;
        auto& contrib = s.contrib[{k.group.value, k.instance}];
        const bool root = k.root.value == r;
        if (op.kind == OpKind::CollectiveContribute) {
          bool signals = false;
          switch (k.kind) {
            case CollectiveKind::AllToAll:
            case CollectiveKind::Bipartite:
              signals = true;
              break;
            case CollectiveKind::OneToAll:
              signals = root;
              break;
            case CollectiveKind::AllToOne:
              signals = !root;
              break;
            case CollectiveKind::Prefix:
              signals = me + 1 < members.size();  // to the members above it
              break;
          }
          if (signals) contrib[r] = c;
          return true;
        }
        std::vector<std::uint32_t> from;  // whose contributions this completion merges
        switch (k.kind) {
          case CollectiveKind::AllToAll:
            for (Rank m : members) from.push_back(m.value);
            break;
          case CollectiveKind::OneToAll:
            if (!root) from.push_back(k.root.value);
            break;
          case CollectiveKind::AllToOne:
            if (root)
              for (Rank m : members)
                if (m.value != r) from.push_back(m.value);
            break;
          case CollectiveKind::Prefix:
            for (std::size_t i = 0; i < me; ++i) from.push_back(members[i].value);
            break;
          case CollectiveKind::Bipartite:
            if (split == 0 || split >= members.size())
              throw std::logic_error("reference model: a two-sided collective on one side");
            for (std::size_t i = first_side ? split : 0; i < (first_side ? members.size() : split);
                 ++i)
              from.push_back(members[i].value);
            break;
        }
        for (std::uint32_t m : from)
          if (!contrib.count(m)) return false;
        for (std::uint32_t m : from) merge(c, contrib[m]);
        return true;
      }
      case OpKind::Acquire:
        return acquire(s, r, op);
      case OpKind::Release:
        release(s, r, op);
        return true;
      case OpKind::Retire:
      case OpKind::EndLeases:
      case OpKind::SendCompleted:
        return true;  // only frees the deposition's memory / hands locks back
      case OpKind::FlagWrite:
      case OpKind::FlagValue:
      case OpKind::FlagWait:
        // Which writes a wait merges follows the order of registrations,
        // decided at run time: tests/unit/test_vclock_flags.cpp states the
        // clocks itself.
        throw std::logic_error("reference model: flag ops are not modelled");
    }
    return true;
  }

  // Granted when the grant order says it is this rank's turn and the lock is
  // free for the mode; a rank's acquisitions of one lock run one after the
  // other, so its j-th grant there is its j-th acquisition of it.
  bool acquire(State& s, std::uint32_t r, const Op& op) const {
    const LockKey key{op.peer.value, op.queue.a};
    const bool shared = (op.flags & kResourceShared) != 0;
    Lock& l = s.locks[key];
    auto it = s.grants->find(key);
    if (it == s.grants->end() || l.next >= it->second.size()) return false;
    const GrantRecord& g = it->second[l.next];
    if (g.to != r) return false;
    if (g.shared != shared)
      throw std::logic_error("reference model: rank " + std::to_string(r) + " was granted " +
                             lock_name(key) + " in the other mode");
    if (l.exclusive || (!shared && l.shared_holders != 0)) return false;
    Clock& c = s.clock[r];
    // Exclusive: the previous exclusive release and every shared one since;
    // shared: the previous exclusive release.
    if (l.exclusive_release) merge(c, *l.exclusive_release);
    if (!shared && l.shared_since) merge(c, *l.shared_since);
    ++l.next;
    if (shared)
      ++l.shared_holders;
    else
      l.exclusive = true;
    return true;
  }

  void release(State& s, std::uint32_t r, const Op& op) const {
    const LockKey key{op.peer.value, op.queue.a};
    Lock& l = s.locks[key];
    const Clock& c = s.clock[r];
    if (op.flags & kResourceShared) {
      if (l.shared_holders == 0)
        throw std::logic_error("reference model: a shared release of " + lock_name(key) +
                               " without a shared holder");
      --l.shared_holders;
      if (!l.shared_since) l.shared_since = Clock(n_, 0);
      merge(*l.shared_since, c);
    } else {
      if (!l.exclusive)
        throw std::logic_error("reference model: an exclusive release of " + lock_name(key) +
                               " without the exclusive holder");
      l.exclusive = false;
      l.exclusive_release = c;
      l.shared_since.reset();
    }
  }

  std::uint32_t n_;
  std::vector<std::vector<Prog>> programs_;
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint64_t, std::uint64_t>,
           std::vector<std::uint64_t>>
      order_;  // (rank, src, queue) -> tokens in binding order
  std::map<std::pair<std::uint32_t, std::uint64_t>, Binding> bindings_;
  std::set<std::pair<std::uint32_t, std::uint64_t>> dropped_;
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::vector<std::uint64_t>> follows_;
  std::map<std::uint64_t, Group> groups_;
};

// ---------------------------------------------------------------------------
// The simulated job

class EngineSim {
 public:
  struct Submitted {
    std::uint64_t event_seq = 0;
    std::int64_t call_index = -1;  // position among the rank's clocked calls, -1 if unclocked
  };

  // `options` go to every engine. VCX_TEST_DIFF_SLOTS=K in the environment
  // (unless `options` set vclock.diff-bytes) gives every engine room for K
  // baselines each way (clock_baselines.h): 0 turns differential clocks
  // off, 1 makes engines grant baselines to one peer at a time. ctest runs
  // the engine tests so, next to the default (a baseline for every peer).
  EngineSim(std::uint32_t n, std::uint64_t delivery_seed, const Options& options = {},
            const std::string& plugin_dir = VCX_PLUGIN_DIR)
      : net_(n, delivery_seed), ref_(n) {
    net_.set_tap([this](bool delivered, Rank src, Rank dst, ToolPart part,
                        std::span<const std::uint8_t> bytes) {
      log_lock_message(delivered, src, dst, part, bytes);
    });
    lib_ = load_plugin(plugin_dir, PluginKind::Engine, "vclock");
    nodes_.reserve(n);
    for (std::uint32_t r = 0; r < n; ++r) {
      auto node = std::make_unique<Node>();
      node->transport = std::make_unique<SimTransport>(net_, Rank{r}, n);
      node->host = std::make_unique<SimHost>(Rank{r}, n, *node->transport);
      node->host->options_ = engine_options(n, options);
      std::string err;
      node->plugin = lib_.descriptor->create(*node->host, &err);
      if (!node->plugin) throw std::runtime_error("creating the vclock engine: " + err);
      node->engine = node->plugin->engine();
      if (!node->engine) throw std::runtime_error("the vclock plugin is not an engine");
      node->engine->add_observer(&node->rec);
      node->engine->control().add_pending_receives(&node->pending);
      nodes_.push_back(std::move(node));
    }
  }
  static Options engine_options(std::uint32_t n, const Options& given) {
    Options o = given;
    const char* slots = std::getenv("VCX_TEST_DIFF_SLOTS");
    if (slots && *slots && !o.get("vclock.diff-bytes"))
      o.set("vclock.diff-bytes",
            std::to_string(2 * std::stoull(slots) * n * sizeof(ClockValue)));
    return o;
  }
  ~EngineSim() {
    for (auto& n : nodes_) delete n->plugin;
    nodes_.clear();
    unload_plugin(lib_);
  }
  EngineSim(const EngineSim&) = delete;
  EngineSim& operator=(const EngineSim&) = delete;

  std::uint32_t size() const { return static_cast<std::uint32_t>(nodes_.size()); }
  ExchangeEngine& engine(std::uint32_t r) { return *nodes_.at(r)->engine; }
  ExchangeControl& control(std::uint32_t r) { return nodes_.at(r)->engine->control(); }
  SimHost& host(std::uint32_t r) { return *nodes_.at(r)->host; }
  SimPending& pending(std::uint32_t r) { return nodes_.at(r)->pending; }
  const std::vector<Recorder::Call>& calls(std::uint32_t r) const {
    return nodes_.at(r)->rec.calls;
  }
  Network& net() { return net_; }
  ReferenceModel& reference() { return ref_; }
  // Every lock request, grant and release as the depositions handled them.
  const std::vector<LockEvent>& lock_log() const { return lock_log_; }

  // ---- control calls, mirrored into the reference model ----
  void register_group(std::uint32_t r, GroupId g, std::span<const Rank> members,
                      std::uint32_t second_side = 0) {
    control(r).register_group(g, members, second_side);
    ref_.group(g, members, second_side);
  }
  void register_group_everywhere(GroupId g, std::span<const Rank> members,
                                 std::uint32_t second_side = 0) {
    for (Rank m : members) register_group(m.value, g, members, second_side);
  }
  ReceiveToken new_receive(std::uint32_t r, bool answers_synchronous = true) {
    return control(r).new_receive(answers_synchronous);
  }
  void bind(std::uint32_t r, ReceiveToken t, std::uint32_t src, QueueId q) {
    control(r).bind_receive(t, Rank{src}, q);
    ref_.bind(Rank{r}, t, Rank{src}, q);
  }
  void drop(std::uint32_t r, ReceiveToken t) {
    control(r).drop_receive(t);
    ref_.drop(Rank{r}, t);
  }
  void follow(std::uint32_t r, ReceiveToken later, ReceiveToken earlier) {
    control(r).order_receive_after(later, earlier);
    ref_.follow(Rank{r}, later, earlier);
  }
  SendToken reserve_send(std::uint32_t r, std::uint32_t dst, QueueId q) {
    return control(r).reserve_send(Rank{dst}, q);
  }

  // ---- programs ----
  Submitted submit(std::uint32_t r, const Prog& p, bool needs_reply = false) {
    Node& n = *nodes_.at(r);
    CallProgram cp;
    cp.reset(Model::Example, p.call, n.event_seq + 1);
    if (p.clocked) cp.mark_clocked();
    for (const Op& op : p.ops) cp.push(op);
    return enqueue(r, cp, p, needs_reply);
  }
  // A program a translator made (its model and call kept), mirrored into the
  // reference model like the others. Renumbered in this rank's event order,
  // which is what replies are checked against.
  Submitted submit_program(std::uint32_t r, const CallProgram& made, bool needs_reply = false) {
    Prog p{made.call(), made.clocked(), std::vector<Op>(made.ops().begin(), made.ops().end())};
    CallProgram cp;
    cp.reset(made.model(), made.call(), nodes_.at(r)->event_seq + 1);
    if (made.clocked()) cp.mark_clocked();
    for (const Op& op : made.ops()) cp.push(op);
    return enqueue(r, cp, p, needs_reply);
  }

  // A standard or synchronous blocking send (Signal, plus WaitAck if sync).
  Submitted send(std::uint32_t s, std::uint32_t d, QueueId q, bool sync = false,
                 bool needs_reply = false) {
    const SendToken t = reserve_send(s, d, q);
    Prog p = Prog::clocked_call(10);
    p.signal(Rank{d}, q, t.seq, sync);
    if (sync) p.wait_ack(t);
    return submit(s, p, needs_reply);
  }
  // The initiation of a non-blocking send; the token completes a synchronous one.
  std::pair<Submitted, SendToken> isend(std::uint32_t s, std::uint32_t d, QueueId q,
                                        bool sync = false) {
    const SendToken t = reserve_send(s, d, q);
    Prog p = Prog::clocked_call(11);
    p.signal(Rank{d}, q, t.seq, sync);
    return {submit(s, p), t};
  }
  Submitted wait_acks(std::uint32_t s, const std::vector<SendToken>& ts) {
    Prog p = Prog::clocked_call(12);
    for (const auto& t : ts) p.wait_ack(t);
    return submit(s, p);
  }
  ReceiveToken post(std::uint32_t r, std::uint32_t src, QueueId q) {
    const ReceiveToken t = new_receive(r);
    bind(r, t, src, q);
    return t;
  }
  // A blocking receive: merge, then answer a synchronous sender.
  Submitted recv(std::uint32_t r, std::uint32_t src, QueueId q, bool needs_reply = false) {
    const ReceiveToken t = post(r, src, q);
    return submit(r, Prog::clocked_call(20).wait(t).snapshot(t), needs_reply);
  }
  // Posting a non-blocking receive: not clocked, answers with the clock of now.
  ReceiveToken irecv(std::uint32_t r, std::uint32_t src, QueueId q) {
    const ReceiveToken t = post(r, src, q);
    submit(r, Prog::unclocked(21).snapshot(t));
    return t;
  }
  Submitted wait_all(std::uint32_t r, const std::vector<ReceiveToken>& ts,
                     bool needs_reply = false) {
    Prog p = Prog::clocked_call(22);
    for (auto t : ts) p.wait(t);
    return submit(r, p, needs_reply);
  }
  Submitted collective(std::uint32_t r, const CollectiveRef& c, bool needs_reply = false) {
    return submit(r, Prog::clocked_call(30).collective(c), needs_reply);
  }
  Submitted local(std::uint32_t r) { return submit(r, Prog::clocked_call(40)); }
  // A lock and an unlock as one call each (MPI_Win_lock, MPI_Win_unlock).
  Submitted lock(std::uint32_t r, std::uint32_t deposition, std::uint64_t resource,
                 bool shared = false, bool needs_reply = false) {
    return submit(r, Prog::clocked_call(50).acquire(Rank{deposition}, resource, shared),
                  needs_reply);
  }
  Submitted unlock(std::uint32_t r, std::uint32_t deposition, std::uint64_t resource,
                   bool shared = false) {
    return submit(r, Prog::clocked_call(51).release(Rank{deposition}, resource, shared));
  }

  // Applications that wait for their tools at every call (as with stalling,
  // only stricter): a rank's next program reaches its engine once the engine
  // finished the previous ones. Without it, programs reach the engines at
  // once, except after a lock call, which an application passes only once the
  // deposition granted it. Tests whose ranks lock and also synchronise
  // otherwise need it: an application cannot pass a barrier before the
  // others reached it, nor request a lock after it before that.
  void set_applications_wait(bool on) { applications_wait_ = on; }

  // ---- driving ----
  void run_all() {
    for (auto& n : nodes_) {
      n->engine->run();
      while (!n->backlog.empty() && feed(*n)) n->engine->run();
    }
  }
  bool step() {
    if (!net_.deliver_one()) return false;
    run_all();
    return true;
  }
  // Runs until no message is in flight. Throws past `max` deliveries.
  void drain(std::uint64_t max = 5'000'000) {
    run_all();
    std::uint64_t k = 0;
    while (step())
      if (++k > max)
        throw std::runtime_error("drain: more than " + std::to_string(max) + " messages");
  }
  bool all_idle() const {
    for (const auto& n : nodes_)
      if (!n->engine->idle()) return false;
    return true;
  }

  // ---- checks ----
  // "" if every engine recorded exactly the reference model's clocks.
  std::string compare_with_reference() const {
    std::vector<std::vector<Clock>> want;
    try {
      want = ref_.clocks(grant_order(lock_log_));
    } catch (const std::exception& e) {
      return e.what();
    }
    for (std::uint32_t r = 0; r < size(); ++r) {
      const auto& got = nodes_[r]->rec.calls;
      for (std::size_t i = 0; i < std::max(got.size(), want[r].size()); ++i) {
        const std::string where = "rank " + std::to_string(r) + " call " + std::to_string(i);
        if (i >= got.size()) return where + ": not recorded (expected " + str(want[r][i]) + ")";
        if (i >= want[r].size()) return where + ": unexpected call " + str(got[i].clock);
        if (got[i].seq != i) return where + ": recorded with seq " + std::to_string(got[i].seq);
        if (got[i].rank.value != r) return where + ": recorded with another rank";
        if (got[i].clock != want[r][i])
          return where + ": clock " + str(got[i].clock) + ", expected " + str(want[r][i]);
      }
    }
    return "";
  }

  // "" if rank r's replies came in program order, only for programs that asked,
  // and only once their program finished (all its clocked calls recorded).
  std::string check_replies(std::uint32_t r) const {
    const Node& n = *nodes_.at(r);
    std::vector<const ProgramInfo*> wanted;
    for (const auto& p : n.programs)
      if (p.needs_reply) wanted.push_back(&p);
    const auto& got = n.host->replies;
    if (got.size() > wanted.size()) return "rank " + std::to_string(r) + ": too many replies";
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (got[i] != wanted[i]->event_seq)
        return "rank " + std::to_string(r) + ": reply " + std::to_string(i) + " is for event " +
               std::to_string(got[i]) + ", expected " + std::to_string(wanted[i]->event_seq);
      if (n.rec.calls.size() < wanted[i]->clocked_through)
        return "rank " + std::to_string(r) + ": event " + std::to_string(got[i]) +
               " answered before its program finished";
    }
    if (n.engine->idle() && got.size() != wanted.size())
      return "rank " + std::to_string(r) + ": idle with replies missing";
    return "";
  }
  std::string check_all_replies() const {
    for (std::uint32_t r = 0; r < size(); ++r)
      if (auto e = check_replies(r); !e.empty()) return e;
    return "";
  }

  // "" if rank r's engine holds no pooled clock, receive or collective state.
  // Reads the engine's own diagnostics: the plugin is the vclock engine, whose
  // class this test sees through its header.
  std::string leaks(std::uint32_t r) const {
    const auto& e = static_cast<const vclock::VclockEngine&>(*nodes_.at(r)->engine);
    std::string out;
    // A deposition keeps the releases its locks' next grants will carry.
    const auto kept = lock_clocks_kept(lock_log_, retired_);
    const std::size_t may_keep = kept.count(r) ? kept.at(r) : 0;
    if (e.pooled_clocks_in_use() != may_keep)
      out += " pooled clocks " + std::to_string(e.pooled_clocks_in_use()) + " (locks keep " +
             std::to_string(may_keep) + ")";
    if (e.live_receives() != 0) out += " receives " + std::to_string(e.live_receives());
    if (e.live_collectives() != 0) out += " collectives " + std::to_string(e.live_collectives());
    if (e.pending_grants() != 0) out += " grants " + std::to_string(e.pending_grants());
    return out.empty() ? "" : "rank " + std::to_string(r) + " still holds" + out;
  }
  std::string check_no_leaks() const {
    for (std::uint32_t r = 0; r < size(); ++r)
      if (auto e = leaks(r); !e.empty()) return e;
    return "";
  }

  // Everything at once, for the end of a scenario.
  std::string check_finished() const {
    if (!all_idle()) {
      for (std::uint32_t r = 0; r < size(); ++r)
        if (!nodes_[r]->engine->idle())
          return "rank " + std::to_string(r) + " not idle, blocked on " +
                 nodes_[r]->engine->blocked_on();
    }
    if (auto e = compare_with_reference(); !e.empty()) return e;
    if (auto e = check_locks(); !e.empty()) return e;
    if (auto e = check_all_replies(); !e.empty()) return e;
    return check_no_leaks();
  }

  // "" if every deposition kept the lock rules (check_lock_log).
  std::string check_locks(bool finished = true) const {
    return check_lock_log(lock_log_, finished);
  }

 private:
  Submitted enqueue(std::uint32_t r, const CallProgram& cp, const Prog& p, bool needs_reply) {
    Node& n = *nodes_.at(r);
    ++n.event_seq;
    // An application does not go past a lock call before its deposition
    // granted it: what it calls after that reaches the engine only then.
    n.backlog.push_back(Backlogged{cp, needs_reply});
    feed(n);
    for (const Op& op : cp.ops())
      if (op.kind == OpKind::Retire) retired_.insert(LockKey{r, op.queue.a});
    ref_.program(Rank{r}, p);
    Submitted s{n.event_seq, p.clocked ? static_cast<std::int64_t>(n.clocked++) : -1};
    n.programs.push_back(ProgramInfo{s.event_seq, needs_reply, n.clocked});
    return s;
  }

  void log_lock_message(bool delivered, Rank src, Rank dst, ToolPart part,
                        std::span<const std::uint8_t> bytes) {
    using vclock::MsgType;
    if (part != ToolPart::Exchange || bytes.size() < sizeof(vclock::P2PHeader)) return;
    vclock::P2PHeader h;
    std::memcpy(&h, bytes.data(), sizeof h);
    LockEvent e;
    if (delivered && h.type == MsgType::Acquire) {
      e.kind = LockEvent::Kind::Request;
      e.deposition = dst.value;
      e.rank = src.value;
    } else if (!delivered && h.type == MsgType::Grant) {
      e.kind = LockEvent::Kind::Grant;
      e.deposition = src.value;
      e.rank = dst.value;
    } else if (delivered && h.type == MsgType::Release) {
      e.kind = LockEvent::Kind::Release;
      e.deposition = dst.value;
      e.rank = src.value;
    } else {
      return;
    }
    e.resource = h.queue_a;
    e.number = h.seq;
    e.shared = (h.flags & kResourceShared) != 0;
    lock_log_.push_back(e);
  }

  struct Backlogged {
    CallProgram program;
    bool needs_reply;
  };
  struct Node;
  // Queues the node's held-back programs up to and including the next lock
  // call; true if any was queued.
  bool feed(Node& n) {
    bool fed = false;
    while (!n.backlog.empty() && n.engine->replies_allowed_through() >= n.last_lock_seq &&
           (!applications_wait_ || n.engine->idle())) {
      Backlogged& b = n.backlog.front();
      n.engine->enqueue(b.program, b.needs_reply);
      // Likewise past a flag write before its registration was granted.
      for (const Op& op : b.program.ops())
        if (op.kind == OpKind::Acquire || op.kind == OpKind::FlagWrite)
          n.last_lock_seq = b.program.event_seq();
      n.backlog.pop_front();
      fed = true;
    }
    return fed;
  }

  struct ProgramInfo {
    std::uint64_t event_seq;
    bool needs_reply;
    std::uint64_t clocked_through;  // clocked calls up to and including this program
  };
  struct Node {
    std::unique_ptr<SimTransport> transport;
    std::unique_ptr<SimHost> host;
    Plugin* plugin = nullptr;
    ExchangeEngine* engine = nullptr;
    Recorder rec;
    SimPending pending;
    std::uint64_t event_seq = 0;
    std::uint64_t clocked = 0;
    std::vector<ProgramInfo> programs;
    std::deque<Backlogged> backlog;  // programs the application has not got to yet
    std::uint64_t last_lock_seq = 0;
  };

  bool applications_wait_ = false;
  Network net_;
  ReferenceModel ref_;
  std::vector<LockEvent> lock_log_;
  std::set<LockKey> retired_;  // (deposition, resource) of every Retire submitted
  LoadedPlugin lib_;
  std::vector<std::unique_ptr<Node>> nodes_;
};

// What a translator under test is given as its ExchangeControl: rank r's
// engine control, with every group, binding and drop mirrored into the
// reference model, so that translated programs can be checked against it.
class MirrorControl final : public ExchangeControl {
 public:
  MirrorControl(EngineSim& sim, std::uint32_t r) : sim_(sim), r_(r) {}
  void register_group(GroupId id, std::span<const Rank> members,
                      std::uint32_t second_side = 0) override {
    sim_.register_group(r_, id, members, second_side);
  }
  ReceiveToken new_receive(bool answers_synchronous = true) override {
    return sim_.new_receive(r_, answers_synchronous);
  }
  void bind_receive(ReceiveToken t, Rank src, QueueId queue) override {
    sim_.bind(r_, t, src.value, queue);
  }
  void drop_receive(ReceiveToken t) override { sim_.drop(r_, t); }
  // Nobody waits for these; the reference model needs no record of them.
  void abandon_receive(ReceiveToken t) override { sim_.control(r_).abandon_receive(t); }
  // Holds change when a merge may happen, not what it merges.
  void hold_receive(ReceiveToken t) override { sim_.control(r_).hold_receive(t); }
  void release_hold(ReceiveToken t) override { sim_.control(r_).release_hold(t); }
  void discard_answer(const SendToken& t) override { sim_.control(r_).discard_answer(t); }
  void order_receive_after(ReceiveToken later, ReceiveToken earlier) override {
    sim_.follow(r_, later, earlier);
  }
  // Keeping changes how long the engine holds a clock, not what it merges.
  void keep_receive_order(ReceiveToken t) override { sim_.control(r_).keep_receive_order(t); }
  void end_receive_order(ReceiveToken t) override { sim_.control(r_).end_receive_order(t); }
  void add_pending_receives(const PendingReceives* p) override {
    sim_.control(r_).add_pending_receives(p);
  }
  SendToken reserve_send(Rank dst, QueueId queue) override {
    return sim_.control(r_).reserve_send(dst, queue);
  }

 private:
  EngineSim& sim_;
  std::uint32_t r_;
};

}  // namespace vcx::sim
