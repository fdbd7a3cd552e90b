// Receive order: MPI's non-overtaking rule for receives. When a receive B
// matched, every earlier-posted receive of this process that was still
// pending and could have taken B's message had matched before it, so the
// answer B gives a synchronous sender carries, besides B's posting clock, the
// clock of the message each of those matched and, transitively, what their
// own answers carry. The translator names the pairs (order_receive_after);
// here each receive's contribution (its message's clock joined with its own
// carry) is handed to the receives that follow it once it is known.
#include "point_to_point.h"

#include <utility>

namespace vcx::vclock {

void PointToPoint::order_receive_after(ReceiveToken later, ReceiveToken earlier) {
  Receive* b = receives_.get(later.value);
  Receive* a = receives_.get(earlier.value);
  if (!b || !a || later.value == earlier.value) return;
  if (order_ready(*a)) {
    add_contribution(*b, *a);
    return;
  }
  if (a->followers.empty()) ++receives_followed_;
  a->followers.add(later.value);
  ++b->follows_pending;
}

void PointToPoint::keep_receive_order(ReceiveToken t) {
  if (Receive* r = receives_.get(t.value)) r->kept = true;
}

void PointToPoint::end_receive_order(ReceiveToken t) {
  Receive* r = receives_.get(t.value);
  if (!r || !r->kept) return;
  r->kept = false;
  maybe_release_receive(t.value);
}

const ClockValue* PointToPoint::matched_clock(const Receive& r) {
  if (r.matched) return r.matched.data();
  if (!r.bound) return nullptr;
  const InQueue& q = queue_of(r.key);
  if (r.pos < q.base) return nullptr;
  const Slot& s = q.slots[r.pos - q.base];
  return s.arrived ? s.clock.data() : nullptr;
}

bool PointToPoint::order_ready(const Receive& r) {
  if (!r.bound || r.follows_pending > 0 || r.held) return false;
  // An earlier receive of its queue may still turn out cancelled and move
  // this one to another message.
  if (!r.matched && !r.merged && held_before(queue_of(r.key), r.pos)) return false;
  return matched_clock(r) != nullptr;
}

bool PointToPoint::needs_matched(const Receive& r) const {
  return r.kept || !r.followers.empty();
}

void PointToPoint::retain_matched(Receive& r, Slot& s) {
  if (r.matched || !s.clock || !needs_matched(r)) return;
  r.matched = std::move(s.clock);
}

void PointToPoint::add_contribution(Receive& to, const Receive& from) {
  if (!to.carry) to.carry = pool_.take_zeroed();
  to.carry.merge(ClockSpan(matched_clock(from), pool_.width()));
  if (from.carry) to.carry.merge(from.carry.view());
}

void PointToPoint::release_followers(std::uint64_t token) {
  const Receive* first = receives_.get(token);
  if (!first || first->followers.empty()) return;
  std::vector<std::uint64_t> work{token};
  while (!work.empty()) {
    const std::uint64_t t = work.back();
    work.pop_back();
    Receive* a = receives_.get(t);
    if (!a || a->followers.empty() || !order_ready(*a)) continue;
    const Followers waiting = std::exchange(a->followers, Followers{});
    --receives_followed_;
    waiting.each([&](std::uint64_t f) {
      Receive* b = receives_.get(f);
      if (!b || b->follows_pending == 0) return;
      add_contribution(*b, *a);
      if (--b->follows_pending > 0) return;
      try_answer(*b, f);
      work.push_back(f);
      maybe_release_receive(f);
    });
    maybe_release_receive(t);
  }
}

void PointToPoint::drop_followers(const Followers& waiting) {
  waiting.each([&](std::uint64_t f) {
    Receive* b = receives_.get(f);
    if (!b || b->follows_pending == 0 || --b->follows_pending > 0) return;
    try_answer(*b, f);
    release_followers(f);
    maybe_release_receive(f);
  });
}

void PointToPoint::recheck_followers() {
  // Only after a cancel or a dropped receive: one pass over the live receives.
  if (receives_followed_ == 0) return;
  std::vector<std::uint64_t> tokens;
  receives_.for_each([&](std::uint64_t t, const Receive& r) {
    if (!r.followers.empty()) tokens.push_back(t);
  });
  for (const std::uint64_t t : tokens) release_followers(t);
}

}  // namespace vcx::vclock
