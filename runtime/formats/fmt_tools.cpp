// Files that collectors write from tools rather than from a logger: NVIDIA
// Fabric Manager's log, nvidia-smi --format=csv samples, ipmitool's SEL list
// and sysfs counter dumps stamped with epoch seconds. Their times are local
// (epoch seconds excepted); the host is the directory's.
#include <cstring>
#include <string>

#include "format_kit.h"
#include "format_registry.h"
#include "line_parser_impl.h"

namespace reflex::formats {

namespace {

// "[Mar 05 2024 10:11:12]" (NVIDIA Fabric Manager).
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

}  // namespace

// "[Feb 27 2025 15:10:02] [ERROR] [tid 12727] msg": the message keeps the level and thread.
Match tool_fabric_manager(LineParserImpl& p, std::string_view raw, LogRecord* out,
                          std::string_view* msg) {
  Civil c;
  size_t n = fm_time(raw, &c);
  if (!n) return Match::kNo;
  p.set_civil(c, true, out);
  *msg = raw.substr(n);
  return Match::kYes;
}

// nvidia-smi --format=csv rows: "2024/03/05 10:11:12.123, 0, NVIDIA H100, ...".
// With a header seen in this file, the row is rewritten as "name=value; ...".
Match tool_nvsmi_csv_row(LineParserImpl& p, std::string_view s, LogRecord* out,
                         std::string_view* msg) {
  Civil c;
  size_t i = 0;
  if (!digits(s, &i, 4, &c.year) || i >= s.size() || s[i++] != '/' || !digits(s, &i, 2, &c.month) ||
      i >= s.size() || s[i++] != '/' || !digits(s, &i, 2, &c.day) || i >= s.size() ||
      s[i++] != ' ' || !hms(s, &i, &c))
    return Match::kNo;
  c.frac_us = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    c.frac_us = fraction(s, &i);
  }
  if (!valid(c)) return Match::kNo;
  p.set_civil(c, true, out);
  std::string_view rest = s.substr(i);
  if (!rest.empty() && rest[0] == ',') rest.remove_prefix(1);
  rest = ltrim(rest);
  if (p.csv.keys.empty()) {
    *msg = rest;
    return Match::kYes;
  }
  // One pass, no temporaries: a telemetry node writes a row per GPU a second.
  p.csv.msg.clear();
  const char* at = rest.data();
  const char* const end = at + rest.size();
  for (size_t col = 1;; ++col) {  // column 0 is the timestamp
    const char* comma = static_cast<const char*>(std::memchr(at, ',', end - at));
    const char* vb = at;
    const char* ve = comma ? comma : end;
    while (vb < ve && is_space(*vb)) ++vb;
    while (ve > vb && (is_space(ve[-1]) || ve[-1] == '\r')) --ve;
    if (col < p.csv.keys.size()) {
      p.csv.msg += p.csv.keys[col];
    } else {
      p.csv.msg += col > 1 ? "; col" : "col";
      p.csv.msg += std::to_string(col);
      p.csv.msg += '=';
    }
    p.csv.msg.append(vb, ve - vb);
    if (!comma) break;
    at = comma + 1;
  }
  *msg = p.csv.msg;
  return Match::kYes;
}

// "timestamp, index, name, temperature.gpu, utilization.gpu [%]" -> column names.
// The header line is skipped: it holds no record.
Match tool_nvsmi_csv_header(LineParserImpl& p, std::string_view s, LogRecord*, std::string_view*) {
  if (s.size() < 11 || s.substr(0, 10) != "timestamp,") return Match::kNo;
  p.csv.keys.clear();
  while (true) {
    size_t comma = s.find(',');
    std::string_view v = trim(s.substr(0, comma));
    if (size_t br = v.find(" ["); br != std::string_view::npos) v = rtrim(v.substr(0, br));
    // The rewritten row's "; name=" for each column (the first without "; ").
    std::string key = p.csv.keys.size() > 1 ? "; " : "";
    key.append(v);
    key += '=';
    p.csv.keys.push_back(std::move(key));
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return Match::kSkip;
}

// "   1 | 03/05/2024 | 10:11:12 | Power Supply #0x51 | Failure detected | Asserted"
// ipmitool sel elist: the fields after the time are the message.
Match tool_ipmi_sel(LineParserImpl& p, std::string_view s, LogRecord* out, std::string_view* msg) {
  size_t i = 0;
  while (i < s.size() && s[i] == ' ') ++i;
  size_t id = i;
  while (i < s.size() && is_hex(s[i])) ++i;
  if (i == id || s.substr(i, 3) != " | ") return Match::kNo;
  i += 3;
  Civil c;
  if (!digits(s, &i, 2, &c.month) || i >= s.size() || s[i++] != '/' || !digits(s, &i, 2, &c.day) ||
      i >= s.size() || s[i++] != '/' || !digits(s, &i, 4, &c.year) || s.substr(i, 3) != " | ")
    return Match::kNo;
  i += 3;
  if (!hms(s, &i, &c) || !valid(c)) return Match::kNo;
  c.frac_us = 0;
  if (s.substr(i, 3) == " | ") i += 3;
  p.set_civil(c, true, out);
  *msg = s.substr(i);
  return Match::kYes;
}

// Epoch seconds: "1709633472.123456 /sys/class/infiniband/...:1". A bare
// 10-digit number is a time only before a path ("1234567890 items" is not).
Match tool_epoch_counter(LineParserImpl& p, std::string_view raw, LogRecord* out,
                         std::string_view* msg) {
  size_t i = 0;
  int64_t secs = 0;
  while (i < raw.size() && is_digit(raw[i]) && i < 11) secs = secs * 10 + (raw[i++] - '0');
  if (i != 10 || i >= raw.size() || (raw[i] != '.' && raw[i] != ' ')) return Match::kNo;
  int64_t us = 0;
  if (raw[i] == '.') {
    ++i;
    us = fraction(raw, &i);
  }
  bool frac = raw[10] == '.';
  if (i < raw.size() && raw[i] == ' ' && (frac || (i + 1 < raw.size() && raw[i + 1] == '/'))) {
    p.set_wall_dated(secs * kUsPerSec + us, out);
    *msg = ltrim(raw.substr(i));
    return Match::kYes;
  }
  return Match::kNo;
}

}  // namespace reflex::formats
