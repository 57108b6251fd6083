// Per-line format detection (interfaces.md §3-4): timestamps, host fields, transports
// and prefixes. What a message means is the knowledge base's business; this
// file only knows how collectors frame lines. See the README, "Log formats, bundles and the
// topology file".
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_set>

#include "civil_time.h"
#include "line_parser_impl.h"
#include "reflex/json_text.h"
#include "reflex/log_format.h"
#include "reflex/values.h"

namespace reflex {

using namespace formats;

namespace {

constexpr int64_t kYear2000Us = 946684800LL * kUsPerSec;

bool is_space(char c) {
  return c == ' ' || c == '\t';
}
bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool is_hex(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

std::string_view ltrim(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && is_space(s[i])) ++i;
  return s.substr(i);
}
std::string_view rtrim(std::string_view s) {
  while (!s.empty() && (is_space(s.back()) || s.back() == '\r')) s.remove_suffix(1);
  return s;
}
std::string_view trim(std::string_view s) {
  return rtrim(ltrim(s));
}

// Valid UTF-8 and NUL check. The common case (ASCII, no NUL) runs 8 bytes at a
// time; anything else falls back to a byte-wise validation.
void scan_bytes(std::string_view s, bool* nul, bool* bad_utf8) {
  *nul = false;
  *bad_utf8 = false;
  const unsigned char* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size(), i = 0;
  constexpr uint64_t kHigh = 0x8080808080808080ULL, kOnes = 0x0101010101010101ULL;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    if ((w & kHigh) || ((w - kOnes) & ~w & kHigh)) break;
  }
  while (i < n) {
    unsigned char c = p[i];
    if (c == 0) {
      *nul = true;
      ++i;
      continue;
    }
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
    if (len == 0 || i + len > n) {
      *bad_utf8 = true;
      ++i;
      continue;
    }
    bool ok = true;
    for (size_t k = 1; k < len; ++k) ok = ok && (p[i + k] & 0xC0) == 0x80;
    if (ok && len == 3 && c == 0xE0 && p[i + 1] < 0xA0) ok = false;   // overlong
    if (ok && len == 3 && c == 0xED && p[i + 1] >= 0xA0) ok = false;  // surrogates
    if (ok && len == 4 && c == 0xF0 && p[i + 1] < 0x90) ok = false;
    if (ok && len == 4 && c == 0xF4 && p[i + 1] >= 0x90) ok = false;
    if (!ok) {
      *bad_utf8 = true;
      ++i;
      continue;
    }
    i += len;
  }
}

// Levels that start application lines; never taken for a syslog host field.
bool is_level_word(std::string_view w) {
  static const std::unordered_set<std::string_view> kLevels = {
      "INFO", "WARN", "WARNING", "ERROR", "DEBUG", "TRACE",  "FATAL", "CRITICAL", "NOTICE",
      "info", "warn", "warning", "error", "debug", "trace",  "fatal", "critical", "notice",
      "I",    "W",    "E",       "F",     "D",     "stdout", "stderr"};
  return kLevels.count(w) > 0;
}

bool hostname_token(std::string_view w) {
  if (w.empty() || w.size() > 253) return false;
  for (char c : w)
    if (!(is_alpha(c) || is_digit(c) || c == '-' || c == '.' || c == '_' || c == ':')) return false;
  return true;
}

// A syslog tag "name:", "name[pid]:" at the start of s; returns the length of
// the tag including ':' and the following space, 0 if none. *name gets the name.
size_t syslog_tag(std::string_view s, std::string_view* name) {
  size_t i = 0;
  while (i < s.size() && i < 64 && s[i] != ':' && s[i] != '[' && s[i] != ' ') ++i;
  if (i == 0 || i >= s.size()) return 0;
  *name = s.substr(0, i);
  if (s[i] == '[') {
    size_t close = s.find(']', i);
    if (close == std::string_view::npos || close > i + 24) return 0;
    i = close + 1;
  }
  if (i >= s.size() || s[i] != ':') return 0;
  ++i;
  if (i < s.size() && s[i] == ' ') ++i;
  return i;
}

// "[  123.456789]" at the start; returns length (with one trailing space), 0 if none.
size_t dmesg_mono(std::string_view s, double* mono) {
  if (s.empty() || s[0] != '[') return 0;
  size_t i = 1;
  while (i < s.size() && s[i] == ' ') ++i;
  size_t start = i;
  int64_t secs = 0;
  while (i < s.size() && is_digit(s[i]) && i - start < 12) secs = secs * 10 + (s[i++] - '0');
  if (i == start || i >= s.size() || s[i] != '.') return 0;
  ++i;
  size_t fstart = i;
  int64_t us = fraction(s, &i);
  // The kernel prints six digits (some collectors keep three); "[12.5] loss"
  // in a training log is not dmesg.
  if (i < fstart + 3 || i > fstart + 9 || i >= s.size() || s[i] != ']') return 0;
  ++i;
  *mono = double(secs) + double(us) / 1e6;
  // Newer kernels add a caller tag: "[ T1946]" / "[C3]".
  size_t j = i;
  while (j < s.size() && s[j] == ' ') ++j;
  if (j + 3 < s.size() && s[j] == '[') {
    size_t k = j + 1;
    while (k < s.size() && s[k] == ' ') ++k;
    if (k < s.size() && (s[k] == 'T' || s[k] == 'C')) {
      size_t d = k + 1;
      while (d < s.size() && is_digit(s[d])) ++d;
      if (d > k + 1 && d < s.size() && s[d] == ']') i = d + 1;
    }
  }
  while (i < s.size() && s[i] == ' ') ++i;
  return i;
}

// "[Tue Mar  5 10:11:12 2024]" (dmesg -T).
size_t dmesg_ctime(std::string_view s, Civil* c) {
  if (s.size() < 26 || s[0] != '[' || !weekday_abbrev(s.substr(1)) || s[4] != ' ') return 0;
  c->month = month_abbrev(s.substr(5));
  if (!c->month || s[8] != ' ') return 0;
  size_t i = 9;
  if (s[i] == ' ') ++i;
  size_t ds = i;
  c->day = 0;
  while (i < s.size() && is_digit(s[i]) && i - ds < 2) c->day = c->day * 10 + (s[i++] - '0');
  if (i == ds || i >= s.size() || s[i++] != ' ' || !hms(s, &i, c)) return 0;
  c->frac_us = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    c->frac_us = fraction(s, &i);
  }
  if (i >= s.size() || s[i++] != ' ' || !digits(s, &i, 4, &c->year) || i >= s.size() ||
      s[i++] != ']')
    return 0;
  if (!valid(*c)) return 0;
  while (i < s.size() && s[i] == ' ') ++i;
  return i;
}

// dmesg -H / --reltime: "[  +0.000844] " (seconds since the previous line).
size_t dmesg_reltime(std::string_view s, double* delta) {
  if (s.size() < 5 || s[0] != '[') return 0;
  size_t i = 1;
  while (i < s.size() && s[i] == ' ') ++i;
  if (i >= s.size() || s[i] != '+') return 0;
  ++i;
  size_t start = i;
  int64_t secs = 0;
  while (i < s.size() && is_digit(s[i]) && i - start < 9) secs = secs * 10 + (s[i++] - '0');
  if (i == start || i >= s.size() || s[i] != '.') return 0;
  ++i;
  size_t fstart = i;
  int64_t us = fraction(s, &i);
  if (i != fstart + 6 || i >= s.size() || s[i] != ']') return 0;
  ++i;
  while (i < s.size() && s[i] == ' ') ++i;
  *delta = double(secs) + double(us) / 1e6;
  return i;
}

// dmesg -H: "[May19 19:57] " / "[Jan11 09:52:03] " (month, day, minute; no year).
size_t dmesg_human(std::string_view s, Civil* c) {
  if (s.size() < 12 || s[0] != '[') return 0;
  c->month = month_abbrev(s.substr(1));
  if (!c->month) return 0;
  size_t i = 4, ds = i;
  c->day = 0;
  while (i < s.size() && is_digit(s[i]) && i - ds < 2) c->day = c->day * 10 + (s[i++] - '0');
  if (i == ds || i >= s.size() || s[i++] != ' ') return 0;
  if (!digits(s, &i, 2, &c->hour) || i >= s.size() || s[i++] != ':' ||
      !digits(s, &i, 2, &c->minute))
    return 0;
  c->second = 0;
  if (i < s.size() && s[i] == ':' && !digits(s, &++i, 2, &c->second)) return 0;
  if (i >= s.size() || s[i++] != ']') return 0;
  c->frac_us = 0;
  c->year = 0;
  if (!valid(*c)) return 0;
  while (i < s.size() && s[i] == ' ') ++i;
  return i;
}

