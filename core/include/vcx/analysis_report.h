// What an analysis module gives vcx-run after the run: its report, built
// from the files its instances (one per tool) wrote to the module's results
// directory. vcx-run loads every installed module whose descriptor has
// reporting hooks: those are the analyses `--analysis` names, and vcx-run
// knows nothing else of them. An analysis is therefore one folder: what the
// tools do (the Plugin), and what the user reads (these hooks).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <string>
#include <vector>

namespace vcx {

struct ReportRequest {
  std::string dir;  // the module's results directory (its "<name>.dir" option)
  int ranks = 0;    // application ranks: the rank files to expect there
};

struct AnalysisReport {
  std::string text;  // for the user (stderr): the findings, and a last line that sums them up
  // The findings for --report: a JSON array (docs/analyses.md, "The report's
  // JSON"), each object with "analysis" and "kind"; "[]" when there are none.
  std::string findings = "[]";
  // Findings that set the run's exit status when the user asks for it
  // (vcx-run --race-exit-code for the race analysis).
  std::size_t counted = 0;
  // What is missing or unreadable (a rank's file), one line each.
  std::vector<std::string> problems;
};

// What an analysis that watches the run while it goes on (a deadlock) tells
// vcx-run: whether to end the run now, how, and what to say.
struct RunVerdict {
  bool stop = false;        // end the run now
  int exit_status = 0;      // vcx-run's exit status then
  std::string text;         // for the user (stderr), said at once
  std::string why;          // in a few words, for vcx-run's last lines ("a deadlock")
  // The application processes involved (rank, pid; pid 0 if unknown), for
  // a debugger (vcx-run --leave-stopped).
  std::vector<std::pair<std::uint32_t, std::int32_t>> processes;
};

// vcx-run --help lists an analysis with its descriptor's description.
struct AnalysisReporting {
  // Builds the report from request.dir; reports what it cannot read in
  // out->problems instead of throwing.
  void (*build_report)(const ReportRequest& request, AnalysisReport* out);
  // May be null. While the application runs, vcx-run calls it about every
  // quarter second, in its own process, with the same request; the plugin
  // stays loaded meanwhile, so it may keep state between calls. It reads
  // what the tools write to request.dir and may write there too (what it
  // found, for build_report; requests the tools answer).
  void (*watch)(const ReportRequest& request, RunVerdict* out);
  // Whether vcx-run runs it without being asked (vcx-run --no-analysis NAME
  // leaves it out). Such an analysis must cost little and never report what
  // is not there; its report is said only when it found something.
  bool on_by_default = false;
};

}  // namespace vcx
