// Header lines that date (or name the host of) a whole capture: the
// `Timestamp : <date>` line of `nvidia-smi -q`, the bare date line atop plain
// `nvidia-smi`, and the `Date:` / `uname:` lines of an nvidia-bug-report.log
// header. Their own text is kept as the message; the lines after them take
// their time (and, in the bug report, year-less lines take their year).
#include <string>

#include "format_kit.h"
#include "format_registry.h"
#include "line_parser_impl.h"

namespace reflex::formats {

namespace {

bool all_digits(std::string_view t) {
  if (t.empty()) return false;
  for (char ch : t)
    if (!is_digit(ch)) return false;
  return true;
}

bool all_upper(std::string_view t) {
  if (t.empty()) return false;
  for (char ch : t)
    if (ch < 'A' || ch > 'Z') return false;
  return true;
}

// What `date` and ctime print, in the orders locales use: "Thu Oct 27
// 08:50:11 PM -03 2022", "Tue 03 Mar 2020 10:28:13 AM CET", "Mon Mar  4
// 10:11:12 UTC 2024", "Fri Dec 09 02:27:00 2016". A month name, a day, a time
// and a four-digit year are needed, each once; a zone abbreviation other than
// UTC/GMT leaves the time local. *tokens gets the number of words read.
bool date_text(std::string_view s, Civil* c, int* tokens) {
  bool have_day = false, have_time = false, pm = false, am = false, have_zone_word = false;
  *tokens = 0;
  c->has_zone = false;
  c->frac_us = 0;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (is_space(s[i]) || s[i] == ',')) ++i;
    if (i >= s.size()) break;
    size_t j = i;
    while (j < s.size() && !is_space(s[j]) && s[j] != ',') ++j;
    std::string_view t = s.substr(i, j - i);
    i = j;
    if (++*tokens > 8) return false;
    if (t.size() == 3 && weekday_abbrev(t) && *tokens <= 2) continue;
    if (t.size() == 3 && month_abbrev(t)) {
      if (c->month) return false;
      c->month = month_abbrev(t);
    } else if (all_digits(t) && t.size() <= 2) {
      if (have_day) return false;
      size_t k = 0;
      if (!digits(t, &k, t.size(), &c->day)) return false;
      have_day = true;
    } else if (all_digits(t) && t.size() == 4) {
      if (c->year) return false;
      size_t k = 0;
      digits(t, &k, 4, &c->year);
    } else if (t.size() == 8 && t[2] == ':') {
      size_t k = 0;
      if (have_time || !hms(t, &k, c)) return false;
      have_time = true;
    } else if (t == "AM" || t == "PM") {
      (t == "PM" ? pm : am) = true;
    } else if (t == "UTC" || t == "GMT" || t == "Z") {
      c->has_zone = true;
      c->zone_s = 0;
    } else if ((t[0] == '+' || t[0] == '-') && t.size() >= 3 && t.size() <= 6) {
      size_t k = 0;
      if (!zone(t, &k, c) || k != t.size() || !c->has_zone) return false;
    } else if (all_upper(t) && t.size() >= 3 && t.size() <= 5 && !have_zone_word) {
      have_zone_word = true;  // CET, PDT: an abbreviation this file cannot resolve
    } else {
      return false;
    }
  }
  if (!c->month || !have_day || !c->year || !have_time || (am && pm)) return false;
  if (pm || am) {
    if (c->hour < 1 || c->hour > 12) return false;
    c->hour = c->hour % 12 + (pm ? 12 : 0);
  }
  return valid(*c);
}

// "Timestamp      : <date>" (nvidia-smi -q).
bool nvsmi_timestamp(std::string_view raw, std::string_view* date) {
  if (raw.substr(0, 9) != "Timestamp") return false;
  std::string_view rest = ltrim(raw.substr(9));
  if (rest.empty() || rest[0] != ':') return false;
  *date = ltrim(rest.substr(1));
  return true;
}

}  // namespace

Match tool_header_time(LineParserImpl& p, std::string_view raw, LogRecord* out,
                       std::string_view* msg) {
  std::string_view date;
  Civil c;
  int tokens = 0;
  const char c0 = raw[0];
  if (c0 == 'T' && nvsmi_timestamp(raw, &date)) {
    if (!date_text(date, &c, &tokens)) return Match::kNo;
  } else if (p.in_bug_report() && c0 == 'D' && raw.substr(0, 6) == "Date: ") {
    if (!date_text(raw.substr(6), &c, &tokens)) return Match::kNo;
  } else if (p.in_bug_report() && c0 == 'u' && raw.substr(0, 13) == "uname: Linux ") {
    // "uname: Linux <host> <release> ..." (uname -a): the host of the report.
    std::string_view rest = raw.substr(13);
    std::string_view host = rest.substr(0, rest.find(' '));
    if (!hostname_token(host) || host.size() == rest.size()) return Match::kNo;
    p.host_from_field(host, out);
    *msg = raw;
    return Match::kYes;
  } else if (weekday_abbrev(raw) && raw.size() <= 40) {
    // plain nvidia-smi opens with the date alone: "Fri Jul  4 19:19:39 2025"
    if (!date_text(raw, &c, &tokens) || tokens != 5 || c.has_zone) return Match::kNo;
  } else {
    return Match::kNo;
  }
  p.set_civil(c, true, out);
  *msg = raw;
  return Match::kYes;
}

}  // namespace reflex::formats
