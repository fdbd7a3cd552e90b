#include "termination.h"

#include <cstring>
#include <utility>
#include <vector>

#include "vcx/binomial_tree.h"

namespace vcx::tool {
namespace {

enum class ControlMsg : std::uint8_t {
  Done = 1,       // to the parent: my subtree's applications finished, their calls are
                  // analysed; then the analysis messages its tools sent and received
                  // (two u64), again whenever those change
  Terminate = 2,  // from the parent: everyone is done, stop
  Abort = 3,      // to everyone: stop now; the reason follows
};

}  // namespace

Termination::Termination(Rank rank, std::uint32_t size, Send send)
    : rank_(rank),
      size_(size),
      parent_(BinomialTree(size, 0).parent(rank.value).value_or(rank.value)),
      children_(BinomialTree(size, 0).child_count(rank.value)),
      send_(std::move(send)) {}

void Termination::update(bool finished, const Counts& own,
                         const std::function<void()>& before_done) {
  if (aborted_ || terminate_) return;
  if (!done_sent_) {
    if (!finished || child_counts_.size() < children_) return;
    if (before_done) before_done();
    done_sent_ = true;
  }
  Counts c = own;
  for (const auto& [child, cc] : child_counts_) {
    c.sent += cc.sent;
    c.received += cc.received;
  }
  if (rank_.value == 0) {
    if (c.sent == c.received) terminate_children();  // everyone is done
    return;
  }
  if (reported_once_ && reported_ == c) return;
  reported_ = c;
  reported_once_ = true;
  std::uint8_t msg[1 + 2 * sizeof(std::uint64_t)];
  msg[0] = static_cast<std::uint8_t>(ControlMsg::Done);
  std::memcpy(msg + 1, &c.sent, sizeof c.sent);
  std::memcpy(msg + 1 + sizeof c.sent, &c.received, sizeof c.received);
  send_(Rank{parent_}, msg);
}

Termination::Heard Termination::on_message(Rank src, std::span<const std::uint8_t> b) {
  if (b.empty()) return Heard::Nothing;
  switch (static_cast<ControlMsg>(b[0])) {
    case ControlMsg::Done: {
      Counts c;
      if (b.size() >= 1 + 2 * sizeof(std::uint64_t)) {
        std::memcpy(&c.sent, b.data() + 1, sizeof c.sent);
        std::memcpy(&c.received, b.data() + 1 + sizeof c.sent, sizeof c.received);
      }
      child_counts_[src.value] = c;  // first Done, or the subtree's counts changed
      return Heard::Nothing;
    }
    case ControlMsg::Terminate:
      terminate_children();
      return Heard::Terminate;
    case ControlMsg::Abort:
      if (aborted_) return Heard::Nothing;
      aborted_ = true;
      abort_reason_.assign(b.begin() + 1, b.end());
      terminate_ = true;
      return Heard::Abort;
  }
  return Heard::Nothing;
}

void Termination::abort(const std::string& why, const std::function<void()>& before_telling) {
  if (aborted_) return;
  aborted_ = true;
  abort_reason_ = why;
  if (before_telling) before_telling();
  std::vector<std::uint8_t> msg{static_cast<std::uint8_t>(ControlMsg::Abort)};
  msg.insert(msg.end(), why.begin(), why.end());
  for (std::uint32_t r = 0; r < size_; ++r)
    if (r != rank_.value) send_(Rank{r}, msg);
  terminate_ = true;
}

void Termination::terminate_children() {
  const auto what = static_cast<std::uint8_t>(ControlMsg::Terminate);
  BinomialTree(size_, 0).for_each_child_largest_first(rank_.value, [&](std::uint32_t c) {
    send_(Rank{c}, {&what, 1});
  });
  terminate_ = true;
}

}  // namespace vcx::tool
