// What vcx-run writes to its terminal: its own lines ("vcx: ..."), each in
// one write so that they do not interleave with the ranks' output, the
// progress line it keeps rewriting, and the small formatting they share.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace vcx::launcher {

void write_line(int fd, const std::string& text);
// "vcx: <text>" on stderr, after clearing the progress line.
void say(const std::string& text);
// The progress line on stderr: shown (rewritten in place) and cleared.
void write_progress_line(const std::string& text);
void clear_progress();

std::string join(const std::vector<std::string>& parts, const std::string& sep);
// For -v: the commands as a shell would read them back.
std::string shell_quote(const std::vector<std::string>& words);
std::string count_text(double v);  // "1.23 M ", "45 "
std::string seconds_text(std::chrono::milliseconds ms);  // "60 s", "1.5 s"
std::string absolute_path(const std::string& path);

}  // namespace vcx::launcher