// A shell prompt pasted with the command that made the capture:
// "user@gpu-07:~$ dmesg -T | grep -i xid", "(venv) root@h:/x# nvidia-smi",
// "[user@host dir]$ cmd". Returns the command (empty view when none).
std::optional<std::string_view> shell_prompt(std::string_view s) {
  size_t i = 0;
  if (!s.empty() && s[0] == '(') {  // a conda/venv name
    size_t close = s.find(") ");
    if (close == std::string_view::npos || close > 64) return std::nullopt;
    i = close + 2;
  }
  bool bracket = i < s.size() && s[i] == '[';
  if (bracket) ++i;
  size_t at = s.find('@', i);
  if (at == std::string_view::npos || at == i || at - i > 32) return std::nullopt;
  for (size_t k = i; k < at; ++k)
    if (!(is_alpha(s[k]) || is_digit(s[k]) || s[k] == '-' || s[k] == '_' || s[k] == '.'))
      return std::nullopt;
  size_t h = at + 1;
  while (h < s.size() &&
         (is_alpha(s[h]) || is_digit(s[h]) || s[h] == '-' || s[h] == '.' || s[h] == '_'))
    ++h;
  if (h == at + 1 || h >= s.size()) return std::nullopt;
  // "host:path$ " or "host path]$ "
  size_t end = std::string_view::npos;
  if (!bracket && s[h] == ':') {
    for (size_t k = h + 1; k + 1 < s.size() && k < h + 256; ++k)
      if ((s[k] == '$' || s[k] == '#') && (k + 1 == s.size() || s[k + 1] == ' ')) {
        end = k + 1;
        break;
      }
  } else if (bracket && s[h] == ' ') {
    size_t close = s.find(']', h);
    if (close != std::string_view::npos && close + 1 < s.size() &&
        (s[close + 1] == '$' || s[close + 1] == '#'))
      end = close + 2;
  }
  if (end == std::string_view::npos) return std::nullopt;
  return ltrim(s.substr(std::min(end, s.size())));
}

// The file name says the file is a kernel capture (dmesg output, kern.log, a
// pstore or serial-console dump): its lines are kernel lines by default.
bool kernel_capture_name(std::string_view path) {
  size_t slash = path.rfind('/');
  std::string base(path.substr(slash == std::string_view::npos ? 0 : slash + 1));
  for (char& ch : base) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  auto starts = [&](const char* p) { return base.rfind(p, 0) == 0; };
  return starts("dmesg") || starts("kern.log") || starts("kernel.log") || starts("kmsg") ||
         starts("messages") || starts("console") || starts("pstore") ||
         base.find("ramoops") != std::string::npos || starts("serial") ||
         path.find("/pstore/") != std::string_view::npos;
}

// The pasted command reads the kernel ring buffer ("sudo dmesg -T | grep xid",
// "journalctl -k").
bool kernel_capture_command(std::string_view cmd) {
  cmd = ltrim(cmd);
  if (cmd.substr(0, 5) == "sudo ") cmd = ltrim(cmd.substr(5));
  std::string_view first = cmd.substr(0, cmd.find(' '));
  if (first == "dmesg" || first.substr(first.size() >= 6 ? first.size() - 6 : 0) == "/dmesg")
    return true;
  if (first == "journalctl") {
    std::string_view args = cmd.substr(0, cmd.find('|'));
    return args.find(" -k") != std::string_view::npos ||
           args.find(" --dmesg") != std::string_view::npos ||
           args.find("_TRANSPORT=kernel") != std::string_view::npos;
  }
  return (first == "cat" || first == "grep" || first == "zcat" || first == "tail" ||
          first == "less" || first == "zgrep") &&
         (cmd.find("kern.log") != std::string_view::npos ||
          cmd.find("/dmesg") != std::string_view::npos);
}

// "[Mar 05 2024 10:11:12]" (NVIDIA Fabric Manager).
// "[2026-03-05 10:11:12]" or "[<RFC 3339>]": the length up to and including "]", or 0.
size_t bracket_iso(std::string_view s, Civil* c) {
  if (s.size() <= 21 || s[0] != '[' || !is_digit(s[1])) return 0;
  size_t n = parse_iso(s.substr(1), c);
  if (n == 0 || n + 1 >= s.size() || s[n + 1] != ']') return 0;
  return n + 2;
}

size_t fm_time(std::string_view s, Civil* c) {
  if (s.size() < 22 || s[0] != '[') return 0;
  c->month = month_abbrev(s.substr(1));
  size_t i = 4;
  if (!c->month || s[i++] != ' ' || !digits(s, &i, 2, &c->day) || s[i++] != ' ' ||
      !digits(s, &i, 4, &c->year) || s[i++] != ' ' || !hms(s, &i, c) || i >= s.size() ||
      s[i++] != ']')
    return 0;
  c->frac_us = 0;
  if (!valid(*c)) return 0;
  while (i < s.size() && s[i] == ' ') ++i;
  return i;
}

// "Mar  5 10:11:12" / "Mar 05 10:11:12[.123456]" (RFC 3164, journalctl short[-precise]).
size_t bsd_time(std::string_view s, Civil* c) {
  if (s.size() < 15) return 0;
  c->month = month_abbrev(s);
  if (!c->month || s[3] != ' ') return 0;
  size_t i = 4;
  if (s[i] == ' ') ++i;
  size_t ds = i;
  c->day = 0;
  while (i < s.size() && is_digit(s[i]) && i - ds < 2) c->day = c->day * 10 + (s[i++] - '0');
  if (i == ds || i >= s.size() || s[i++] != ' ' || !hms(s, &i, c)) return 0;
  c->frac_us = 0;
  if (i < s.size() && s[i] == '.' && i + 1 < s.size() && is_digit(s[i + 1])) {
    ++i;
    c->frac_us = fraction(s, &i);
  }
  c->year = 0;
  if (!valid(*c)) return 0;
  return i;
}

// PyTorch/glog "[E603 17:48:01.005271823 ProcessGroupNCCL.cpp:632] " or glog
// "E0603 17:48:01.005271 12345 file.cc:632] ". Month/day but no year.
size_t glog_prefix(std::string_view s, Civil* c) {
  size_t i = 0;
  bool bracket = !s.empty() && s[0] == '[';
  if (bracket) ++i;
  if (i >= s.size() || (s[i] != 'I' && s[i] != 'W' && s[i] != 'E' && s[i] != 'F')) return 0;
  ++i;
  size_t ds = i;
  while (i < s.size() && is_digit(s[i])) ++i;
  size_t nd = i - ds;
  if (nd != 3 && nd != 4) return 0;
  int md = 0;
  for (size_t k = ds; k < i; ++k) md = md * 10 + (s[k] - '0');
  c->month = md / 100;
  c->day = md % 100;
  if (i >= s.size() || s[i++] != ' ' || !hms(s, &i, c)) return 0;
  c->frac_us = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    c->frac_us = fraction(s, &i);
  }
  c->year = 0;
  if (!valid(*c)) return 0;
  size_t close = s.find(']', i);
  if (close == std::string_view::npos || close > i + 160) return 0;
  i = close + 1;
  while (i < s.size() && s[i] == ' ') ++i;
  return i;
}

