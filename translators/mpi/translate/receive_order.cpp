#include "receive_order.h"

#include <algorithm>

#include "../common/mpi_events.h"

namespace vcx::mpi {

ReceiveOrder::Entry* ReceiveOrder::find(ReceiveToken t) {
  auto s = seq_of_.find(t.value);
  return s == seq_of_.end() ? nullptr : at_seq(s->second);
}

std::size_t ReceiveOrder::index_of(std::uint64_t seq) const {
  return static_cast<std::size_t>(
      std::lower_bound(entries_.begin(), entries_.end(), seq,
                       [](const Entry& e, std::uint64_t s) { return e.seq < s; }) -
      entries_.begin());
}

ReceiveOrder::Entry* ReceiveOrder::at_seq(std::uint64_t seq) {
  const std::size_t i = index_of(seq);
  return i < entries_.size() && entries_[i].seq == seq ? &entries_[i] : nullptr;
}

void ReceiveOrder::posted(ReceiveToken t, std::int32_t want_source, std::int32_t want_tag,
                          ExchangeControl& ctl) {
  if (retire_wanted_) retire(ctl);
  // Entries from keep_from_ on were not pending at an earlier posting, or
  // did not exist yet.
  for (std::size_t i = index_of(keep_from_); i < entries_.size(); ++i) {
    Entry& e = entries_[i];
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
  ++pending_;
  entries_.push_back(std::move(n));
  keep_from_ = next_seq_ - 1;
}

void ReceiveOrder::matched(ReceiveToken t, Rank source, std::int32_t tag,
                           ExchangeControl& ctl) {
  // Entries that could go must not be walked: one would imply (cover) a
  // receive that has to be named.
  if (retire_wanted_) retire(ctl);
  Entry* b = find(t);
  if (!b || b->matched) return;
  b->matched = true;
  b->matched_source = source;
  b->matched_tag = tag;
  const std::uint64_t stamp = ++stamp_;
  // Latest first: an earlier receive already implied by a later one named
  // here is reached through that one's predecessors and skipped.
  for (std::size_t i = static_cast<std::size_t>(b - entries_.data()); i-- > 0;) {
    Entry& a = entries_[i];
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
    // Its predecessors are just before it as a rule: look back from it.
    for (const std::uint64_t p : a.follows)
      if (Entry* e = at_seq_before(i, p)) e->covered = stamp;
    // An earlier receive that B could follow could follow A too, if A matched
    // a message of the same source and tag: pending when B was posted means
    // pending when A was. So it is named or implied by A's own match already,
    // and the walk ends here (a chain of like receives costs one step each).
    if (a.matched && !a.unmatched && a.matched_source == source && a.matched_tag == tag) break;
  }
}

ReceiveOrder::Entry* ReceiveOrder::at_seq_before(std::size_t i, std::uint64_t seq) {
  // Galloping back from index i (whose entry's seq is above `seq`), then a
  // binary search in the last step's range.
  std::size_t step = 1, hi = i;
  while (hi >= step && entries_[hi - step].seq > seq) {
    hi -= step;
    step *= 2;
  }
  const std::size_t lo = hi >= step ? hi - step : 0;
  const auto it = std::lower_bound(entries_.begin() + static_cast<std::ptrdiff_t>(lo),
                                   entries_.begin() + static_cast<std::ptrdiff_t>(hi), seq,
                                   [](const Entry& e, std::uint64_t s) { return e.seq < s; });
  return it != entries_.begin() + static_cast<std::ptrdiff_t>(hi) && it->seq == seq ? &*it
                                                                                      : nullptr;
}

void ReceiveOrder::completed(ReceiveToken t, ExchangeControl& ctl) {
  Entry* e = find(t);
  if (!e) return;
  if (e->completed_at == kPending) {
    e->completed_at = next_seq_;
    --pending_;
  }
  retire_wanted_ = true;
  if (pending_ == 0) retire(ctl);
}

void ReceiveOrder::unmatched(ReceiveToken t, ExchangeControl& ctl) {
  if (retire_wanted_) retire(ctl);
  Entry* a = find(t);
  if (!a) return;
  a->unmatched = true;
  if (a->completed_at == kPending) {
    a->completed_at = next_seq_;
    --pending_;
  }
  // Receives ordered after it were ordered after its predecessors through it.
  const std::uint64_t a_seq = a->seq;
  const std::vector<std::uint64_t> a_follows = a->follows;
  for (std::size_t i = index_of(a_seq + 1); i < entries_.size(); ++i) {
    Entry& x = entries_[i];
    if (std::find(x.follows.begin(), x.follows.end(), a_seq) == x.follows.end()) continue;
    for (const std::uint64_t p : a_follows) {
      if (Entry* e = at_seq(p)) {
        ctl.order_receive_after(x.token, e->token);
        x.follows.push_back(p);
      }
    }
  }
  retire(ctl);
}

void ReceiveOrder::retire(ExchangeControl& ctl) {
  retire_wanted_ = false;
  // An entry can go once it completed and every receive posted while it was
  // pending completed too: none can be ordered after it any more, nor lose
  // a predecessor it reached through one (unmatched()) that a cancel of a
  // pending one would hand it. Retiring any entry, not only the oldest,
  // keeps one long-pending receive from holding on to every later one.
  // From the newest back: the first pending receive posted after each entry.
  std::uint64_t next_pending = kPending;
  for (std::size_t i = entries_.size(); i-- > 0;) {
    Entry& e = entries_[i];
    // No receive posted while it was pending is still pending.
    e.retiring = e.completed_at != kPending && next_pending >= e.completed_at;
    if (e.completed_at == kPending) next_pending = e.seq;
  }
  // Nor is it named by a pending receive: a receive posted after it
  // completed can still come to follow it when one it followed is cancelled
  // (unmatched() hands it the cancelled one's predecessors), and a cancel of
  // that receive in turn must find it to hand it on.
  named_.clear();
  for (const Entry& e : entries_)
    if (e.completed_at == kPending) named_.insert(named_.end(), e.follows.begin(), e.follows.end());
  std::sort(named_.begin(), named_.end());
  std::size_t kept = 0;
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    Entry& e = entries_[i];
    if (e.retiring && std::binary_search(named_.begin(), named_.end(), e.seq)) e.retiring = false;
    if (!e.retiring) {
      if (kept != i) entries_[kept] = std::move(e);
      ++kept;
      continue;
    }
    if (e.kept) ctl.end_receive_order(e.token);
    seq_of_.erase(e.token.value);
  }
  entries_.resize(kept);
}

}  // namespace vcx::mpi
