// The end of a run, agreed by the tools along a binomial tree rooted at tool
// 0, so that no tool needs a connection to every other one: Done goes up
// once a tool's whole subtree is done, Terminate comes down. Abort goes to
// every tool at once and stops the analysis everywhere.
//
// Analysis modules exchange messages of their own, and send none once
// their tool is done; each Done carries its subtree's counts of analysis
// messages sent and received (again whenever they change), and tool 0
// terminates the run when the whole tree is done and the sums agree: then
// every message sent has arrived.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <unordered_map>

#include "vcx/types.h"

namespace vcx::tool {

class Termination {
 public:
  struct Counts {
    std::uint64_t sent = 0, received = 0;
    bool operator==(const Counts&) const = default;
  };
  // Sends a control message to a peer tool.
  using Send = std::function<void(Rank, std::span<const std::uint8_t>)>;

  Termination(Rank rank, std::uint32_t size, Send send);

  // This tool's own part: `finished` once its application ended and every
  // call of it is analysed (then it stays so), with the analysis messages
  // it sent and received so far (`own` is read after `before_done`).
  // `before_done` runs once, right before this tool first counts as done:
  // modules send what they held back, which `own` then counts.
  void update(bool finished, const Counts& own, const std::function<void()>& before_done);

  enum class Heard { Nothing, Terminate, Abort };
  // A control message from `src`; Terminate and Abort end this tool's loop
  // (the reason of an Abort: abort_reason()). Call update() after Nothing:
  // a child's Done may complete this subtree.
  Heard on_message(Rank src, std::span<const std::uint8_t> message);
  // Stops every tool: sends Abort with `why` to every other tool, after
  // `before_telling` ran (with aborted() and abort_reason() already set).
  void abort(const std::string& why, const std::function<void()>& before_telling = {});

  // This tool's subtree was reported done (the analysis messages of its
  // modules are all counted).
  bool done() const { return done_sent_; }
  // The run is over for this tool: terminated, or aborted.
  bool over() const { return terminate_; }
  bool aborted() const { return aborted_; }
  const std::string& abort_reason() const { return abort_reason_; }
  Rank parent() const { return Rank{parent_}; }

 private:
  void terminate_children();

  Rank rank_;
  std::uint32_t size_;
  std::uint32_t parent_;  // tool 0: itself
  std::uint32_t children_;
  Send send_;
  bool done_sent_ = false;
  bool terminate_ = false;
  bool aborted_ = false;
  std::string abort_reason_;
  // Each child's subtree counts, from its last Done.
  std::unordered_map<std::uint32_t, Counts> child_counts_;
  Counts reported_;  // in the last Done sent
  bool reported_once_ = false;
};

}  // namespace vcx::tool