// NCCL: "node-0017:1234:5678 [3] " -> local device hint 3. The name before the
// first ':' is often a pod name and never chooses the host.
size_t nccl_prefix(std::string_view s, int* rank) {
  size_t sp = s.find(' ');
  if (sp == std::string_view::npos || sp == 0 || sp > 256) return 0;
  std::string_view tok = s.substr(0, sp);
  size_t c2 = tok.rfind(':');
  if (c2 == std::string_view::npos || c2 + 1 >= tok.size()) return 0;
  size_t c1 = tok.rfind(':', c2 - 1);
  if (c1 == std::string_view::npos || c1 == 0 || c2 == 0) return 0;
  for (size_t k = c1 + 1; k < tok.size(); ++k)
    if (k != c2 && !is_digit(tok[k])) return 0;
  if (c2 == c1 + 1) return 0;
  size_t i = sp + 1;
  if (i >= s.size() || s[i] != '[') return 0;
  size_t j = i + 1;
  int r = 0;
  while (j < s.size() && is_digit(s[j]) && j - i < 7) r = r * 10 + (s[j++] - '0');
  if (j == i + 1 || j >= s.size() || s[j] != ']') return 0;
  *rank = r;
  ++j;
  while (j < s.size() && s[j] == ' ') ++j;
  return j;
}

// "[rank3]:" (PyTorch's per-rank prefix).
size_t rank_prefix(std::string_view s, int* rank) {
  if (s.size() < 8 || s.substr(0, 5) != "[rank") return 0;
  size_t i = 5;
  int r = 0;
  while (i < s.size() && is_digit(s[i]) && i < 14) r = r * 10 + (s[i++] - '0');
  if (i == 5 || i + 1 >= s.size() || s[i] != ']' || s[i + 1] != ':') return 0;
  *rank = r;
  i += 2;
  while (i < s.size() && s[i] == ' ') ++i;
  return i;
}

// "kern  :warn  : " (dmesg -x); *kern set when the facility is kern.
size_t facility_prefix(std::string_view s, bool* kern) {
  size_t i = 0;
  while (i < s.size() && ((s[i] >= 'a' && s[i] <= 'z') || is_digit(s[i])) && i < 10) ++i;
  if (i == 0) return 0;
  if (i >= s.size() || (s[i] != ' ' && s[i] != ':')) return 0;
  std::string_view fac = s.substr(0, i);
  static const std::unordered_set<std::string_view> kFacilities = {
      "kern",   "user",   "mail",   "daemon",   "auth",   "syslog", "lpr",
      "news",   "uucp",   "cron",   "authpriv", "ftp",    "local0", "local1",
      "local2", "local3", "local4", "local5",   "local6", "local7"};
  static const std::unordered_set<std::string_view> kLevels = {"emerg", "alert",  "crit", "err",
                                                               "warn",  "notice", "info", "debug"};
  if (!kFacilities.count(fac)) return 0;
  while (i < s.size() && s[i] == ' ') ++i;
  if (i >= s.size() || s[i++] != ':') return 0;
  size_t ls = i;
  while (i < s.size() && s[i] >= 'a' && s[i] <= 'z' && i - ls < 8) ++i;
  if (i == ls || !kLevels.count(s.substr(ls, i - ls))) return 0;
  while (i < s.size() && s[i] == ' ') ++i;
  if (i >= s.size() || s[i++] != ':') return 0;
  if (i < s.size() && s[i] == ' ') ++i;
  *kern = fac == "kern";
  return i;
}

// talosctl dmesg: "<node>: <facility>: <level>: [<RFC 3339>]: msg", the level
// right-aligned ("kern:     err:", "kern: warning:"). Returns the length of
// the prefix up to the time's "[" (0 if none); *node gets the node, *kern is
// set when the facility is kern.
size_t talos_prefix(std::string_view s, std::string_view* node, bool* kern) {
  size_t colon = s.find(": ");
  if (colon == 0 || colon == std::string_view::npos || colon > 64) return 0;
  if (!hostname_token(s.substr(0, colon))) return 0;
  size_t i = colon + 2, fs = i;
  while (i < s.size() && ((s[i] >= 'a' && s[i] <= 'z') || is_digit(s[i])) && i - fs < 9) ++i;
  if (i == fs || i >= s.size() || s[i] != ':') return 0;
  std::string_view fac = s.substr(fs, i - fs);
  bool k = false;
  // facility_prefix() knows the facilities and levels: ask it in dmesg -x form.
  std::string probe(fac);
  size_t j = i + 1;
  while (j < s.size() && s[j] == ' ') ++j;
  size_t ls = j;
  while (j < s.size() && s[j] >= 'a' && s[j] <= 'z' && j - ls < 8) ++j;
  std::string_view level = s.substr(ls, j - ls);
  if (level == "warning") level = "warn";
  probe += ":" + std::string(level) + ":";
  if (facility_prefix(probe, &k) != probe.size()) return 0;
  if (j + 2 >= s.size() || s[j] != ':' || s[j + 1] != ' ' || s[j + 2] != '[') return 0;
  *node = s.substr(0, colon);
  *kern = k;
  return j + 2;
}

// JSON string escapes -> UTF-8. False on a malformed escape.
bool json_unescape(std::string_view in, std::string* out) {
  out->clear();
  out->reserve(in.size());
  auto hex4 = [&](size_t at, unsigned* v) {
    if (at + 4 > in.size()) return false;
    *v = 0;
    for (size_t k = at; k < at + 4; ++k) {
      char c = in[k];
      *v <<= 4;
      if (c >= '0' && c <= '9')
        *v |= unsigned(c - '0');
      else if (c >= 'a' && c <= 'f')
        *v |= unsigned(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        *v |= unsigned(c - 'A' + 10);
      else
        return false;
    }
    return true;
  };
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c != '\\') {
      out->push_back(c);
      continue;
    }
    if (++i >= in.size()) return false;
    if (char plain = json_short_escape(in[i])) {
      out->push_back(plain);
      continue;
    }
    if (in[i] != 'u') return false;
    unsigned cp;
    if (!hex4(i + 1, &cp)) return false;
    i += 4;
    if (cp >= 0xD800 && cp < 0xDC00 && i + 6 < in.size() + 0 && in[i + 1] == '\\' &&
        in[i + 2] == 'u') {
      unsigned lo;
      if (hex4(i + 3, &lo) && lo >= 0xDC00 && lo < 0xE000) {
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        i += 6;
      }
    }
    append_utf8(out, cp);
  }
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------

LineParserImpl::LineParserImpl(const Topology& t, FormatOptions o, FormatStats* s)
    : topo(t), opts(o), stats(s ? s : &own_stats) {}

void LineParserImpl::note_once(const std::string& n) {
  if (noted.insert(n).second) stats->notes.push_back(n);
}

void LineParserImpl::begin_file(FileContext c) {
  ctx = std::move(c);
  have_time = false;
  last_time = EventTime{};
  last_transport = kTransportApp;
  file_year = 0;
  rollover_month = 0;
  year_bump = 0;
  csv_keys.clear();
  cri_partial.clear();
  cri_pending = false;
  field_cache_key.clear();
  field_cache_valid = false;
  noted_no_boot = noted_no_year = false;
  file_kernel_capture = kernel_capture_name(ctx.file);
  capture_cmd_kernel = false;
  {
    size_t slash = ctx.file.rfind('/');
    bug_report =
        ctx.file.compare(slash == std::string::npos ? 0 : slash + 1, 17, "nvidia-bug-report") == 0;
  }
  section_header_pending = false;
  if (auto h = topo.resolve_host(ctx.host_dir)) {
    dir_host = *h;
    dir_known = true;
  } else {
    dir_host = ctx.host_dir;
    dir_known = false;
  }
}

// The host named by a syslog/journal field. Resolved names win; an unknown
// field on a known directory keeps the directory (noted once per file); an
// unknown field on an unknown directory is kept as written.
void LineParserImpl::host_from_field(std::string_view field, LogRecord* out) {
  if (field.empty() || field == "localhost" || field == "localhost.localdomain" || field == "-")
    return;
  if (!field_cache_valid || field != field_cache_key) {
    field_cache_key.assign(field);
    field_cache_valid = true;
    if (auto h = topo.resolve_host(field)) {
      field_cache_host = *h;
      field_cache_known = true;
    } else if (dir_known) {
      field_cache_host = dir_host;
      field_cache_known = true;
      note_once("host field '" + std::string(field) + "' in " + ctx.file +
                " is not in the topology; its lines are placed on " + dir_host);
    } else {
      field_cache_host.assign(field);
      field_cache_known = false;
    }
  }
  out->host.assign(field_cache_host);
  out->host_known = field_cache_known;
}

