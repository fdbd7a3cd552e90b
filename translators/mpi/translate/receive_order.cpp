#include "receive_order.h"

#include <algorithm>

#include "../common/mpi_events.h"

namespace vcx::mpi {

ReceiveOrder::Entry* ReceiveOrder::find(ReceiveToken t) {
  auto s = seq_of_.find(t.value);
  return s == seq_of_.end() ? nullptr : at_seq(s->second);
}

ReceiveOrder::Entry* ReceiveOrder::at_seq(std::uint64_t seq) {
  auto it = entries_.find(seq);
  return it == entries_.end() ? nullptr : &it->second;
}

void ReceiveOrder::posted(ReceiveToken t, std::int32_t want_source, std::int32_t want_tag,
                          ExchangeControl& ctl) {
  // Entries from keep_from_ on were not pending at an earlier posting, or
  // did not exist yet.
  for (auto it = entries_.lower_bound(keep_from_); it != entries_.end(); ++it) {
    Entry& e = it->second;
    if (e.completed_at != kPending || e.kept || e.unmatched) continue;
    e.kept = true;
    ctl.keep_receive_order(e.token);
  }
  Entry n;
  n.seq = next_seq_++;
  n.token = t;
  n.want_source = want_source;
  n.want_tag = want_tag;
  seq_of_[t.value] = n.seq;
  pending_.insert(n.seq);
  entries_.emplace(n.seq, std::move(n));
  keep_from_ = next_seq_ - 1;
}

void ReceiveOrder::matched(ReceiveToken t, Rank source, std::int32_t tag,
                           ExchangeControl& ctl) {
  Entry* b = find(t);
  if (!b || b->matched) return;
  b->matched = true;
  const std::uint64_t stamp = ++stamp_;
  // Latest first: an earlier receive already implied by a later one named
  // here is reached through that one's predecessors and skipped.
  auto it = entries_.find(b->seq);
  while (it != entries_.begin()) {
    --it;
    Entry& a = it->second;
    bool implied = a.covered == stamp;
    if (!implied) {
      const bool pending_then = a.completed_at > b->seq;
      const bool could_take =
          (a.want_source == kRankAny || a.want_source == static_cast<std::int32_t>(source.value)) &&
          (a.want_tag == kTagAny || a.want_tag == tag);
      if (!pending_then || a.unmatched || !could_take) continue;
      ctl.order_receive_after(b->token, a.token);
      b->follows.push_back(a.seq);
    }
    for (const std::uint64_t p : a.follows)
      if (Entry* e = at_seq(p)) e->covered = stamp;
  }
}

void ReceiveOrder::completed(ReceiveToken t, ExchangeControl& ctl) {
  Entry* e = find(t);
  if (!e) return;
  if (e->completed_at == kPending) {
    e->completed_at = next_seq_;
    pending_.erase(e->seq);
  }
  retire(ctl);
}

void ReceiveOrder::unmatched(ReceiveToken t, ExchangeControl& ctl) {
  Entry* a = find(t);
  if (!a) return;
  a->unmatched = true;
  if (a->completed_at == kPending) {
    a->completed_at = next_seq_;
    pending_.erase(a->seq);
  }
  // Receives ordered after it were ordered after its predecessors through it.
  for (auto it = entries_.upper_bound(a->seq); it != entries_.end(); ++it) {
    Entry& x = it->second;
    if (std::find(x.follows.begin(), x.follows.end(), a->seq) == x.follows.end()) continue;
    for (const std::uint64_t p : a->follows) {
      if (Entry* e = at_seq(p)) {
        ctl.order_receive_after(x.token, e->token);
        x.follows.push_back(p);
      }
    }
  }
  retire(ctl);
}

void ReceiveOrder::retire(ExchangeControl& ctl) {
  // An entry can go once it completed and every receive posted while it was
  // pending completed too: none can be ordered after it any more, nor lose
  // a predecessor it reached through one (unmatched()) that a cancel of a
  // pending one would hand it. Retiring any entry, not only the oldest,
  // keeps one long-pending receive from holding on to every later one.
  for (auto it = entries_.begin(); it != entries_.end();) {
    const Entry& e = it->second;
    bool done = e.completed_at != kPending;
    if (done) {
      // No receive posted while it was pending is still pending.
      auto p = pending_.upper_bound(e.seq);
      done = p == pending_.end() || *p >= e.completed_at;
    }
    if (!done) {
      ++it;
      continue;
    }
    if (e.kept) ctl.end_receive_order(e.token);
    seq_of_.erase(e.token.value);
    it = entries_.erase(it);
  }
}

}  // namespace vcx::mpi
