// The tool ranks' statistics files and vcx-run's summary of them.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "launcher/stats.h"
#include "support/temp_dir.h"

using namespace vcx::launcher;
namespace fs = std::filesystem;

using vcx::test::TempDir;

namespace {

RankStats rank_stats(int rank, std::uint64_t events, std::uint64_t clocked_calls,
                     std::uint64_t stall_ns, const char* app, std::uint64_t max_rss_kb) {
  RankStats r;
  r.rank = rank;
  r.events = events;
  r.clocked_calls = clocked_calls;
  r.stall_ns = stall_ns;
  r.app = app;
  r.max_rss_kb = max_rss_kb;
  return r;
}

}  // namespace

TEST_CASE("launcher stats: reading a session directory", "[launcher]") {
  TempDir t;
  t.file(
      "stats-1.json",
      R"({"rank":1,"events":1000,"clocked_calls":300,"stall_ns":1200000,"backpressure_ns":0,"app":"crashed"})");
  t.file(
      "stats-0.json",
      R"({"rank":0,"events":234,"clocked_calls":45,"stall_ns":0,"backpressure_ns":500000,"app":"finalized"})");
  t.file("stats-2.json", R"({"events":0,"app":"never-attached"})");  // rank from the name
  t.file("stats-3.json", "garbage");
  t.file("stats-x.json", "{}");  // not a rank file
  t.file("other.json", "{}");

  const StatsReport report = read_stats(t.path);
  REQUIRE(report.ranks.size() == 3);
  CHECK(report.ranks[0].rank == 0);
  CHECK(report.ranks[1].rank == 1);
  CHECK(report.ranks[2].rank == 2);
  REQUIRE(report.problems.size() == 1);
  CHECK(report.problems[0].find("stats-3.json") != std::string::npos);
  CHECK(has_rank_trouble(report));

  const auto lines = summary_lines(report, 5, std::string("/tr"));
  REQUIRE(lines.size() == 6);
  CHECK(lines[0] ==
        "3 of 5 ranks reported, 1234 events, 345 clocked calls, stall 1.2 ms total, "
        "backpressure 0.5 ms; trace in /tr");
  CHECK(lines[1] ==
        "application rank 1 ended without notice (killed by a signal that cannot be caught, "
        "such as SIGKILL, or by mpiexec after another rank failed)");
  CHECK(lines[2] == "application rank 2 never attached to its tool");
  CHECK(lines[3] == "no statistics from tool ranks 3, 4");
  CHECK(lines[4].find("stats-3.json") != std::string::npos);
  CHECK(lines[5].rfind("stall per rank: 0: 0.0 ms, 1: ", 0) == 0);
}

