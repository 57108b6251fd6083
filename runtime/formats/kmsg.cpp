// /dev/kmsg records (reflex/kmsg.h).
#include "reflex/kmsg.h"

#include <cinttypes>
#include <cstdio>

namespace reflex {

namespace {

// A decimal field ending at one of `ends`; advances *at past the terminator.
bool number(std::string_view s, size_t* at, uint64_t* v, std::string_view ends, char* end) {
  size_t i = *at;
  uint64_t n = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    uint64_t d = static_cast<uint64_t>(s[i] - '0');
    if (n > (UINT64_MAX - d) / 10) return false;
    n = n * 10 + d;
    ++i;
  }
  if (i == *at || i >= s.size() || ends.find(s[i]) == std::string_view::npos) return false;
  *v = n;
  *end = s[i];
  *at = i + 1;
  return true;
}

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The kernel escapes unprintable bytes (and '\' itself) as \xNN.
std::string unescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && s.size() - i >= 4 && s[i + 1] == 'x' && hex(s[i + 2]) >= 0 &&
        hex(s[i + 3]) >= 0) {
      out.push_back(static_cast<char>(hex(s[i + 2]) * 16 + hex(s[i + 3])));
      i += 3;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

}  // namespace

bool parse_kmsg_record(std::string_view text, KmsgRecord* out, std::string* err) {
  size_t nl = text.find('\n');
  std::string_view first = text.substr(0, nl);
  size_t at = 0;
  uint64_t pri = 0, seq = 0, ts = 0;
  char end = 0;
  if (!number(first, &at, &pri, ",", &end) || pri > 191 || !number(first, &at, &seq, ",", &end) ||
      !number(first, &at, &ts, ",;", &end)) {
    *err = "not a kmsg record (expected PRI,SEQ,TS_USEC,FLAGS;MESSAGE)";
    return false;
  }
  char flags = '-';
  if (end == ',') {  // FLAGS, then fields added by later kernels (caller=...), up to ';'
    size_t semi = first.find(';', at);
    if (semi == std::string_view::npos) {
      *err = "kmsg record without ';' before its message";
      return false;
    }
    if (semi > at) flags = first[at];
    at = semi + 1;
  }
  out->priority = static_cast<int>(pri);
  out->seq = seq;
  out->ts_usec = ts;
  out->flags = flags;
  out->message = unescape(first.substr(at));
  out->dict.clear();
  while (nl != std::string_view::npos && nl + 1 < text.size()) {
    size_t next = text.find('\n', nl + 1);
    std::string_view line =
        text.substr(nl + 1, next == std::string_view::npos ? next : next - nl - 1);
    nl = next;
    if (line.empty() || line[0] != ' ') continue;  // not a continuation line: ignored
    line.remove_prefix(1);
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    out->dict.emplace_back(std::string(line.substr(0, eq)), unescape(line.substr(eq + 1)));
  }
  return true;
}

std::vector<std::string> kmsg_dmesg_lines(const KmsgRecord& r) {
  char prefix[64];
  std::snprintf(prefix, sizeof prefix, "<%d>[%5" PRIu64 ".%06" PRIu64 "] ", r.priority,
                r.ts_usec / 1000000, r.ts_usec % 1000000);
  std::vector<std::string> lines;
  size_t from = 0;
  for (;;) {
    size_t nl = r.message.find('\n', from);
    std::string_view part = std::string_view(r.message).substr(
        from, nl == std::string::npos ? std::string::npos : nl - from);
    lines.push_back(prefix + std::string(part));
    if (nl == std::string::npos) break;
    from = nl + 1;
  }
  return lines;
}

}  // namespace reflex
