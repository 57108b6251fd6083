// Syslog: RFC 3164 files and lines (with or without a priority, journalctl
// short and short-precise), RFC 5424, a bare "kernel: " tag, and a syslog
// kernel line quoted inside other text. The host field names the host; a
// "kernel:" tag makes a kernel line unless --strict-transport.
#include "format_kit.h"
#include "format_registry.h"
#include "line_parser_impl.h"

namespace reflex::formats {

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

// Syslog text whose tag is "kernel" counts as kernel unless strict_transport.
void syslog_body(LineParserImpl& p, std::string_view rest, LogRecord* out, std::string_view* msg,
                 bool kern_facility, bool have_facility) {
  // rest: "host tag[pid]: msg" (some senders omit the host: "tag[pid]: msg")
  std::string_view tag, body;
  size_t tl = syslog_tag(rest, &tag);
  if (tl && tag.find('.') == std::string_view::npos && !p.known_host_token(tag)) {
    body = rest;  // no host field
  } else {
    size_t sp = rest.find(' ');
    std::string_view host = sp == std::string_view::npos ? rest : rest.substr(0, sp);
    p.host_from_field(host, out);
    body = sp == std::string_view::npos ? std::string_view() : rest.substr(sp + 1);
    tl = syslog_tag(body, &tag);
  }
  out->transport = kTransportSyslog;
  if (have_facility && kern_facility) out->transport = kTransportKernel;
  if (tl) {
    body.remove_prefix(tl);
    if (tag == "kernel" && !have_facility) {
      if (!p.options().strict_transport) out->transport = kTransportKernel;
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

namespace {

// RFC 5424 after "<PRI>1 ".
bool rfc5424(LineParserImpl& p, std::string_view s, int pri, LogRecord* out,
             std::string_view* msg) {
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
    p.set_civil(c, true, out);
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
  if (host != "-") p.host_from_field(host, out);
  out->transport = (pri >> 3) == 0 ? kTransportKernel : kTransportSyslog;
  *msg = s;
  return true;
}

}  // namespace

// "<PRI>1 <RFC 3339> host app procid msgid [sd] msg"; facility kern (0) is kernel.
Match syslog_rfc5424(LineParserImpl& p, std::string_view raw, LogRecord* out,
                     std::string_view* msg) {
  int pri;
  size_t at = priority_prefix(raw, &pri);
  if (!at) return Match::kNo;
  std::string_view s = raw.substr(at);
  if (s.size() > 2 && s[0] == '1' && s[1] == ' ')
    return rfc5424(p, s.substr(2), pri, out, msg) ? Match::kYes : Match::kNo;
  return Match::kNo;
}

// "<PRI>Mar  5 10:11:12 host tag: msg": RFC 3164 with the priority kept;
// facility kern (0) is kernel.
Match syslog_priority(LineParserImpl& p, std::string_view raw, LogRecord* out,
                      std::string_view* msg) {
  int pri;
  size_t at = priority_prefix(raw, &pri);
  if (!at) return Match::kNo;
  std::string_view s = raw.substr(at);
  Civil c;
  size_t n = bsd_time(s, &c);
  if (!n || n >= s.size() || s[n] != ' ') return Match::kNo;
  p.set_civil(c, true, out);
  syslog_body(p, s.substr(n + 1), out, msg, (pri >> 3) == 0, true);
  return Match::kYes;
}

// "Mar  5 10:11:12 host tag[pid]: msg" (RFC 3164, journalctl short[-precise]).
// OpenSM writes the same time, then microseconds and a thread id:
// "Mar 05 10:11:12 123456 [7F1A2B3C] 0x02 -> msg"; the time is read once for both.
Match syslog_bsd(LineParserImpl& p, std::string_view raw, LogRecord* out, std::string_view* msg) {
  Civil c;
  size_t n = bsd_time(raw, &c);
  if (!n || n >= raw.size() || raw[n] != ' ') return Match::kNo;
  p.set_civil(c, true, out);
  std::string_view rest = raw.substr(n + 1);
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
      *msg = rest.substr(close + 2);
    } else {
      syslog_body(p, rest, out, msg, false, false);
    }
  } else {
    syslog_body(p, rest, out, msg, false, false);
  }
  return Match::kYes;
}

// A syslog line pasted without its time and host ("kernel: NVRM: Xid ...").
Match syslog_kernel_tag(LineParserImpl& p, std::string_view raw, LogRecord* out,
                        std::string_view* msg) {
  if (raw.substr(0, 8) != "kernel: ") return Match::kNo;
  syslog_body(p, raw, out, msg, false, false);
  return Match::kYes;
}

// A syslog kernel line quoted inside other text (an alert, a ticket):
// "Xid errors on instance: X, Error: May 19 07:08:57 X kernel: [680111.6] NVRM: ...".
// The quoted line is parsed as the syslog line it is (kernel unless strict).
Match syslog_embedded(LineParserImpl& p, std::string_view raw, LogRecord* out,
                      std::string_view* msg) {
  size_t from = 0;
  for (int tries = 0; tries < 4; ++tries) {
    size_t k = raw.find(" kernel: ", from);
    if (k == std::string_view::npos || k < 17) return Match::kNo;
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
      p.set_civil(c, true, out);
      syslog_body(p, raw.substr(hs + 1), out, msg, false, false);
      ++p.counters().embedded_lines;
      return Match::kYes;
    }
  }
  return Match::kNo;
}

}  // namespace reflex::formats
