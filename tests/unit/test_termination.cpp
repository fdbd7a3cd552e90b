// The tools' agreement on the end of a run, with simulated tools: the run
// must end everywhere, and no tool may stop while another's application
// still runs or an analysis message is still on its way.
#include <catch2/catch.hpp>

#include <deque>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tool/termination.h"

using vcx::Rank;
using vcx::tool::Termination;

namespace {

constexpr std::uint8_t kAnalysis = 0xA0;  // the simulation's own tag for module messages

// `n` tools whose messages are delivered in a random order, in order
// between any two tools (as TCP and the shared-memory rings do).
struct Run {
  explicit Run(std::uint32_t n, std::uint64_t seed) : rng(seed) {
    for (std::uint32_t i = 0; i < n; ++i) {
      tools.emplace_back(Rank{i}, n, [this, i](Rank dst, std::span<const std::uint8_t> b) {
        links[{i, dst.value}].emplace_back(b.begin(), b.end());
      });
    }
    finished.assign(n, false);
    before_done_calls.assign(n, 0);
    own.assign(n, {});
  }

  void update(std::uint32_t i) {
    tools[i].update(finished[i], own[i], [&] {
      ++before_done_calls[i];
      // A module sends what it held back as its tool becomes done.
      if (rng() % 2 == 0) {
        ++own[i].sent;
        links[{i, static_cast<std::uint32_t>(rng() % tools.size())}].push_back({kAnalysis});
      }
    });
    check_not_early();
  }
  // A tool whose module sends a message to `dst` (only before it is done).
  void send_analysis(std::uint32_t i, std::uint32_t dst) {
    if (tools[i].done() || tools[i].over()) return;
    ++own[i].sent;
    links[{i, dst}].push_back({kAnalysis});
    update(i);
  }
  // Delivers the oldest message of a random link; false if none is left.
  bool deliver_one() {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> busy;
    for (auto& [link, q] : links)
      if (!q.empty()) busy.push_back(link);
    if (busy.empty()) return false;
    const auto link = busy[rng() % busy.size()];
    std::vector<std::uint8_t> msg = std::move(links[link].front());
    links[link].pop_front();
    const auto [src, dst] = link;
    if (tools[dst].over()) return true;  // a stopped tool reads nothing more
    if (msg[0] == kAnalysis) {
      ++own[dst].received;
      // Sometimes the receiving module answers, if its tool is not done.
      if (rng() % 3 == 0) send_analysis(dst, src);
      update(dst);
    } else if (tools[dst].on_message(Rank{src}, msg) == Termination::Heard::Nothing) {
      update(dst);
    } else {
      check_not_early();
    }
    return true;
  }
  // The definition: a tool stops only once every application finished and
  // every analysis message sent was received.
  void check_not_early() {
    bool any_over = false;
    for (const auto& t : tools) any_over = any_over || (t.over() && !t.aborted());
    if (!any_over) return;
    std::uint64_t sent = 0, received = 0;
    for (std::size_t i = 0; i < tools.size(); ++i) {
      REQUIRE(finished[i]);
      sent += own[i].sent;
      received += own[i].received;
    }
    REQUIRE(sent == received);
  }

  std::mt19937_64 rng;
  std::vector<Termination> tools;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::deque<std::vector<std::uint8_t>>> links;
  std::vector<bool> finished;
  std::vector<int> before_done_calls;
  std::vector<Termination::Counts> own;
};

}  // namespace

TEST_CASE("termination: every tool stops, none before the run is over", "[termination]") {
  for (std::uint32_t n : {1u, 2u, 3u, 5u, 8u, 13u}) {
    for (std::uint64_t seed = 1; seed <= 40; ++seed) {
      Run run(n, seed * 7919 + n);
      std::vector<std::uint32_t> order(n);
      for (std::uint32_t i = 0; i < n; ++i) order[i] = i;
      std::shuffle(order.begin(), order.end(), run.rng);
      // Applications finish one by one, in a random order; meanwhile
      // modules exchange messages and the network delivers some.
      for (std::uint32_t i : order) {
        for (int k = 0; k < 3; ++k) run.send_analysis(i, static_cast<std::uint32_t>(run.rng() % n));
        for (int k = static_cast<int>(run.rng() % 4); k > 0; --k) run.deliver_one();
        run.finished[i] = true;
        run.update(i);
      }
      while (run.deliver_one()) {
      }
      for (std::uint32_t i = 0; i < n; ++i) {
        INFO("n " << n << " seed " << seed << " tool " << i);
        CHECK(run.tools[i].over());
        CHECK_FALSE(run.tools[i].aborted());
        CHECK(run.before_done_calls[i] == 1);
      }
    }
  }
}

TEST_CASE("termination: a tool whose application runs on holds everyone", "[termination]") {
  Run run(4, 3);
  for (std::uint32_t i : {0u, 1u, 3u}) {
    run.finished[i] = true;
    run.update(i);
  }
  while (run.deliver_one()) {
  }
  for (const auto& t : run.tools) CHECK_FALSE(t.over());
  CHECK(run.tools[1].done());  // tool 1's subtree is itself: done
  CHECK_FALSE(run.tools[2].done());
  run.finished[2] = true;
  run.update(2);
  while (run.deliver_one()) {
  }
  for (const auto& t : run.tools) CHECK(t.over());
}

TEST_CASE("termination: an abort stops every tool with its reason", "[termination]") {
  Run run(5, 11);
  bool told_after = false;
  run.tools[3].abort("rank 3 crashed", [&] {
    told_after = run.tools[3].aborted() && run.tools[3].abort_reason() == "rank 3 crashed" &&
                 run.links.empty();  // before anything was sent
  });
  CHECK(told_after);
  while (run.deliver_one()) {
  }
  for (const auto& t : run.tools) {
    CHECK(t.over());
    CHECK(t.aborted());
    CHECK(t.abort_reason() == "rank 3 crashed");
  }
}
