// dmesg: the kernel ring buffer as util-linux prints it (raw seconds since
// boot, -T, -H / --reltime, -r, -x). All of them are kernel lines; their
// times are since boot (on the wall clock when the host has a boot_time),
// local civil times, or a delta from the previous line.
#include <unordered_set>

#include "format_kit.h"
#include "format_registry.h"
#include "line_parser_impl.h"

namespace reflex::formats {

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

namespace {

// "[Tue Mar  5 10:11:12 2024]" (dmesg -T).
size_t ctime_stamp(std::string_view s, Civil* c) {
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
size_t reltime_stamp(std::string_view s, double* delta) {
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
size_t human_stamp(std::string_view s, Civil* c) {
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

}  // namespace

// "[  12.345678] msg". No kernel runs 31 years: "[1709633472.123456] [host:pid:tid] ..."
// is a program's Unix-epoch stamp (UCX), on the wall clock, not a kernel line.
Match dmesg_stamp(LineParserImpl& p, std::string_view raw, LogRecord* out, std::string_view* msg) {
  double mono;
  size_t n = dmesg_mono(raw, &mono);
  if (!n) return Match::kNo;
  if (mono >= 1e9) {
    p.set_wall_dated(static_cast<TimeUs>(mono * 1e6 + 0.5), out);
    *msg = ltrim(raw.substr(n));
  } else {
    p.set_mono(mono, out);
    out->transport = kTransportKernel;
    *msg = raw.substr(n);
  }
  return Match::kYes;
}

// "[  +0.000844] msg": relative to the previous line, on its clock when there is one.
Match dmesg_reltime(LineParserImpl& p, std::string_view raw, LogRecord* out,
                    std::string_view* msg) {
  double delta;
  size_t n = reltime_stamp(raw, &delta);
  if (!n) return Match::kNo;
  const EventTime* last = p.previous_time();
  if (last && (last->wall || last->mono)) {
    if (last->wall) out->time.wall = *last->wall + int64_t(delta * 1e6 + 0.5);
    if (last->mono) out->time.mono = *last->mono + delta;
  } else {
    p.set_mono(delta, out);
  }
  out->transport = kTransportKernel;
  *msg = raw.substr(n);
  return Match::kYes;
}

// "[May19 19:57] msg": the minute a run of relative lines starts from.
Match dmesg_human(LineParserImpl& p, std::string_view raw, LogRecord* out, std::string_view* msg) {
  Civil c;
  size_t n = human_stamp(raw, &c);
  if (!n) return Match::kNo;
  p.set_civil(c, true, out);
  out->transport = kTransportKernel;
  *msg = raw.substr(n);
  return Match::kYes;
}

// "[Tue Mar  5 10:11:12 2024] msg".
Match dmesg_ctime(LineParserImpl& p, std::string_view raw, LogRecord* out, std::string_view* msg) {
  Civil c;
  size_t n = ctime_stamp(raw, &c);
  if (!n) return Match::kNo;
  p.set_civil(c, true, out);
  out->transport = kTransportKernel;
  *msg = raw.substr(n);
  // Some collectors keep the journal's "host kernel: " after the -T time.
  size_t sp = msg->find(' ');
  if (sp != std::string_view::npos && sp > 0 && msg->substr(sp + 1, 8) == "kernel: " &&
      hostname_token(msg->substr(0, sp))) {
    p.host_from_field(msg->substr(0, sp), out);
    msg->remove_prefix(sp + 9);
  }
  return Match::kYes;
}

// dmesg -r (pstore, console captures): "<6>[  12.345678] msg".
Match dmesg_priority(LineParserImpl& p, std::string_view raw, LogRecord* out,
                     std::string_view* msg) {
  int pri;
  size_t at = priority_prefix(raw, &pri);
  if (!at) return Match::kNo;
  std::string_view s = raw.substr(at);
  double mono;
  size_t n = dmesg_mono(s, &mono);
  if (!n) return Match::kNo;
  p.set_mono(mono, out);
  out->transport = kTransportKernel;
  *msg = s.substr(n);
  return Match::kYes;
}

// dmesg -x: "kern  :warn  : <time> msg", any dmesg time (or none); kernel
// when the facility is kern.
Match dmesg_facility(LineParserImpl& p, std::string_view raw, LogRecord* out,
                     std::string_view* msg) {
  bool kern = false;
  size_t n = facility_prefix(raw, &kern);
  if (!n) return Match::kNo;
  std::string_view rest = raw.substr(n);
  Civil c;
  double mono;
  bool comma;
  size_t t;
  if ((t = parse_iso(rest, &c, &comma))) {
    p.set_civil(c, true, out);
    *msg = ltrim(rest.substr(t));
  } else if ((t = dmesg_mono(rest, &mono))) {
    p.set_mono(mono, out);
    *msg = rest.substr(t);
  } else if ((t = ctime_stamp(rest, &c))) {
    p.set_civil(c, true, out);
    *msg = rest.substr(t);
  } else {
    *msg = rest;
  }
  out->transport = kern ? kTransportKernel : kTransportSyslog;
  return Match::kYes;
}

}  // namespace reflex::formats