TEST_CASE("launcher stats: summary of a clean run", "[launcher]") {
  StatsReport report;
  for (int r = 0; r < 4; ++r)
    report.ranks.push_back(rank_stats(r, 100, 10, 300'000, "finalized", 2048u * (r + 1)));
  CHECK_FALSE(has_rank_trouble(report));
  CHECK(summary_lines(report, 4, std::nullopt) ==
        std::vector<std::string>{"4 ranks, 400 events, 40 clocked calls, stall 1.2 ms total",
                                 "stall per rank: 0: 0.3 ms, 1: 0.3 ms, 2: 0.3 ms, 3: 0.3 ms; "
                                 "tool memory 8.0 MiB at most (rank 3), 20 MiB in all"});
  // One of each, in the singular.
  StatsReport one;
  one.ranks.push_back(rank_stats(0, 1, 1, 0, "finalized", 1024u));
  CHECK(summary_lines(one, 1, std::nullopt)[0] ==
        "1 rank, 1 event, 1 clocked call, stall 0.0 ms total");
  // Beyond 8 ranks, the spread.
  StatsReport many;
  for (int r = 0; r < 9; ++r)
    many.ranks.push_back(
        rank_stats(r, 1, 1, static_cast<std::uint64_t>((9 - r) * 1'000'000), "finalized", 1024));
  CHECK(summary_lines(many, 9, std::nullopt).back() ==
        "stall per rank: min 1.0 ms (rank 8), median 5.0 ms, max 9.0 ms (rank 0); "
        "tool memory 1.0 MiB at most (rank 0), 9.0 MiB in all");

  report.ranks[2].app = "crashed";
  report.ranks[3].app = "crashed";
  CHECK(summary_lines(report, 4, std::nullopt).at(1).rfind(
            "application ranks 2, 3 ended without notice (", 0) == 0);

  CHECK(summary_lines(StatsReport{}, 2, std::nullopt) ==
        std::vector<std::string>{"2 ranks, no statistics from the tool job"});
  CHECK(read_stats("/nonexistent-dir").ranks.empty());
}

TEST_CASE("launcher stats: how far the tools lagged", "[launcher]") {
  TempDir t;
  t.file("stats-0.json",
         R"({"rank":0,"events":10,"clocked_calls":5,"stall_ns":0,"backpressure_ns":0,)"
         R"("peak_backlog":7,"stall":"never","app":"finalized"})");
  t.file("stats-1.json",
         R"({"rank":1,"events":10,"clocked_calls":5,"stall_ns":0,"backpressure_ns":0,)"
         R"("peak_backlog":1234,"stall":"never","cpu_ns":1500000000,"app":"finalized"})");
  StatsReport report = read_stats(t.path);
  REQUIRE(report.ranks.size() == 2);
  CHECK(report.ranks[1].peak_backlog == 1234);
  CHECK(report.ranks[1].stall == "never");
  report.tools_after_app_ns = 350'000'000;
  CHECK(summary_lines(report, 2, std::nullopt).back() ==
        "tools (--stall never): done 350.0 ms after the application, CPU 1.50 s in all, "
        "backlog at most 1234 calls (rank 1)");
  report.tools_after_app_ns.reset();
  report.ranks[1].cpu_ns = 0;
  CHECK(summary_lines(report, 2, std::nullopt).back() ==
        "tools (--stall never): backlog at most 1234 calls (rank 1)");
}

TEST_CASE("launcher stats: how ranks ended", "[launcher]") {
  CHECK(parse_ending("signal 11\n")->kind == "signal");
  CHECK(parse_ending("exit 3")->code == 3);
  CHECK(parse_ending("abort -1\n")->code == -1);
  CHECK_FALSE(parse_ending(""));
  CHECK_FALSE(parse_ending("exit"));
  CHECK_FALSE(parse_ending("exit three"));
  CHECK_FALSE(parse_ending("vanished 3"));

  TempDir t;
  for (int r = 0; r < 4; ++r)
    t.file("stats-" + std::to_string(r) + ".json",
           r == 3 ? R"({"app":"finalized"})" : R"({"app":"crashed"})");
  t.file("ending-1", "signal 11\n");
  t.file("ending-3", "signal 11\n");  // after MPI_Finalize: still said
  t.file("ending-2", "exit 3\n");
  t.file("ending-x", "exit 3\n");  // not a rank
  t.file("ending-5", "nonsense\n");
  const StatsReport report = read_stats(t.path);
  REQUIRE(report.endings.size() == 3);
  CHECK(report.endings.at(2).kind == "exit");
  REQUIRE(report.problems.size() == 1);
  CHECK(report.problems[0].find("ending-5") != std::string::npos);
  CHECK(has_rank_trouble(report));
  const auto lines = summary_lines(report, 4, std::nullopt);
  REQUIRE(lines.size() == 6);
  CHECK(lines[1] == "application ranks 1, 3 were killed by signal 11 (SIGSEGV)");
  CHECK(lines[2] == "application rank 2 exited with status 3 without calling MPI_Finalize");
  // exit() with a whole MPI error code (MPICH's fatal errors): the status
  // the shell sees, and what was passed.
  {
    TempDir t2;
    t2.file("ending-0", "exit 135879439\n");
    const auto l2 = summary_lines(read_stats(t2.path), 1, std::nullopt);
    CHECK(std::find(l2.begin(), l2.end(),
                    "application rank 0 exited with status 15 (exit(135879439)) without calling "
                    "MPI_Finalize") != l2.end());
  }
  // Rank 0 said nothing: mpiexec took it down.
  CHECK(lines[3] ==
        "application rank 0 ended without notice (mpiexec kills the other ranks when one fails)");

  StatsReport aborted;
  aborted.endings[0] = Ending{"abort", 5, ""};
  CHECK(has_rank_trouble(aborted));
  CHECK(summary_lines(aborted, 2, std::nullopt).at(1) ==
        "application rank 0 called MPI_Abort with error code 5");
  // An OpenSHMEM program's summary names its own calls and starter.
  CHECK(summary_lines(aborted, 2, std::nullopt, kShmemEndingCalls).at(1) ==
        "application rank 0 called shmem_global_exit with status 5");
  const auto shmem_lines = summary_lines(report, 4, std::nullopt, kShmemEndingCalls);
  CHECK(shmem_lines.at(2) ==
        "application rank 2 exited with status 3 without calling shmem_finalize");
  CHECK(shmem_lines.at(3) ==
        "application rank 0 ended without notice (oshrun kills the other ranks when one fails)");
  StatsReport by_vcx;
  by_vcx.endings[0] = *parse_ending("tool-failed 70\n");
  by_vcx.endings[1] = *parse_ending("tool-failed 70\n");
  CHECK(summary_lines(by_vcx, 2, std::nullopt).at(1).rfind(
            "application ranks 0, 1 were aborted by vcx with status 70 because the tool process "
            "failed",
            0) == 0);

  // The call each rank was in, and why the tools stopped (from their stats).
  CHECK(parse_ending("tool-failed 70 MPI_Win_lock\n")->call == "MPI_Win_lock");
  CHECK(parse_ending("tool-failed 70")->call.empty());
  CHECK_FALSE(parse_ending("tool-failed 70 MPI_Send extra"));
  CHECK(parse_ending("exit 3 MPI_Send") == std::nullopt);  // only tool failures name a call
  TempDir f;
  f.file("stats-0.json", R"({"app":"crashed","aborted":true,"reason":"connection to tool 1 lost"})");
  f.file("stats-1.json", R"({"app":"crashed","aborted":false})");
  f.file("ending-0", "tool-failed 70 MPI_Allreduce\n");
  f.file("ending-1", "tool-failed 70 MPI_Recv\n");
  const StatsReport failed = read_stats(f.path);
  CHECK(failed.ranks.at(0).aborted);
  CHECK(failed.ranks.at(0).reason == "connection to tool 1 lost");
  const auto told = summary_lines(failed, 2, std::nullopt);
  REQUIRE(told.size() >= 3);
  CHECK(told[1] ==
        "application rank 0 was aborted by vcx with status 70 in MPI_Allreduce because the tool "
        "process failed (connection to tool 1 lost); --on-tool-failure=continue lets the "
        "application run on unanalysed");
  CHECK(told[2].rfind("application rank 1 was aborted by vcx with status 70 in MPI_Recv", 0) == 0);
  // With nothing aborted by the interceptors (continue), the reason still shows.
  StatsReport continued;
  continued.ranks = failed.ranks;
  const auto cont = summary_lines(continued, 2, std::nullopt);
  CHECK(std::find(cont.begin(), cont.end(),
                  "the analysis stopped early: connection to tool 1 lost") != cont.end());
}

TEST_CASE("launcher stats: the reason of the first tool that stopped", "[launcher]") {
  // Tool 2 stopped the analysis first; tool 0 found tool 1 gone (it had
  // stopped on tool 2's news) before that news reached it, and tool 1's
  // rank aborted the job, which took rank 0 down.
  TempDir t;
  t.file("stats-0.json",
         R"({"aborted":true,"stopped_at_ns":3000,"reason":"cannot connect to tool rank 1"})");
  t.file("stats-1.json", R"({"aborted":true,"stopped_at_ns":2000,"reason":"rank 10 is not a rank"})");
  t.file("stats-2.json", R"({"aborted":true,"stopped_at_ns":1000,"reason":"rank 10 is not a rank"})");
  const auto lines = summary_lines(read_stats(t.path), 3, std::nullopt);
  CHECK(std::find(lines.begin(), lines.end(), "the analysis stopped early: rank 10 is not a rank") !=
        lines.end());
  // Without times (an older tool), the lowest rank's.
  TempDir u;
  u.file("stats-0.json", R"({"aborted":true,"reason":"lost tool rank 1"})");
  u.file("stats-1.json", R"({"aborted":true,"reason":"application rank 1 ended"})");
  const auto old = summary_lines(read_stats(u.path), 2, std::nullopt);
  CHECK(std::find(old.begin(), old.end(), "the analysis stopped early: lost tool rank 1") !=
        old.end());
  // A known time comes before an unknown one.
  u.file("stats-1.json", R"({"aborted":true,"stopped_at_ns":5,"reason":"application rank 1 ended"})");
  const auto known = summary_lines(read_stats(u.path), 2, std::nullopt);
  CHECK(std::find(known.begin(), known.end(),
                  "the analysis stopped early: application rank 1 ended") != known.end());
}

TEST_CASE("launcher stats: durations", "[launcher]") {
  CHECK(format_duration_ns(0) == "0.0 ms");
  CHECK(format_duration_ns(1'234'567) == "1.2 ms");
  CHECK(format_duration_ns(999'000'000) == "999.0 ms");
  CHECK(format_duration_ns(3'400'000'000ULL) == "3.40 s");
}
