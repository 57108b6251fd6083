// journalctl -o json: one object per line, with the journal's own time,
// host and transport. Flat objects take a fast scan without allocation; the
// rest (byte-array messages, nesting) and envelopes written to a file take
// nlohmann's parser.
#include <nlohmann/json.hpp>
#include <string>

#include "format_kit.h"
#include "format_registry.h"
#include "line_parser_impl.h"
#include "reflex/json_text.h"
#include "reflex/values.h"

namespace reflex::formats {

namespace {

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

// An envelope ({"host","ts","source","msg"}) written to a file line by line.
bool envelope_in_file(LineParserImpl& p, const nlohmann::json& j, LogRecord* out,
                      std::string_view* msg) {
  auto m = j.find("msg");
  if (m == j.end()) m = j.find("message");
  if (m == j.end() || !m->is_string()) return false;
  p.json_msg = m->get<std::string>();
  if (auto h = j.find("host"); h != j.end() && h->is_string()) {
    p.json_host = h->get<std::string>();
    p.host_from_field(p.json_host, out);
  }
  auto t = j.find("ts");
  if (t == j.end()) t = j.find("timestamp");
  if (t != j.end() && t->is_string()) {
    Civil c;
    std::string ts = t->get<std::string>();
    if (parse_iso(ts, &c) == ts.size() && ts.size()) p.set_civil(c, true, out);
  }
  out->transport = kTransportApp;
  if (auto s = j.find("source"); s != j.end() && s->is_string()) {
    if (auto tr = transport_from_string(s->get<std::string>())) out->transport = *tr;
  }
  *msg = p.json_msg;
  return true;
}

}  // namespace

// Fast path for `journalctl -o json` lines: one flat object of string and
// number values. Anything else (byte-array MESSAGE, nesting, odd escapes in
// the fields used) returns false and takes nlohmann's full parser.
Match journal_json_fast(LineParserImpl& p, std::string_view s, LogRecord* out,
                        std::string_view* msg) {
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
    if (!str(&key, &kesc) || kesc) return Match::kNo;
    ws();
    if (i >= s.size() || s[i] != ':') return Match::kNo;
    ++i;
    ws();
    if (i >= s.size()) return Match::kNo;
    if (s[i] == '"') {
      if (!str(&v, &esc)) return Match::kNo;
    } else if (s[i] == '{' || s[i] == '[') {
      return Match::kNo;
    } else {
      size_t st = i;
      while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ' ') ++i;
      v = s.substr(st, i - st);
      if (key == "MESSAGE") return Match::kNo;  // null/number: let the full parser decide
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
      if (esc) return Match::kNo;
      host = v;
    } else if (key == "_TRANSPORT") {
      if (esc) return Match::kNo;
      tr = v;
    }
    ws();
    if (i >= s.size()) return Match::kNo;
    if (s[i] == ',') {
      ++i;
      continue;
    }
    if (s[i] != '}') return Match::kNo;
    ++i;
    break;
  }
  ws();
  if (i != s.size() || !have_msg) return Match::kNo;
  if (msg_esc) {
    if (!json_unescape(message, &p.json_msg)) return Match::kNo;
    *msg = p.json_msg;
  } else {
    *msg = message;
  }
  if (auto us = parse_int(rt)) p.set_wall_restarting_year(*us, out);
  if (auto us = parse_int(mono)) out->time.mono = double(*us) / 1e6;
  if (!host.empty()) p.host_from_field(host, out);
  out->transport = tr == "kernel"   ? kTransportKernel
                   : tr == "syslog" ? kTransportSyslog
                                    : kTransportJournal;
  return Match::kYes;
}

// `journalctl -o json`: one object per line.
Match journal_json_full(LineParserImpl& p, std::string_view line, LogRecord* out,
                        std::string_view* msg) {
  nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Match::kNo;
  auto m = j.find("MESSAGE");
  if (m == j.end()) {
    // Not a journal entry; maybe an envelope written to a file.
    if (j.contains("msg") || j.contains("message"))
      return envelope_in_file(p, j, out, msg) ? Match::kYes : Match::kNo;
    return Match::kNo;
  }
  p.json_msg.clear();
  if (m->is_string()) {
    p.json_msg = m->get<std::string>();
  } else if (m->is_array()) {  // non-UTF-8 messages are byte arrays
    for (auto& b : *m)
      if (b.is_number_integer()) p.json_msg.push_back(char(b.get<int>() & 0xff));
  } else if (!m->is_null()) {
    p.json_msg = m->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
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
    if (auto us = parse_int(ts)) p.set_wall_restarting_year(*us, out);
  }
  std::string mono = str("__MONOTONIC_TIMESTAMP");
  if (!mono.empty())
    if (auto us = parse_int(mono)) out->time.mono = double(*us) / 1e6;
  p.json_host = str("_HOSTNAME");
  if (!p.json_host.empty()) p.host_from_field(p.json_host, out);
  std::string tr = str("_TRANSPORT");
  out->transport = tr == "kernel"   ? kTransportKernel
                   : tr == "syslog" ? kTransportSyslog
                                    : kTransportJournal;
  *msg = p.json_msg;
  return Match::kYes;
}

}  // namespace reflex::formats