// Whether a token names a topology host (cached: ISO-prefixed app logs probe
// every line).
bool LineParserImpl::known_host_token(std::string_view tok) {
  if (probe_valid && tok == probe_key) return probe_known;
  probe_key.assign(tok);
  probe_valid = true;
  probe_known = topo.resolve_host(tok).has_value();
  return probe_known;
}

int LineParserImpl::year_for(int month) {
  // Year-less formats: the file's own previous dated line, else the bundle's
  // year; December -> January in one file moves to the next year.
  int base = file_year ? file_year : ctx.year.value_or(0);
  if (rollover_month == 12 && month == 1) ++year_bump;
  rollover_month = month;
  if (!base) return 0;
  return base + year_bump;
}

void LineParserImpl::set_wall(int64_t us, LogRecord* out) {
  out->time.wall = us;
}

void LineParserImpl::set_civil(const Civil& c, bool zone_less, LogRecord* out) {
  int year = c.year;
  if (year == 0) {
    year = year_for(c.month);
    if (year == 0) {
      year = 1970;  // no dated line anywhere: keep the order, flag the time
      out->time_implausible = true;
      if (!noted_no_year) {  // said once per file, without building the text per line
        noted_no_year = true;
        note_once("no dated line to take the year from for " + ctx.file +
                  "; year-less times are flagged implausible");
      }
    }
  } else {
    file_year = year;
    rollover_month = c.month;
    year_bump = 0;
  }
  int zone = c.has_zone ? c.zone_s : (zone_less ? ctx.tz_offset_s : 0);
  out->time.wall = to_us(c, year, zone);
}

void LineParserImpl::set_mono(double mono, LogRecord* out) {
  out->time.mono = mono;
  if (ctx.boot_time_us) {
    out->time.wall = *ctx.boot_time_us + int64_t(mono * 1e6 + (mono >= 0 ? 0.5 : -0.5));
  } else if (!noted_no_boot) {
    noted_no_boot = true;
    note_once("raw dmesg times in " + ctx.file +
              " have no boot_time: they are ordered within their host only");
  }
}

// Syslog text whose tag is "kernel" counts as kernel unless strict_transport.
void LineParserImpl::syslog_body(std::string_view rest, LogRecord* out, std::string_view* msg,
                                 bool kern_facility, bool have_facility) {
  // rest: "host tag[pid]: msg" (some senders omit the host: "tag[pid]: msg")
  std::string_view tag, body;
  size_t tl = syslog_tag(rest, &tag);
  if (tl && tag.find('.') == std::string_view::npos && !known_host_token(tag)) {
    body = rest;  // no host field
  } else {
    size_t sp = rest.find(' ');
    std::string_view host = sp == std::string_view::npos ? rest : rest.substr(0, sp);
    host_from_field(host, out);
    body = sp == std::string_view::npos ? std::string_view() : rest.substr(sp + 1);
    tl = syslog_tag(body, &tag);
  }
  out->transport = kTransportSyslog;
  if (have_facility && kern_facility) out->transport = kTransportKernel;
  if (tl) {
    body.remove_prefix(tl);
    if (tag == "kernel" && !have_facility) {
      if (!opts.strict_transport) out->transport = kTransportKernel;
      // "kernel: [ 1843.308145] NVRM: ..." carries the ring-buffer time too.
      double mono;
      if (size_t n = dmesg_mono(body, &mono)) {
        out->time.mono = mono;
        body.remove_prefix(n);
      }
    }
  }
  *msg = body;
}

// A syslog kernel line quoted inside other text (an alert, a ticket):
// "Xid errors on instance: X, Error: May 19 07:08:57 X kernel: [680111.6] NVRM: ...".
// The quoted line is parsed as the syslog line it is (kernel unless strict).
bool LineParserImpl::embedded_syslog(std::string_view raw, LogRecord* out, std::string_view* msg) {
  size_t from = 0;
  for (int tries = 0; tries < 4; ++tries) {
    size_t k = raw.find(" kernel: ", from);
    if (k == std::string_view::npos || k < 17) return false;
    from = k + 1;
    size_t hs = raw.rfind(' ', k - 1);
    if (hs == std::string_view::npos || hs < 15 || hs + 1 >= k) continue;
    if (!hostname_token(raw.substr(hs + 1, k - hs - 1))) continue;
    Civil c;
    for (size_t len : {size_t(15), size_t(16)}) {  // "May 19 07:08:57", "May  9 ..."
      if (hs < len) continue;
      size_t t = hs - len;
      if (bsd_time(raw.substr(t), &c) != len) continue;
      if (t > 0 && raw[t - 1] != ' ' && raw[t - 1] != '\'' && raw[t - 1] != '"' &&
          raw[t - 1] != '`' && raw[t - 1] != '(')
        continue;
      set_civil(c, true, out);
      syslog_body(raw.substr(hs + 1), out, msg, false, false);
      ++stats->embedded_lines;
      return true;
    }
  }
  return false;
}

// RFC 5424 after "<PRI>1 ".
bool LineParserImpl::rfc5424(std::string_view s, int pri, LogRecord* out, std::string_view* msg) {
  auto field = [&](std::string_view* f) {
    size_t sp = s.find(' ');
    if (sp == std::string_view::npos) {
      *f = s;
      s = {};
      return true;
    }
    *f = s.substr(0, sp);
    s.remove_prefix(sp + 1);
    return true;
  };
  std::string_view ts, host, app, procid, msgid;
  field(&ts);
  field(&host);
  field(&app);
  field(&procid);
  field(&msgid);
  if (ts != "-") {
    Civil c;
    if (parse_iso(ts, &c) != ts.size()) return false;
    set_civil(c, true, out);
  }
  // Structured data: "-" or one or more "[...]" (']' may be escaped inside).
  if (!s.empty() && s[0] == '-') {
    s.remove_prefix(1);
  } else {
    while (!s.empty() && s[0] == '[') {
      size_t i = 1;
      bool esc = false;
      for (; i < s.size(); ++i) {
        if (esc)
          esc = false;
        else if (s[i] == '\\')
          esc = true;
        else if (s[i] == ']')
          break;
      }
      if (i >= s.size()) return false;
      s.remove_prefix(i + 1);
    }
  }
  if (!s.empty() && s[0] == ' ') s.remove_prefix(1);
  if (s.size() >= 3 && s.substr(0, 3) == "\xEF\xBB\xBF") s.remove_prefix(3);  // BOM
  if (host != "-") host_from_field(host, out);
  out->transport = (pri >> 3) == 0 ? kTransportKernel : kTransportSyslog;
  *msg = s;
  return true;
}

// Fast path for `journalctl -o json` lines: one flat object of string and
// number values. Anything else (byte-array MESSAGE, nesting, odd escapes in
// the fields used) returns false and takes nlohmann's full parser.
bool LineParserImpl::journal_fast(std::string_view s, LogRecord* out, std::string_view* msg) {
  size_t i = 1;
  auto ws = [&] {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  };
  auto str = [&](std::string_view* v, bool* esc) {
    if (i >= s.size() || s[i] != '"') return false;
    size_t st = ++i;
    *esc = false;
    while (i < s.size() && s[i] != '"') {
      if (s[i] == '\\') {
        *esc = true;
        i += 2;
      } else {
        ++i;
      }
    }
    if (i >= s.size()) return false;
    *v = s.substr(st, i - st);
    ++i;
    return true;
  };
  std::string_view rt, mono, host, tr, message;
  bool msg_esc = false, have_msg = false;
  while (true) {
    ws();
    std::string_view key, v;
    bool kesc, esc = false;
    if (!str(&key, &kesc) || kesc) return false;
    ws();
    if (i >= s.size() || s[i] != ':') return false;
    ++i;
    ws();
    if (i >= s.size()) return false;
    if (s[i] == '"') {
      if (!str(&v, &esc)) return false;
    } else if (s[i] == '{' || s[i] == '[') {
      return false;
    } else {
      size_t st = i;
      while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ' ') ++i;
      v = s.substr(st, i - st);
      if (key == "MESSAGE") return false;  // null/number: let the full parser decide
    }
    if (key == "MESSAGE") {
      message = v;
      msg_esc = esc;
      have_msg = true;
    } else if (key == "__REALTIME_TIMESTAMP") {
      rt = v;
    } else if (key == "__MONOTONIC_TIMESTAMP") {
      mono = v;
    } else if (key == "_HOSTNAME") {
      if (esc) return false;
      host = v;
    } else if (key == "_TRANSPORT") {
      if (esc) return false;
      tr = v;
    }
    ws();
    if (i >= s.size()) return false;
    if (s[i] == ',') {
      ++i;
      continue;
    }
    if (s[i] != '}') return false;
    ++i;
    break;
  }
  ws();
  if (i != s.size() || !have_msg) return false;
  if (msg_esc) {
    if (!json_unescape(message, &json_msg)) return false;
    *msg = json_msg;
  } else {
    *msg = message;
  }
  if (auto us = parse_int(rt)) {
    out->time.wall = *us;
    file_year = year_of_us(*us);
    rollover_month = 0;
    year_bump = 0;
  }
  if (auto us = parse_int(mono)) out->time.mono = double(*us) / 1e6;
  if (!host.empty()) host_from_field(host, out);
  out->transport = tr == "kernel"   ? kTransportKernel
                   : tr == "syslog" ? kTransportSyslog
                                    : kTransportJournal;
  return true;
}

