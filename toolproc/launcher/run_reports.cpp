#include "launcher/run_reports.h"

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "launcher/console.h"
#include "launcher/process.h"
#include "vcx/analysis_report.h"
#include "vcx/plugin_loader.h"

namespace vcx::launcher {
namespace {

// The --report file: {"version":1,"program":[...],"ranks":N,"findings":[...]}.
nlohmann::json report_document(const std::vector<std::string>& program, int ranks,
                               const nlohmann::json& findings) {
  return nlohmann::json{
      {"version", 1}, {"program", program}, {"ranks", ranks}, {"findings", findings}};
}

}  // namespace

int report_analyses(const Plan& plan, const std::string& session_dir, int code) {
  const LaunchOptions& o = plan.options;
  if (o.analyses.empty()) return code;
  // Source lines come from the files on this machine, never from a
  // debuginfod server.
  ::unsetenv("DEBUGINFOD_URLS");
  nlohmann::json findings = nlohmann::json::array();
  std::size_t races = 0;
  // Each analysis builds its own report (its module's reporting hooks), from
  // what its tools wrote to <session>/<name>.
  for (const std::string& name : o.analyses) {
    LoadedPlugin plugin;
    try {
      plugin = load_plugin(plan.paths.plugin_dir, PluginKind::Module, name);
    } catch (const std::runtime_error& e) {
      say(std::string("the ") + name + " analysis has no report: " + e.what());
      continue;
    }
    const AnalysisReporting* hooks = plugin.descriptor->reporting;
    if (!hooks || !hooks->build_report) {
      say("the module " + name + " is no analysis: it builds no report");
      unload_plugin(plugin);
      continue;
    }
    AnalysisReport report;
    hooks->build_report(ReportRequest{session_dir + "/" + name, o.nprocs}, &report);
    unload_plugin(plugin);
    for (const auto& p : report.problems) say(p);
    nlohmann::json list = nlohmann::json::array();
    try {
      list = nlohmann::json::parse(report.findings);
      if (!list.is_array()) {
        say("the " + name + " analysis gave findings that are no JSON array");
        list = nlohmann::json::array();
      }
    } catch (const std::exception& e) {
      say("the " + name + " analysis gave unreadable findings: " + e.what());
    }
    // An analysis the user did not ask for speaks only when it found
    // something.
    const bool by_default = std::count(o.analyses_by_default.begin(),
                                       o.analyses_by_default.end(), name) > 0;
    if (!by_default || !list.empty() || report.counted > 0)
      std::fputs(report.text.c_str(), stderr);
    findings.insert(findings.end(), list.begin(), list.end());
    if (name == "race") races = report.counted;
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
