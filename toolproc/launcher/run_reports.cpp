#include "launcher/run_reports.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "launcher/console.h"
#include "launcher/matches_report.h"
#include "launcher/process.h"
#include "launcher/race_report.h"

namespace vcx::launcher {

int report_analyses(const Plan& plan, const std::string& session_dir, int code) {
  const LaunchOptions& o = plan.options;
  if (o.analyses.empty()) return code;
  // Source lines come from the files on this machine, never from a
  // debuginfod server.
  ::unsetenv("DEBUGINFOD_URLS");
  nlohmann::json findings = nlohmann::json::array();
  std::size_t races = 0;
  if (runs_analysis(o, "race")) {
    const RaceReport race = build_race_report(session_dir + "/race", o.nprocs);
    for (const auto& p : race.problems) say(p);
    std::fputs(race.text.c_str(), stderr);
    findings.insert(findings.end(), race.findings.begin(), race.findings.end());
    races = race.races;
  }
  if (runs_analysis(o, "matches")) {
    const MatchesReport m = build_matches_report(session_dir + "/matches", o.nprocs);
    for (const auto& p : m.problems) say(p);
    std::fputs(m.text.c_str(), stderr);
    findings.insert(findings.end(), m.findings.begin(), m.findings.end());
  }
  std::fflush(stderr);
  if (o.report_file) {
    std::vector<std::string> program{o.program};
    program.insert(program.end(), o.program_args.begin(), o.program_args.end());
    std::ofstream f(*o.report_file);
    f << report_document(program, o.nprocs, findings).dump(2) << '\n';
    if (!f) say("cannot write the report " + *o.report_file);
  }
  if (races > 0 && o.race_exit_code && code != kExitToolFailure) return *o.race_exit_code;
  return code;
}

void write_view(const Plan& plan, const Environment& env, const std::string& trace_dir) {
  SpawnRequest req;
  req.file = plan.paths.trace_tool;
  req.argv = {req.file, "view", trace_dir};
  // The analyses' findings of the run go into the page too.
  if (plan.options.report_file && !plan.options.analyses.empty())
    req.argv.insert(req.argv.end(), {"--report", *plan.options.report_file});
  req.env = env.entries();
  req.stdin_mode = Stream::DevNull;
  req.stdout_mode = Stream::DevNull;
  try {
    Child view = Child::spawn(req);
    view.wait();
    if (view.status() && view.status()->success())
      say("view of the run: " + trace_dir + "/view.html");
    else
      say("--view: vcx-trace view " + trace_dir + " failed (" +
          (view.status() ? view.status()->describe() : std::string("no status")) +
          "); the trace is there for another try");
  } catch (const std::runtime_error& e) {
    say(std::string("--view: ") + e.what());
  }
}

}  // namespace vcx::launcher