// `journalctl -o json`: one object per line.
bool LineParserImpl::journal_json(std::string_view line, LogRecord* out, std::string_view* msg) {
  nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return false;
  auto m = j.find("MESSAGE");
  if (m == j.end()) {
    // Not a journal entry; maybe an envelope written to a file.
    if (j.contains("msg") || j.contains("message")) return envelope_in_file(j, out, msg);
    return false;
  }
  json_msg.clear();
  if (m->is_string()) {
    json_msg = m->get<std::string>();
  } else if (m->is_array()) {  // non-UTF-8 messages are byte arrays
    for (auto& b : *m)
      if (b.is_number_integer()) json_msg.push_back(char(b.get<int>() & 0xff));
  } else if (!m->is_null()) {
    json_msg = m->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  auto str = [&](const char* k) -> std::string {
    auto it = j.find(k);
    if (it == j.end()) return {};
    if (it->is_string()) return it->get<std::string>();
    if (it->is_number()) return it->dump();
    return {};
  };
  std::string ts = str("__REALTIME_TIMESTAMP");
  if (!ts.empty()) {
    if (auto us = parse_int(ts)) {
      out->time.wall = *us;
      file_year = year_of_us(*us);
      rollover_month = 0;
      year_bump = 0;
    }
  }
  std::string mono = str("__MONOTONIC_TIMESTAMP");
  if (!mono.empty())
    if (auto us = parse_int(mono)) out->time.mono = double(*us) / 1e6;
  json_host = str("_HOSTNAME");
  if (!json_host.empty()) host_from_field(json_host, out);
  std::string tr = str("_TRANSPORT");
  out->transport = tr == "kernel"   ? kTransportKernel
                   : tr == "syslog" ? kTransportSyslog
                                    : kTransportJournal;
  *msg = json_msg;
  return true;
}

bool LineParserImpl::envelope_in_file(const nlohmann::json& j, LogRecord* out,
                                      std::string_view* msg) {
  auto m = j.find("msg");
  if (m == j.end()) m = j.find("message");
  if (m == j.end() || !m->is_string()) return false;
  json_msg = m->get<std::string>();
  if (auto h = j.find("host"); h != j.end() && h->is_string()) {
    json_host = h->get<std::string>();
    host_from_field(json_host, out);
  }
  auto t = j.find("ts");
  if (t == j.end()) t = j.find("timestamp");
  if (t != j.end() && t->is_string()) {
    Civil c;
    std::string ts = t->get<std::string>();
    if (parse_iso(ts, &c) == ts.size() && ts.size()) set_civil(c, true, out);
  }
  out->transport = kTransportApp;
  if (auto s = j.find("source"); s != j.end() && s->is_string()) {
    if (auto tr = transport_from_string(s->get<std::string>())) out->transport = *tr;
  }
  *msg = json_msg;
  return true;
}

// Application-level prefixes inside a message: "[rank3]:[E603 ...]" and NCCL's
// "host:pid:tid [3] ". They give a rank hint; the host name is ignored.
void LineParserImpl::app_prefixes(std::string_view* msg, LogRecord* out) {
  int r = -1;
  // torch.distributed.elastic's "[default7]:" (a local rank, not a global one)
  // and `kubectl logs --prefix`'s "[pod/name/container] ".
  if (msg->size() > 10 && (*msg)[0] == '[') {
    if (msg->substr(1, 7) == "default") {
      size_t i = 8;
      while (i < msg->size() && is_digit((*msg)[i]) && i < 14) ++i;
      if (i > 8 && i + 1 < msg->size() && (*msg)[i] == ']' && (*msg)[i + 1] == ':') {
        msg->remove_prefix(i + 2);
        *msg = ltrim(*msg);
      }
    } else if (msg->substr(1, 4) == "pod/") {
      size_t close = msg->find("] ");
      if (close != std::string_view::npos && close < 256) *msg = ltrim(msg->substr(close + 2));
    }
  }
  if (size_t n = rank_prefix(*msg, &r)) {
    out->rank_hint = r;
    msg->remove_prefix(n);
    Civil c;
    if (size_t g = glog_prefix(*msg, &c)) {
      if (!out->time.wall && !out->time.mono) set_civil(c, true, out);
      msg->remove_prefix(g);
    }
    return;
  }
  if (!msg->empty() && is_hex(msg->front()) == false && !is_alpha(msg->front())) return;
  if (size_t n = nccl_prefix(*msg, &r)) {
    out->rank_hint = r;
    msg->remove_prefix(n);
  }
}

// nvidia-smi --format=csv rows: "2024/03/05 10:11:12.123, 0, NVIDIA H100, ...".
// With a header seen in this file, the row is rewritten as "name=value; ...".
bool LineParserImpl::csv_row(std::string_view s, LogRecord* out, std::string_view* msg) {
  Civil c;
  size_t i = 0;
  if (!digits(s, &i, 4, &c.year) || i >= s.size() || s[i++] != '/' || !digits(s, &i, 2, &c.month) ||
      i >= s.size() || s[i++] != '/' || !digits(s, &i, 2, &c.day) || i >= s.size() ||
      s[i++] != ' ' || !hms(s, &i, &c))
    return false;
  c.frac_us = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    c.frac_us = fraction(s, &i);
  }
  if (!valid(c)) return false;
  set_civil(c, true, out);
  std::string_view rest = s.substr(i);
  if (!rest.empty() && rest[0] == ',') rest.remove_prefix(1);
  rest = ltrim(rest);
  if (csv_keys.empty()) {
    *msg = rest;
    return true;
  }
  // One pass, no temporaries: a telemetry node writes a row per GPU a second.
  csv_msg.clear();
  const char* p = rest.data();
  const char* const end = p + rest.size();
  for (size_t col = 1;; ++col) {  // column 0 is the timestamp
    const char* comma = static_cast<const char*>(std::memchr(p, ',', end - p));
    const char* vb = p;
    const char* ve = comma ? comma : end;
    while (vb < ve && is_space(*vb)) ++vb;
    while (ve > vb && (is_space(ve[-1]) || ve[-1] == '\r')) --ve;
    if (col < csv_keys.size()) {
      csv_msg += csv_keys[col];
    } else {
      csv_msg += col > 1 ? "; col" : "col";
      csv_msg += std::to_string(col);
      csv_msg += '=';
    }
    csv_msg.append(vb, ve - vb);
    if (!comma) break;
    p = comma + 1;
  }
  *msg = csv_msg;
  return true;
}

