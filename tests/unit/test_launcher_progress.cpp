// vcx-run's progress line and its answer to SIGUSR1, from session files
// written here as the tools write them (progress_line.h, where_report.h).
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "launcher/progress_line.h"
#include "launcher/where_report.h"
#include "support/temp_dir.h"
#include "vcx/session_layout.h"

namespace {

using namespace std::chrono_literals;
using vcx::launcher::ProgressLine;

void write_progress(const std::string& dir, std::uint32_t rank, const std::string& text) {
  std::ofstream(vcx::session::progress(dir, rank)) << text;
}

}  // namespace

TEST_CASE("progress line: due after three seconds, then every second, with the rate",
          "[launcher]") {
  vcx::test::TempDir dir;
  ProgressLine line(dir.path, 3);
  const auto t0 = ProgressLine::Clock::now();
  write_progress(dir.path, 0, "1000 running\n");
  write_progress(dir.path, 1, "500 finalized\n");
  // Rank 2 has not written yet: it counts for nothing.
  CHECK_FALSE(line.due(t0));
  CHECK_FALSE(line.due(t0 + 2900ms));
  const auto first = line.due(t0 + 3s);
  REQUIRE(first);
  CHECK(*first == "vcx: 3 s, 1500 events, 1 of 3 ranks finished");
  CHECK_FALSE(line.due(t0 + 3500ms));

  write_progress(dir.path, 0, "3000 crashed\n");
  write_progress(dir.path, 2, "1500 running\n");
  const auto second = line.due(t0 + 5s);
  REQUIRE(second);
  // 3,500 more events in 2 s; a crashed rank has finished too.
  CHECK(*second == "vcx: 5 s, 5000 events, 1750 events/s, 2 of 3 ranks finished");
}

TEST_CASE("where the ranks are: each tool's answer, and the ranks without one",
          "[launcher]") {
  vcx::test::TempDir dir;
  // Rank 0's tool answered request 4; rank 1's answered only an older one.
  std::ofstream(vcx::session::where_answer(dir.path, 0, 4)) << "rank 0: MPI_Recv\n  #0 main\n";
  std::ofstream(vcx::session::where_answer(dir.path, 1, 3)) << "rank 1: stale\n";
  const auto lines = vcx::launcher::where_the_ranks_are(dir.path, 2, 4, 200ms);
  const std::vector<std::string> expected{
      "where the ranks are:", "  rank 0: MPI_Recv", "    #0 main",
      "  rank 1: no answer from its tool within 0.2 s", vcx::launcher::kWhereEnd};
  CHECK(lines == expected);
  // The request the tools read, and the answer taken away once read.
  std::ifstream request(vcx::session::file(dir.path, vcx::session::kWhereRequest));
  std::string number;
  request >> number;
  CHECK(number == "4");
  CHECK_FALSE(std::filesystem::exists(vcx::session::where_answer(dir.path, 0, 4)));
  CHECK(std::filesystem::exists(vcx::session::where_answer(dir.path, 1, 3)));
}
