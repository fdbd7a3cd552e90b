#include "receive_order.h"

#include <algorithm>

#include "../common/mpi_events.h"

namespace vcx::mpi {

ReceiveOrder::Entry* ReceiveOrder::find(ReceiveToken t) {
  // Recent receives are looked up most: search from the back.
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it)
    if (it->token == t) return &*it;
  return nullptr;
}

ReceiveOrder::Entry* ReceiveOrder::at_seq(std::uint64_t seq) {
  if (entries_.empty() || seq < entries_.front().seq) return nullptr;
  const std::uint64_t i = seq - entries_.front().seq;
  return i < entries_.size() ? &entries_[i] : nullptr;
}

void ReceiveOrder::posted(ReceiveToken t, std::int32_t want_source, std::int32_t want_tag,
                          ExchangeControl& ctl) {
  // Entries are contiguous in seq: those from keep_from_ on were not pending
  // at an earlier posting, or did not exist yet.
  const std::uint64_t from = entries_.empty() ? keep_from_
                                              : std::max(keep_from_, entries_.front().seq);
  for (Entry* e = at_seq(from); e; e = at_seq(e->seq + 1)) {
    if (e->completed_at != kPending || e->kept || e->unmatched) continue;
    e->kept = true;
    ctl.keep_receive_order(e->token);
  }
  Entry n;
  n.seq = next_seq_++;
  n.token = t;
  n.want_source = want_source;
  n.want_tag = want_tag;
  entries_.push_back(std::move(n));
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
  for (std::uint64_t s = b->seq; s-- > entries_.front().seq;) {
    Entry& a = *at_seq(s);
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
  trim(ctl);
}

void ReceiveOrder::completed(ReceiveToken t, ExchangeControl& ctl) {
  Entry* e = find(t);
  if (!e) return;
  if (e->completed_at == kPending) e->completed_at = next_seq_;
  trim(ctl);
}

void ReceiveOrder::unmatched(ReceiveToken t, ExchangeControl& ctl) {
  Entry* a = find(t);
  if (!a) return;
  a->unmatched = true;
  if (a->completed_at == kPending) a->completed_at = next_seq_;
  // Receives ordered after it were ordered after its predecessors through it.
  for (Entry& x : entries_) {
    if (x.seq <= a->seq) continue;
    bool follows_it = false;
    for (const std::uint64_t p : x.follows) follows_it = follows_it || p == a->seq;
    if (!follows_it) continue;
    for (const std::uint64_t p : a->follows) {
      if (Entry* e = at_seq(p)) {
        ctl.order_receive_after(x.token, e->token);
        x.follows.push_back(p);
      }
    }
  }
  trim(ctl);
}

void ReceiveOrder::trim(ExchangeControl& ctl) {
  // The front can go once it completed and every receive posted while it
  // was pending knows what it follows.
  while (!entries_.empty()) {
    const Entry& f = entries_.front();
    if (f.completed_at == kPending) return;
    for (std::size_t i = 1; i < entries_.size() && entries_[i].seq < f.completed_at; ++i)
      if (!settled(entries_[i])) return;
    if (f.kept) ctl.end_receive_order(f.token);
    entries_.pop_front();
  }
}

}  // namespace vcx::mpi
