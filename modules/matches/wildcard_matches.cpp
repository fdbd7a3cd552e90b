#include "wildcard_matches.h"

#include <algorithm>

namespace vcx::matches {

WildcardMatches::WildcardMatches(Rank self, std::uint32_t world)
    : self_(self), world_(world), from_(world), last_entry_(world, 0) {}

void WildcardMatches::posted(const ReceivePostedNote& n) {
  Receive r;
  r.space = n.space;
  r.want_source = n.want_source;
  r.want_tag = n.want_tag;
  r.post_no = next_post_++;
  r.pc = n.pc;
  r.call = n.call;
  r.forced = n.forced != 0;
  if (n.want_source == kNoteAnySource || r.forced) {
    r.index = static_cast<std::int64_t>(wildcards_++);
    undecided_.push_back(n.token);
  }
  receives_[n.token] = std::move(r);
}

void WildcardMatches::bound(const ReceiveBoundNote& n) {
  auto it = receives_.find(n.token);
  if (it == receives_.end()) return;
  Receive& r = it->second;
  const QueueId q{n.queue_a, n.queue_b};
  Binds& b = binds_[QueueKey{n.source, q}];
  r.bound = true;
  r.source = n.source;
  r.queue = q;
  r.position = b.next++;
  b.tokens[r.position] = n.token;
  unbound_known_.erase(n.token);
}

void WildcardMatches::dropped(std::uint64_t token) {
  auto it = receives_.find(token);
  if (it == receives_.end()) return;
  const Receive& r = it->second;
  if (r.bound) {
    // Receives bound after it on its queue move up one place.
    Binds& b = binds_[QueueKey{r.source, r.queue}];
    b.tokens.erase(r.position);
    std::map<std::uint64_t, std::uint64_t> moved;
    for (auto& [pos, t] : b.tokens) {
      const std::uint64_t p = pos > r.position ? pos - 1 : pos;
      moved[p] = t;
      if (pos > r.position) {
        auto m = receives_.find(t);
        if (m != receives_.end()) m->second.position = p;
      }
    }
    b.tokens = std::move(moved);
    --b.next;
  }
  unbound_known_.erase(token);
  receives_.erase(it);  // it matched nothing: no receive's answer depends on it
}

void WildcardMatches::ordered(std::uint64_t later, std::uint64_t earlier) {
  auto it = receives_.find(later);
  if (it == receives_.end()) return;
  it->second.follows.push_back(earlier);
  if (auto e = receives_.find(earlier); e != receives_.end()) e->second.followed_by.push_back(later);
  // Known to have matched already: so is what it follows.
  if (it->second.k != kNever)
    mark_known(earlier, it->second.k, it->second.k_sent, it->second.known_at);
}

void WildcardMatches::completed(std::uint64_t token, ClockValue tick, bool sent,
                                std::uint64_t seq, std::uint16_t call) {
  auto it = receives_.find(token);
  if (it == receives_.end()) return;
  it->second.completed = true;
  it->second.completed_post = next_post_ - 1;
  it->second.completed_seq = seq;
  it->second.completed_call = call;
  mark_known(token, tick, sent, next_post_ - 1);
}

void WildcardMatches::mark_known(std::uint64_t token, ClockValue tick, bool sent,
                                 std::uint64_t at) {
  stack_.assign(1, token);
  while (!stack_.empty()) {
    const std::uint64_t t = stack_.back();
    stack_.pop_back();
    auto it = receives_.find(t);
    if (it == receives_.end()) continue;
    Receive& x = it->second;
    bool lowered = false;
    if (tick < x.k || (tick == x.k && x.k_sent && !sent)) {
      x.k = tick;
      x.k_sent = sent;
      lowered = true;
    }
    if (at < x.known_at) {
      x.known_at = at;
      lowered = true;
    }
    if (!lowered) continue;  // what it follows was marked at least as low then
    if (!x.bound) unbound_known_.insert(t);
    stack_.insert(stack_.end(), x.follows.begin(), x.follows.end());
  }
}

void WildcardMatches::signal(Rank source, QueueId queue, std::uint64_t position,
                             bool synchronous, ClockSpan clock) {
  if (source.value >= world_) return;
  if (source == self_ && to_self_in_flight_ > 0) --to_self_in_flight_;
  const ClockValue entry = self_.value < clock.size() ? clock[self_.value] : 0;
  last_entry_[source.value] = std::max(last_entry_[source.value], entry);
  // Signals no receive takes (annotations, collectives) only tell how far
  // their sender has come.
  if (queue.b >= kNoteTagLimit) return;
  Message m{queue, position, entry, false, synchronous, kNever, 0};
  if (free_slots_.empty()) {
    m.clock_slot = static_cast<std::uint32_t>(clocks_.size() / world_);
    clocks_.resize(clocks_.size() + world_);
  } else {
    m.clock_slot = free_slots_.back();
    free_slots_.pop_back();
  }
  ClockValue* kept = clocks_.data() + static_cast<std::size_t>(m.clock_slot) * world_;
  const std::size_t n = std::min<std::size_t>(clock.size(), world_);
  std::copy(clock.begin(), clock.begin() + static_cast<std::ptrdiff_t>(n), kept);
  std::fill(kept + n, kept + world_, ClockValue{0});
  from_[source.value].push_back(m);
  peak_messages_ = std::max(peak_messages_, ++messages_);
}

void WildcardMatches::sync_completed(Rank source, QueueId queue, std::uint64_t position,
                                     ClockValue from) {
  if (source.value >= world_) return;
  // Not kept: dropped already, no receive can need what it tells.
  if (Message* m = find_message(source.value, queue, position)) m->answered_from = from;
}

WildcardMatches::Message* WildcardMatches::find_message(std::uint32_t source, QueueId queue,
                                                        std::uint64_t position) {
  for (Message& m : from_[source])
    if (!m.gone && m.position == position && m.queue == queue) return &m;
  return nullptr;
}

void WildcardMatches::release(Message& m) {
  m.gone = true;
  free_slots_.push_back(m.clock_slot);
  --messages_;
}

std::uint64_t WildcardMatches::receiver(std::uint32_t source, QueueId queue,
                                        std::uint64_t position) const {
  auto b = binds_.find(QueueKey{source, queue});
  if (b == binds_.end()) return 0;
  auto t = b->second.tokens.find(position);
  return t == b->second.tokens.end() ? 0 : t->second;
}

bool WildcardMatches::matched_before(std::uint64_t x, std::uint64_t r_token, const Receive& r) {
  if (x == r_token || closure_.count(x) != 0) return true;
  auto it = receives_.find(x);
  // Forgotten receives were known to have matched before every undecided one.
  if (it == receives_.end()) return true;
  return it->second.known_at < r.post_no;
}

bool WildcardMatches::accepts(const Receive& r, std::uint64_t tag) {
  return r.want_tag == kNoteAnyTag ? tag < kNoteTagLimit
                                   : tag == static_cast<std::uint64_t>(r.want_tag);
}

bool WildcardMatches::try_decide(std::uint64_t token, Receive& r, bool final) {
  if (!r.completed || !r.bound) {
    if (final) ++unreported_;  // no result: its match is not known
    return final;
  }
  // The receives R was ordered after, transitively.
  closure_.clear();
  stack_.assign(r.follows.begin(), r.follows.end());
  while (!stack_.empty()) {
    const std::uint64_t t = stack_.back();
    stack_.pop_back();
    if (!closure_.insert(t).second) continue;
    auto it = receives_.find(t);
    if (it == receives_.end()) continue;
    if (!final && !it->second.bound) return false;  // which message it took is not known yet
    stack_.insert(stack_.end(), it->second.follows.begin(), it->second.follows.end());
  }
  if (!final) {
    // A receive known to have matched, message unknown: it may have taken a
    // candidate, or later turn out to be ordered after R (lowering k).
    for (const std::uint64_t t : unbound_known_) {
      const Receive& x = receives_.at(t);
      if (x.known_at < r.post_no || x.k <= r.k) return false;
    }
  }
  WildcardResult out;
  out.index = static_cast<std::uint64_t>(r.index);
  out.call = r.call;
  out.pc = r.pc;
  out.matched_source = r.source;
  out.completed_seq = r.completed_seq;
  out.completed_call = r.completed_call;
  out.known_tick = r.k;
  if (r.forced) {
    // A replay made it take its one source: it could match nothing else.
    results_.push_back(std::move(out));
    return true;
  }
  const bool knowers_complete = collect_knowers(token);
  for (std::uint32_t s = 0; s < world_; ++s) {
    if (s == r.source) continue;
    bool found = false;
    for (const Message& m : from_[s]) {
      if (m.gone || m.queue.a != r.space || !accepts(r, m.queue.b)) continue;
      const std::uint64_t x = receiver(s, m.queue, m.position);
      if (x != 0 && matched_before(x, token, r)) continue;
      found = true;
      if (m.entry < r.known_from() && unknown_to_knowers(m)) out.alternatives.push_back(s);
      break;
    }
    // Its first such message is still to come; sent after a send that
    // already knew R's match, it knows it too. This rank's own messages to
    // itself that are still to come are sent after R's completion (its
    // notes come after the calls before it ran).
    if (!found && !final) {
      if (s == self_.value ? to_self_in_flight_ > 0 : last_entry_[s] < r.known_from())
        return false;
    }
  }
  // What is still to be learnt of synchronous sends can only remove
  // alternatives.
  if (!final && !out.alternatives.empty() &&
      (!knowers_complete || may_follow_unbound(token, r)))
    return false;
  results_.push_back(std::move(out));
  return true;
}

bool WildcardMatches::collect_knowers(std::uint64_t token) {
  knowers_.clear();
  bool complete = true;
  // R and the receives ordered after it, transitively.
  followers_.clear();
  stack_.assign(1, token);
  while (!stack_.empty()) {
    const std::uint64_t t = stack_.back();
    stack_.pop_back();
    if (!followers_.insert(t).second) continue;
    auto it = receives_.find(t);
    if (it == receives_.end()) continue;
    const Receive& x = it->second;
    stack_.insert(stack_.end(), x.followed_by.begin(), x.followed_by.end());
    if (!x.bound) {
      complete = false;  // it may yet take a synchronous message
      continue;
    }
    const Message* m = find_message(x.source, x.queue, x.position);
    if (m == nullptr || !m->synchronous) continue;
    if (m->answered_from == kNever) {
      // Its sender's completion is still to be reported (or never will be:
      // without reports, or a send never waited for).
      if (sync_reports_ || x.source == self_.value) complete = false;
      continue;
    }
    knowers_.push_back(Knower{x.source, m->answered_from});
  }
  return complete;
}

bool WildcardMatches::may_follow_unbound(std::uint64_t token, const Receive& r) const {
  // Posted while R was pending, on its communicator: it may be ordered
  // after R once bound.
  for (const auto& [t, x] : receives_)
    if (t != token && !x.bound && x.space == r.space && x.post_no > r.post_no &&
        x.post_no <= r.completed_post)
      return true;
  return false;
}

bool WildcardMatches::unknown_to_knowers(const Message& m) const {
  for (const Knower& k : knowers_)
    if (clock_entry(m, k.rank) >= k.from) return false;
  return true;
}

void WildcardMatches::decide(bool final) {
  for (auto it = undecided_.begin(); it != undecided_.end();) {
    auto r = receives_.find(*it);
    if (r == receives_.end() || try_decide(*it, r->second, final)) {
      it = undecided_.erase(it);
    } else {
      ++it;
    }
  }
  drop_unneeded();
}

void WildcardMatches::drop_unneeded() {
  // Whatever matched before the oldest undecided receive was posted can
  // never be a candidate again, nor can it change an answer.
  std::uint64_t oldest = kNever;
  if (!undecided_.empty()) {
    auto it = receives_.find(undecided_.front());
    if (it != receives_.end()) oldest = it->second.post_no;
  }
  for (std::uint32_t s = 0; s < world_; ++s) {
    std::deque<Message>& list = from_[s];
    std::size_t gone = 0;
    for (Message& m : list) {
      if (!m.gone) {
        const std::uint64_t x = receiver(s, m.queue, m.position);
        if (x != 0) {
          auto it = receives_.find(x);
          if (it == receives_.end() || it->second.known_at < oldest) {
            auto b = binds_.find(QueueKey{s, m.queue});
            b->second.tokens.erase(m.position);
            release(m);
          }
        }
      }
      gone += m.gone ? 1 : 0;
    }
    if (gone * 2 > list.size() || gone == list.size())
      std::erase_if(list, [](const Message& m) { return m.gone; });
  }
  for (auto it = receives_.begin(); it != receives_.end();) {
    const Receive& r = it->second;
    const bool decided = r.index < 0 || r.known_at < oldest;
    if (r.completed && r.bound && r.known_at < oldest && decided) {
      it = receives_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace vcx::matches
