// Lines that start with an ISO 8601 / RFC 3339 time: dmesg --time-format iso,
// Kubernetes CRI, RFC 3339 syslog files (rsyslog, journalctl -o short-iso)
// and application logs, plus the bracketed forms ("[2026-03-05 10:11:12]",
// Megatron-LM's indented one). The time is parsed once; what follows it
// decides the format.
#include <unordered_set>

#include "format_kit.h"
#include "format_registry.h"
#include "line_parser_impl.h"

namespace reflex::formats {

namespace {

// Levels that start application lines; never taken for a syslog host field.
bool is_level_word(std::string_view w) {
  static const std::unordered_set<std::string_view> kLevels = {
      "INFO", "WARN", "WARNING", "ERROR", "DEBUG", "TRACE",  "FATAL", "CRITICAL", "NOTICE",
      "info", "warn", "warning", "error", "debug", "trace",  "fatal", "critical", "notice",
      "I",    "W",    "E",       "F",     "D",     "stdout", "stderr"};
  return kLevels.count(w) > 0;
}

// "[2026-03-05 10:11:12]" or "[<RFC 3339>]": the length up to and including "]", or 0.
size_t bracket_iso(std::string_view s, Civil* c) {
  if (s.size() <= 21 || s[0] != '[' || !is_digit(s[1])) return 0;
  size_t n = parse_iso(s.substr(1), c);
  if (n == 0 || n + 1 >= s.size() || s[n + 1] != ']') return 0;
  return n + 2;
}

// Kubernetes CRI after the time: "stdout F msg"; "P" parts wait for the final
// part and take the first part's time. kSkip for a "P" part.
Match cri_line(LineParserImpl& p, std::string_view rest, LogRecord* out, std::string_view* msg) {
  std::string_view part = rest.size() > 9 ? rest.substr(9) : std::string_view();
  LineParserImpl::CriState& cri = p.cri;
  if (rest[7] == 'P') {
    if (!cri.pending) cri.time = out->time;
    cri.pending = true;
    cri.partial.append(part);
    ++p.counters().cri_partial_joined;
    return Match::kSkip;
  }
  if (cri.pending) {
    cri.partial.append(part);
    out->time = cri.time;
    cri.pending = false;
    cri.joined.swap(cri.partial);
    cri.partial.clear();
    *msg = cri.joined;
  } else {
    *msg = part;
  }
  return Match::kYes;
}

// RFC 3339 syslog files: "<ts> host tag[pid]: msg". Only when the host token
// is a known host, the directory, or the tag is "kernel": "2024-... trainer
// step: 5" stays an application line.
void rfc3339_syslog(LineParserImpl& p, std::string_view rest, LogRecord* out,
                    std::string_view* msg) {
  size_t sp = rest.find(' ');
  if (sp == std::string_view::npos) return;
  std::string_view host = rest.substr(0, sp), tag;
  if (hostname_token(host) && !is_level_word(host) && syslog_tag(rest.substr(sp + 1), &tag) &&
      rest[sp + 1] != '[' &&
      (tag == "kernel" || host == p.file().host_dir || p.known_host_token(host)))
    syslog_body(p, rest, out, msg, false, false);
}

}  // namespace

// "<ISO time> msg": every line that starts with one is taken here.
Match iso_stamped(LineParserImpl& p, std::string_view raw, LogRecord* out, std::string_view* msg) {
  Civil c;
  bool comma = false;
  size_t n = parse_iso(raw, &c, &comma);
  if (!n) return Match::kNo;
  p.set_civil(c, true, out);
  std::string_view rest = ltrim(raw.substr(n));
  if (comma && c.has_zone) {
    out->transport = kTransportKernel;  // dmesg --time-format iso
    *msg = rest;
  } else if (rest.size() > 9 &&
             (rest.substr(0, 7) == "stdout " || rest.substr(0, 7) == "stderr ") &&
             (rest[7] == 'F' || rest[7] == 'P') && (rest.size() == 8 || rest[8] == ' ')) {
    return cri_line(p, rest, out, msg);
  } else {
    *msg = rest;
    if (raw[10] == 'T' && c.has_zone) rfc3339_syslog(p, rest, out, msg);
  }
  return Match::kYes;
}

// "[2026-03-05 10:11:12] msg", "[<RFC 3339>] msg" (the .rfx test lines).
Match iso_bracketed(LineParserImpl& p, std::string_view raw, LogRecord* out,
                    std::string_view* msg) {
  Civil c;
  size_t n = bracket_iso(raw, &c);
  if (!n) return Match::kNo;
  p.set_civil(c, true, out);
  *msg = ltrim(raw.substr(n));
  return Match::kYes;
}

// " [2024-08-01 09:44:55] iteration 1/ 5 | ...": Megatron-LM's training_log
// starts its line with a space and a bracketed local time.
Match iso_indented(LineParserImpl& p, std::string_view raw, LogRecord* out, std::string_view* msg) {
  size_t lead = raw.find_first_not_of(' ');
  if (lead == std::string_view::npos || lead > 4) return Match::kNo;
  Civil c;
  size_t n = bracket_iso(raw.substr(lead), &c);
  if (!n) return Match::kNo;
  p.set_civil(c, true, out);
  *msg = ltrim(raw.substr(lead + n));
  return Match::kYes;
}

}  // namespace reflex::formats
