#include "launcher/where_report.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "launcher/console.h"
#include "vcx/atomic_file.h"
#include "vcx/session_layout.h"

namespace vcx::launcher {

std::vector<std::string> where_the_ranks_are(const std::string& session_dir, int ranks,
                                             std::uint64_t number,
                                             std::chrono::milliseconds wait) {
  write_file_atomically(session::file(session_dir, session::kWhereRequest),
                        std::to_string(number) + "\n", nullptr);
  const auto n = static_cast<std::size_t>(ranks);
  std::vector<std::string> answers(n);
  std::vector<bool> have(n, false);
  const auto give_up = std::chrono::steady_clock::now() + wait;
  for (std::size_t left = n; left > 0;) {
    for (std::size_t r = 0; r < n; ++r) {
      if (have[r]) continue;
      const std::string path =
          session::where_answer(session_dir, static_cast<std::uint32_t>(r), number);
      std::ifstream in(path);
      if (!in) continue;
      std::stringstream text;
      text << in.rdbuf();
      answers[r] = text.str();
      have[r] = true;
      --left;
      std::remove(path.c_str());
    }
    if (left == 0 || std::chrono::steady_clock::now() >= give_up) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::vector<std::string> lines{"where the ranks are:"};
  for (std::size_t r = 0; r < n; ++r) {
    if (!have[r]) {
      lines.push_back("  rank " + std::to_string(r) + ": no answer from its tool within " +
                      seconds_text(wait));
      continue;
    }
    std::istringstream text(answers[r]);
    for (std::string line; std::getline(text, line);) lines.push_back("  " + line);
  }
  lines.emplace_back(kWhereEnd);
  return lines;
}

}  // namespace vcx::launcher