// "timestamp, index, name, temperature.gpu, utilization.gpu [%]" -> column names.
bool LineParserImpl::csv_header(std::string_view s) {
  if (s.size() < 11 || s.substr(0, 10) != "timestamp,") return false;
  csv_keys.clear();
  while (true) {
    size_t comma = s.find(',');
    std::string_view v = trim(s.substr(0, comma));
    if (size_t br = v.find(" ["); br != std::string_view::npos) v = rtrim(v.substr(0, br));
    // The rewritten row's "; name=" for each column (the first without "; ").
    std::string key = csv_keys.size() > 1 ? "; " : "";
    key.append(v);
    key += '=';
    csv_keys.push_back(std::move(key));
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return true;
}

// "   1 | 03/05/2024 | 10:11:12 | Power Supply #0x51 | Failure detected | Asserted"
bool LineParserImpl::sel_line(std::string_view s, LogRecord* out, std::string_view* msg) {
  size_t i = 0;
  while (i < s.size() && s[i] == ' ') ++i;
  size_t id = i;
  while (i < s.size() && is_hex(s[i])) ++i;
  if (i == id || s.substr(i, 3) != " | ") return false;
  i += 3;
  Civil c;
  if (!digits(s, &i, 2, &c.month) || i >= s.size() || s[i++] != '/' || !digits(s, &i, 2, &c.day) ||
      i >= s.size() || s[i++] != '/' || !digits(s, &i, 4, &c.year) || s.substr(i, 3) != " | ")
    return false;
  i += 3;
  if (!hms(s, &i, &c) || !valid(c)) return false;
  c.frac_us = 0;
  if (s.substr(i, 3) == " | ") i += 3;
  set_civil(c, true, out);
  *msg = s.substr(i);
  return true;
}

// Nothing to parse: an empty line (false); else the record's defaults are set.
bool LineParserImpl::begin_line(std::string_view* raw_io, uint64_t line_no, LogRecord* out) {
  std::string_view& raw = *raw_io;
  ++stats->lines;
  stats->bytes += raw.size() + 1;
  if (raw.size() > opts.max_line_bytes) {
    raw = raw.substr(0, opts.max_line_bytes);
    ++stats->truncated_long_lines;
  }
  while (!raw.empty() && (raw.back() == '\r' || raw.back() == '\n')) raw.remove_suffix(1);
  bool nul, bad;
  scan_bytes(raw, &nul, &bad);
  if (nul) ++stats->nul_bytes;
  if (bad) ++stats->invalid_utf8;

  // CRI partial lines wait for their final part.
  out->raw = raw;
  out->file = ctx.file;
  out->line_no = line_no;
  out->rank_hint = -1;
  out->time_inherited = false;
  out->time_implausible = false;
  out->time.wall.reset();
  out->time.mono.reset();
  out->transport = kTransportApp;
  if (out->host != dir_host) out->host.assign(dir_host);
  out->host_known = dir_known;
  if (trim(raw).empty()) return false;

  return true;
}

// A line that is not a log line (bug-report section rules and headers, pasted
// shell prompts): true, and the state it sets for the lines after it.
bool LineParserImpl::skip_non_log(std::string_view raw) {
  const char c0 = raw[0];
  // nvidia-bug-report.log: sections open with a rule of underscores and a
  // header naming the command or file they hold ("dmesg:", "*** /var/log/
  // kern.log"); a section of the kernel ring buffer holds kernel lines.
  if (bug_report) {
    if (raw.size() >= 20 && raw.find_first_not_of('_') == std::string_view::npos) {
      capture_cmd_kernel = false;
      section_header_pending = true;
      ++stats->prompt_lines;
      return true;
    }
    if (section_header_pending) {
      section_header_pending = false;
      std::string_view h = trim(raw);
      if (h.substr(0, 4) == "*** ") h = ltrim(h.substr(4));
      if (!h.empty() && h.back() == ':') h.remove_suffix(1);
      capture_cmd_kernel = kernel_capture_command(h) || kernel_capture_name(h) ||
                           h.substr(0, 25) == "Scanning kernel log files";
      ++stats->prompt_lines;
      return true;
    }
  }

  // A pasted shell prompt is not a log line; its command tells what the
  // following lines are (`dmesg -T | grep -i xid`: kernel lines).
  if ((c0 == '[' || c0 == '(' || is_alpha(c0)) &&
      std::memchr(raw.data(), '@', std::min<size_t>(raw.size(), 100)) != nullptr) {
    if (auto cmd = shell_prompt(raw)) {
      ++stats->prompt_lines;
      capture_cmd_kernel = kernel_capture_command(*cmd);
      return true;
    }
  }

  return false;
}

// "[...": dmesg (monotonic, relative, -T, ctime), fabric manager, rank prefixes, ISO in brackets.
bool LineParserImpl::bracket_line(std::string_view raw, LogRecord* out, std::string_view* msg_out) {
  std::string_view& msg = *msg_out;
  bool known_format = false;
  Civil c;
  double mono;
  int r;
  double delta;
  if (size_t n = dmesg_mono(raw, &mono)) {
    if (mono >= 1e9) {
      // No kernel runs 31 years: "[1709633472.123456] [host:pid:tid] ..." is a
      // program's Unix-epoch stamp (UCX), on the wall clock, not a kernel line.
      out->time.wall = static_cast<TimeUs>(mono * 1e6 + 0.5);
      file_year = year_of_us(*out->time.wall);
      msg = ltrim(raw.substr(n));
    } else {
      set_mono(mono, out);
      out->transport = kTransportKernel;
      msg = raw.substr(n);
    }
    known_format = true;
  } else if ((n = dmesg_reltime(raw, &delta))) {
    // Relative to the previous line: on its clock when there is one.
    if (have_time && (last_time.wall || last_time.mono)) {
      if (last_time.wall) out->time.wall = *last_time.wall + int64_t(delta * 1e6 + 0.5);
      if (last_time.mono) out->time.mono = *last_time.mono + delta;
    } else {
      set_mono(delta, out);
    }
    out->transport = kTransportKernel;
    msg = raw.substr(n);
    known_format = true;
  } else if ((n = dmesg_human(raw, &c))) {
    set_civil(c, true, out);
    out->transport = kTransportKernel;
    msg = raw.substr(n);
    known_format = true;
  } else if ((n = dmesg_ctime(raw, &c))) {
    set_civil(c, true, out);
    out->transport = kTransportKernel;
    msg = raw.substr(n);
    // Some collectors keep the journal's "host kernel: " after the -T time.
    size_t sp = msg.find(' ');
    if (sp != std::string_view::npos && sp > 0 && msg.substr(sp + 1, 8) == "kernel: " &&
        hostname_token(msg.substr(0, sp))) {
      host_from_field(msg.substr(0, sp), out);
      msg.remove_prefix(sp + 9);
    }
    known_format = true;
  } else if ((n = fm_time(raw, &c))) {
    set_civil(c, true, out);
    msg = raw.substr(n);
    known_format = true;
  } else if (rank_prefix(raw, &r)) {
    known_format = true;  // handled by app_prefixes below
  } else if ((n = bracket_iso(raw, &c))) {
    set_civil(c, true, out);
    msg = ltrim(raw.substr(n));
    known_format = true;
  }
  return known_format;
}

// " [2024-08-01 09:44:55] iteration 1/ 5 | ...": Megatron-LM's training_log
// starts its line with a space and a bracketed local time.
bool LineParserImpl::indented_bracket_iso(std::string_view raw, LogRecord* out,
                                          std::string_view* msg) {
  size_t lead = raw.find_first_not_of(' ');
  if (lead == std::string_view::npos || lead > 4) return false;
  Civil c;
  size_t n = bracket_iso(raw.substr(lead), &c);
  if (!n) return false;
  set_civil(c, true, out);
  *msg = ltrim(raw.substr(lead + n));
  return true;
}

// "<PRI>...": RFC 5424, dmesg -r, RFC 3164 with a priority.
bool LineParserImpl::priority_line(std::string_view raw, LogRecord* out,
                                   std::string_view* msg_out) {
  std::string_view& msg = *msg_out;
  bool known_format = false;
  Civil c;
  double mono;
  size_t i = 1;
  int pri = 0;
  while (i < raw.size() && is_digit(raw[i]) && i < 4) pri = pri * 10 + (raw[i++] - '0');
  if (i > 1 && i < raw.size() && raw[i] == '>' && pri < 192) {
    std::string_view s = raw.substr(i + 1);
    size_t n;
    if (s.size() > 2 && s[0] == '1' && s[1] == ' ') {
      known_format = rfc5424(s.substr(2), pri, out, &msg);
    } else if ((n = dmesg_mono(s, &mono))) {  // dmesg -r: "<6>[  12.345] msg"
      set_mono(mono, out);
      out->transport = kTransportKernel;
      msg = s.substr(n);
      known_format = true;
    } else if ((n = bsd_time(s, &c)) && n < s.size() && s[n] == ' ') {
      set_civil(c, true, out);
      syslog_body(s.substr(n + 1), out, &msg, (pri >> 3) == 0, true);
      known_format = true;
    }
  }
  return known_format;
}

// A leading digit: ISO times (dmesg --time-format iso, CRI, RFC 3339 syslog),
// nvidia-smi CSV rows, SEL lines, epoch-second counter dumps. *skip: a CRI "P" part.
bool LineParserImpl::digit_line(std::string_view raw, LogRecord* out, std::string_view* msg_out,
                                bool* skip) {
  std::string_view& msg = *msg_out;
  bool known_format = false;
  Civil c;
  bool comma = false;
  size_t n;
  if ((n = parse_iso(raw, &c, &comma))) {
    set_civil(c, true, out);
    known_format = true;
    std::string_view rest = ltrim(raw.substr(n));
    if (comma && c.has_zone) {
      out->transport = kTransportKernel;  // dmesg --time-format iso
      msg = rest;
    } else if (rest.size() > 9 &&
               (rest.substr(0, 7) == "stdout " || rest.substr(0, 7) == "stderr ") &&
               (rest[7] == 'F' || rest[7] == 'P') && (rest.size() == 8 || rest[8] == ' ')) {
      // Kubernetes CRI: "<ts> stdout F msg"; P lines are partial.
      std::string_view part = rest.size() > 9 ? rest.substr(9) : std::string_view();
      if (rest[7] == 'P') {
        if (!cri_pending) cri_time = out->time;
        cri_pending = true;
        cri_partial.append(part);
        ++stats->cri_partial_joined;
        *skip = true;
        return false;
      }
      if (cri_pending) {
        cri_partial.append(part);
        out->time = cri_time;
        cri_pending = false;
        cri_joined.swap(cri_partial);
        cri_partial.clear();
        msg = cri_joined;
      } else {
        msg = part;
      }
    } else {
      msg = rest;
      // RFC 3339 syslog files (rsyslog's default, journalctl -o short-iso):
      // "<ts> host tag[pid]: msg".
      if (raw[10] == 'T' && c.has_zone) {
        size_t sp = rest.find(' ');
        if (sp != std::string_view::npos) {
          std::string_view host = rest.substr(0, sp), tag;
          if (hostname_token(host) && !is_level_word(host) &&
              syslog_tag(rest.substr(sp + 1), &tag) && rest[sp + 1] != '[' &&
              (tag == "kernel" || host == ctx.host_dir || known_host_token(host)))
            syslog_body(rest, out, &msg, false, false);
        }
      }
    }
  } else if (csv_row(raw, out, &msg)) {
    known_format = true;
  } else if (sel_line(raw, out, &msg)) {
    known_format = true;
  } else if (talos_line(raw, out, &msg)) {
    known_format = true;
  } else {
    // Epoch seconds: "1709633472.123456 /sys/class/infiniband/...:1".
    size_t i = 0;
    int64_t secs = 0;
    while (i < raw.size() && is_digit(raw[i]) && i < 11) secs = secs * 10 + (raw[i++] - '0');
    if ((i == 10) && i < raw.size() && (raw[i] == '.' || raw[i] == ' ')) {
      int64_t us = 0;
      if (raw[i] == '.') {
        ++i;
        us = fraction(raw, &i);
      }
      bool frac = raw[10] == '.';
      if (i < raw.size() && raw[i] == ' ' && (frac || (i + 1 < raw.size() && raw[i + 1] == '/'))) {
        out->time.wall = secs * kUsPerSec + us;
        file_year = year_of_us(*out->time.wall);
        msg = ltrim(raw.substr(i));
        known_format = true;
      }
    }
  }
  return known_format;
}

// A leading letter: RFC 3164 (and OpenSM), dmesg -x, CSV headers (*skip), glog, "kernel: ".
bool LineParserImpl::alpha_line(std::string_view raw, LogRecord* out, std::string_view* msg_out,
                                bool* skip) {
  std::string_view& msg = *msg_out;
  bool known_format = false;
  Civil c;
  double mono;
  size_t n;
  bool kern = false;
  if ((n = bsd_time(raw, &c)) && n < raw.size() && raw[n] == ' ') {
    set_civil(c, true, out);
    known_format = true;
    std::string_view rest = raw.substr(n + 1);
    // OpenSM: "Mar 05 10:11:12 123456 [7F1A2B3C] 0x02 -> msg"
    size_t k = 0;
    while (k < rest.size() && is_digit(rest[k])) ++k;
    if (k == 6 && rest.size() > 8 && rest[6] == ' ' && rest[7] == '[') {
      size_t close = rest.find("] ", 8);
      std::string_view tid = rest.substr(8, close == std::string_view::npos ? 0 : close - 8);
      bool hex = !tid.empty();
      for (char h : tid) hex = hex && is_hex(h);
      if (hex) {
        int64_t us = 0;
        for (size_t q = 0; q < 6; ++q) us = us * 10 + (rest[q] - '0');
        if (out->time.wall && c.frac_us == 0) *out->time.wall += us;
        msg = rest.substr(close + 2);
      } else {
        syslog_body(rest, out, &msg, false, false);
      }
    } else {
      syslog_body(rest, out, &msg, false, false);
    }
  } else if ((n = facility_prefix(raw, &kern))) {
    // dmesg -x: "kern  :warn  : <time> msg"
    std::string_view rest = raw.substr(n);
    bool comma;
    size_t t;
    if ((t = parse_iso(rest, &c, &comma))) {
      set_civil(c, true, out);
      msg = ltrim(rest.substr(t));
    } else if ((t = dmesg_mono(rest, &mono))) {
      set_mono(mono, out);
      msg = rest.substr(t);
    } else if ((t = dmesg_ctime(rest, &c))) {
      set_civil(c, true, out);
      msg = rest.substr(t);
    } else {
      msg = rest;
    }
    out->transport = kern ? kTransportKernel : kTransportSyslog;
    known_format = true;
  } else if (csv_header(raw)) {
    *skip = true;  // column names only; rows use them
    return false;
  } else if ((n = glog_prefix(raw, &c))) {
    set_civil(c, true, out);
    msg = raw.substr(n);
    known_format = true;
  } else if (raw.substr(0, 8) == "kernel: ") {
    // A syslog line pasted without its time and host ("kernel: NVRM: Xid ...").
    syslog_body(raw, out, &msg, false, false);
    known_format = true;
  } else if (talos_line(raw, out, &msg)) {
    known_format = true;
  }
  return known_format;
}

// talosctl dmesg (Talos Linux): the node names the host, kern lines are kernel
// lines as with dmesg -x.
bool LineParserImpl::talos_line(std::string_view raw, LogRecord* out, std::string_view* msg) {
  std::string_view node;
  bool kern = false;
  size_t n = talos_prefix(raw, &node, &kern);
  if (!n) return false;
  Civil c;
  bool comma = false;
  std::string_view rest = raw.substr(n + 1);
  size_t t = parse_iso(rest, &c, &comma);
  if (!t || t + 2 > rest.size() || rest[t] != ']' || rest[t + 1] != ':') return false;
  set_civil(c, true, out);
  host_from_field(node, out);
  out->transport = kern ? kTransportKernel : kTransportSyslog;
  *msg = ltrim(rest.substr(t + 2));
  return true;
}

// The record's time (own, inherited, lead time; plausibility) and clock.
void LineParserImpl::settle_time(LogRecord* out) {
  if (out->time.wall && !in_rfc3339_range(*out->time.wall)) {
    // Past year 9999 (epoch digits, an offset): no RFC 3339 text could carry
    // it to the next reader, so it is not kept; counted as implausible.
    out->time.wall.reset();
    ++stats->implausible_time;
  }
  if (!out->time.wall && !out->time.mono) {
    // No time of its own: inherit the previous line's time, clock and
    // transport (continuation lines of a multi-line kernel message).
    if (have_time) {
      out->time = last_time;
      out->time_inherited = true;
      if (out->transport == kTransportApp) out->transport = last_transport;
    } else if (ctx.lead_time_us) {
      // Before the file's first timed line: take that line's time (an upper bound).
      out->time.wall = ctx.lead_time_us;
      out->time.clock.assign(out->host);
      out->time.clock.append(out->transport == kTransportKernel ? "/kernel" : "/app");
      out->time_inherited = true;
    } else {
      ++stats->no_timestamp;
    }
  } else {
    if (out->time.wall) {
      int64_t w = *out->time.wall;
      int ref = ctx.year.value_or(0);
      if (w < kYear2000Us || (ref && w > to_us(Civil{0, 1, 1, 0, 0, 0, 0, false, 0}, ref + 2, 0)))
        out->time_implausible = true;
    }
    if (out->time_implausible) ++stats->implausible_time;
  }
  if (!out->time_inherited) {
    out->time.clock.assign(out->host);
    out->time.clock.append(out->transport == kTransportKernel ? "/kernel" : "/app");
    if (out->time.wall || out->time.mono) {
      last_time = out->time;
      last_transport = out->transport;
      have_time = true;
    }
  }
}

bool LineParserImpl::parses_alone(std::string_view prev, std::string_view line) const {
  if (bug_report || cri_pending) return false;
  // What parse() would read a time from: the line after begin_line's cut.
  if (prev.size() > opts.max_line_bytes || line.size() > opts.max_line_bytes) return false;
  Civil a, b;
  const size_t na = bsd_time(prev, &a), nb = bsd_time(line, &b);
  if (!na || !nb || na >= prev.size() || prev[na] != ' ' || nb >= line.size() || line[nb] != ' ')
    return false;
  // skip_non_log reads a prompt only where an '@' is in the first 100 bytes.
  return a.month == b.month &&
         std::memchr(prev.data(), '@', std::min<size_t>(prev.size(), 100)) == nullptr;
}

bool LineParserImpl::parse(std::string_view raw, uint64_t line_no, LogRecord* out) {
  if (!begin_line(&raw, line_no, out)) return false;
  if (skip_non_log(raw)) return false;
  std::string_view msg = raw;
  bool known_format = false, skip = false;
  const char c0 = raw[0];
  if (c0 == '[') {
    known_format = bracket_line(raw, out, &msg);
  } else if (c0 == '<') {
    known_format = priority_line(raw, out, &msg);
  } else if (c0 == '{') {
    known_format = journal_fast(raw, out, &msg) || journal_json(raw, out, &msg);
    if (!known_format) msg = raw;
  } else if (is_digit(c0)) {
    known_format = digit_line(raw, out, &msg, &skip);
  } else if (c0 == ' ') {
    known_format = sel_line(raw, out, &msg) || indented_bracket_iso(raw, out, &msg);
  } else if (is_alpha(c0)) {
    known_format = alpha_line(raw, out, &msg, &skip);
  }
  if (skip) return false;
  if (!known_format) known_format = embedded_syslog(raw, out, &msg);
  // A kernel capture (by its file name, or by the pasted command that made it)
  // holds kernel lines whatever their shape, unless --strict-transport.
  if (out->transport == kTransportApp && (file_kernel_capture || capture_cmd_kernel) &&
      !opts.strict_transport)
    out->transport = kTransportKernel;

  app_prefixes(&msg, out);
  settle_time(out);
  if (!out->host_known) ++stats->unknown_hosts;
  out->msg = msg;
  return true;
}

// ---------------------------------------------------------------------------

struct LineParser::Impl : LineParserImpl {
  using LineParserImpl::LineParserImpl;
};

LineParser::LineParser(const Topology& topo, FormatOptions opts, FormatStats* stats)
    : impl_(std::make_unique<Impl>(topo, opts, stats)) {}
LineParser::~LineParser() = default;
void LineParser::begin_file(FileContext ctx) {
  impl_->begin_file(std::move(ctx));
}
bool LineParser::parses_alone(std::string_view prev, std::string_view line) const {
  return impl_->parses_alone(prev, line);
}
bool LineParser::parse(std::string_view raw, uint64_t line_no, LogRecord* out) {
  try {
    return impl_->parse(raw, line_no, out);
  } catch (const std::exception&) {
    // Never throws (bad_alloc on a pathological line): keep the line as app text.
    out->raw = raw;
    out->msg = raw;
    return !raw.empty();
  }
}

// ---------------------------------------------------------------------------

bool parse_envelope(std::string_view json_line, const Topology& topo, int64_t arrival_us,
                    FormatStats* stats, std::string* storage, LogRecord* out) {
  FormatStats local;
  if (!stats) stats = &local;
  try {
    ++stats->lines;
    stats->bytes += json_line.size() + 1;
    nlohmann::json j = nlohmann::json::parse(json_line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      ++stats->skipped_invalid_json;
      return false;
    }
    auto m = j.find("msg");
    if (m == j.end()) m = j.find("message");
    if (m == j.end() || !m->is_string()) {
      ++stats->skipped_no_msg;
      return false;
    }
    std::string msg = m->get<std::string>();
    bool nul, bad;
    scan_bytes(msg, &nul, &bad);
    if (nul) ++stats->nul_bytes;
    if (bad) ++stats->invalid_utf8;

    // Storage: the raw JSON line, then the message; the record's views point here.
    storage->assign(json_line);
    size_t msg_at = storage->size();
    storage->append(msg);
    out->raw = std::string_view(storage->data(), json_line.size());
    std::string_view body(storage->data() + msg_at, msg.size());
    out->file = {};
    out->line_no = 0;
    out->rank_hint = -1;
    out->time_inherited = false;
    out->time_implausible = false;
    out->time = EventTime{};

    std::string host;
    if (auto h = j.find("host"); h != j.end() && h->is_string()) host = h->get<std::string>();
    if (auto r = topo.resolve_host(host)) {
      out->host = *r;
      out->host_known = true;
    } else {
      out->host = host;
      out->host_known = false;
      ++stats->unknown_hosts;
    }

    out->transport = kTransportApp;
    if (auto s = j.find("source"); s != j.end() && s->is_string()) {
      std::string src = s->get<std::string>();
      if (auto tr = transport_from_string(src); tr && *tr != kTransportAny)
        out->transport = *tr;
      else
        stats->notes.push_back("envelope source '" + src + "' is unknown; taken as app");
    }

    std::optional<int64_t> ts;
    auto t = j.find("ts");
    if (t == j.end()) t = j.find("timestamp");
    if (t != j.end()) {
      if (t->is_string()) {
        std::string s = t->get<std::string>();
        Civil c;
        if (size_t n = parse_iso(s, &c); n && n == s.size())
          ts = to_us(c, c.year, c.has_zone ? c.zone_s : 0);
      } else if (t->is_number()) {
        // Epoch seconds, milliseconds or microseconds, by magnitude.
        const double v = t->get<double>();
        const double us = v > 1e14 ? v : v > 1e11 ? v * 1e3 : v * 1e6;
        // Compared as a double first: a cast of one past int64 is undefined.
        if (us >= double(kMinRfc3339Us) && us <= double(kMaxRfc3339Us)) ts = int64_t(us);
      }
      if (ts && !in_rfc3339_range(*ts)) ts.reset();  // an offset past year 9999
      if (!ts) ++stats->implausible_time;
    }

    // The message may carry its own collector prefix ("[123.456] ...",
    // "[rank3]:[E...]", an ISO time): strip it, keep its time when ts is absent.
    LineParserImpl p(topo, FormatOptions{}, nullptr);
    FileContext ctx;
    ctx.host_dir = out->host;
    p.begin_file(std::move(ctx));
    LogRecord inner;
    if (p.parse(body, 0, &inner)) {
      body = inner.msg;
      out->rank_hint = inner.rank_hint;
      if (!ts && !inner.time_inherited && !inner.time_implausible &&
          (inner.time.wall || inner.time.mono)) {
        out->time.wall = inner.time.wall;
        out->time.mono = inner.time.mono;
      }
    }
    if (ts) out->time.wall = ts;
    if (!out->time.wall) out->time.wall = arrival_us;
    out->time.clock = out->host + (out->transport == kTransportKernel ? "/kernel" : "/app");
    out->msg = body;
    return true;
  } catch (const std::exception&) {
    ++stats->skipped_invalid_json;
    return false;
  }
}

}  // namespace reflex
