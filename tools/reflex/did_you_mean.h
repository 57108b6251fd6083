// "Did you mean": the closest valid command or option to a mistyped one, and
// the one-line usage error both `reflex` and `reflexc` print with it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

namespace reflex::cli {

// Edit distance where a swap of two neighbouring letters costs 1, as one
// slip does ("fromat", "diganose"); plain Levenshtein would charge 2.
inline size_t edit_distance(std::string_view a, std::string_view b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t> > d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i)
    for (size_t j = 1; j <= m; ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

// The valid name closest to `typed` (leading dashes ignored): within distance
// 2 (1 for names of up to 3 letters, where 2 would match almost anything),
// else the only name that `typed` (3+ letters) begins. Empty when none is.
inline std::string closest_name(std::string_view typed, const std::vector<std::string>& names) {
  auto bare = [](std::string_view s) {
    return s.substr(std::min(s.find_first_not_of('-'), s.size()));
  };
  const std::string_view t = bare(typed);
  std::string best, prefixed;
  size_t best_d = 3, prefixes = 0;
  for (const std::string& name : names) {
    const std::string_view n = bare(name);
    const size_t dist = edit_distance(t, n);
    const size_t limit = std::min(n.size(), t.size()) <= 3 ? 1 : 2;
    if (dist <= limit && dist < best_d) {
      best_d = dist;
      best = name;
    }
    if (t.size() >= 3 && n.size() > t.size() && n.substr(0, t.size()) == t) {
      ++prefixes;
      prefixed = name;
    }
  }
  if (!best.empty()) return best;
  return prefixes == 1 ? prefixed : std::string();
}

// The command names listed in a usage text: the first word of each line
// indented by two spaces after the "commands:" line, up to the blank line.
inline std::vector<std::string> commands_in_usage(std::string_view usage) {
  std::vector<std::string> out;
  std::istringstream in{std::string(usage)};
  std::string line;
  bool in_list = false;
  while (std::getline(in, line)) {
    if (line == "commands:") {
      in_list = true;
    } else if (in_list) {
      if (line.rfind("  ", 0) != 0 || line.size() < 3 || line[2] == ' ') break;
      out.push_back(line.substr(2, line.find(' ', 2) - 2));
    }
  }
  return out;
}

// "unknown command 'x'" with the closest command when there is one.
inline std::string unknown_command(const std::string& typed, std::string_view usage) {
  std::string msg = "unknown command '" + typed + "'";
  const std::string near = closest_name(typed, commands_in_usage(usage));
  if (!near.empty()) msg += "; did you mean '" + near + "'?";
  return msg;
}

// Every spelling of the app's options ("--format", "-o", "--help").
inline std::vector<std::string> option_names(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::Option* opt : app.get_options()) {
    for (const std::string& l : opt->get_lnames()) out.push_back("--" + l);
    for (const std::string& s : opt->get_snames()) out.push_back("-" + s);
  }
  return out;
}

// A parse error in one line: an unknown option, named with the closest valid
// one, comes first (a mistyped required option is reported as missing before
// the extras), else CLI11's own message.
inline std::string usage_error(const CLI::App& app, const CLI::ParseError& e) {
  for (const std::string& arg : app.remaining()) {
    if (arg.size() < 2 || arg[0] != '-') continue;
    const std::string opt = arg.substr(0, arg.find('='));
    std::string msg = "unknown option '" + opt + "'";
    const std::string near = closest_name(opt, option_names(app));
    if (!near.empty()) msg += "; did you mean '" + near + "'?";
    return msg;
  }
  return e.what();
}

}  // namespace reflex::cli
