// What the format files (fmt_*.cpp) share: character classes, the stamp
// scanners more than one family reads, and the rules two families apply the
// same way (a syslog body, application prefixes inside a message). Kept in one
// place so that two formats that frame the same stamp cannot drift apart.
#pragma once

#include <cstddef>
#include <string_view>

#include "civil_time.h"
#include "reflex/log_record.h"

namespace reflex {

class LineParserImpl;

namespace formats {

inline bool is_space(char c) {
  return c == ' ' || c == '\t';
}
inline bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
inline bool is_hex(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

inline std::string_view ltrim(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && is_space(s[i])) ++i;
  return s.substr(i);
}
inline std::string_view rtrim(std::string_view s) {
  while (!s.empty() && (is_space(s.back()) || s.back() == '\r')) s.remove_suffix(1);
  return s;
}
inline std::string_view trim(std::string_view s) {
  return rtrim(ltrim(s));
}

// Valid UTF-8 and NUL check (line_parser.cpp; the envelope parser counts the same).
void scan_bytes(std::string_view s, bool* nul, bool* bad_utf8);

// "<PRI>" (syslog, dmesg -r): the length up to and including '>', 0 when the
// line has none or the priority is out of range. *pri gets the priority.
inline size_t priority_prefix(std::string_view raw, int* pri) {
  size_t i = 1;
  *pri = 0;
  while (i < raw.size() && is_digit(raw[i]) && i < 4) *pri = *pri * 10 + (raw[i++] - '0');
  if (i > 1 && i < raw.size() && raw[i] == '>' && *pri < 192) return i + 1;
  return 0;
}

// ---- dmesg stamps (fmt_dmesg.cpp) ----

// "[  123.456789]" at the start; returns length (with one trailing space), 0 if none.
// A syslog "kernel: " body and dmesg -r/-x lines carry it too.
size_t dmesg_mono(std::string_view s, double* mono);
// "kern  :warn  : " (dmesg -x); *kern set when the facility is kern. talosctl
// dmesg names the same facilities and levels.
size_t facility_prefix(std::string_view s, bool* kern);

// ---- syslog pieces (fmt_syslog.cpp) ----

// "Mar  5 10:11:12" / "Mar 05 10:11:12[.123456]" (RFC 3164, journalctl short[-precise]).
size_t bsd_time(std::string_view s, Civil* c);
// A syslog tag "name:", "name[pid]:" at the start of s; returns the length of
// the tag including ':' and the following space, 0 if none. *name gets the name.
size_t syslog_tag(std::string_view s, std::string_view* name);
// A token that may be a host name (letters, digits, "-._:").
bool hostname_token(std::string_view w);
// "host tag[pid]: msg" after a syslog time: the host field, the tag, the
// kernel transport of a "kernel:" tag (unless strict_transport).
void syslog_body(LineParserImpl& p, std::string_view rest, LogRecord* out, std::string_view* msg,
                 bool kern_facility, bool have_facility);

// ---- application prefixes (fmt_app.cpp) ----

// "[rank3]:[E603 ...]", NCCL's "host:pid:tid [3] ", launcher prefixes: strips
// them from *msg and sets the rank hint (and a glog time when the line had none).
void app_prefixes(LineParserImpl& p, std::string_view* msg, LogRecord* out);

}  // namespace formats
}  // namespace reflex
