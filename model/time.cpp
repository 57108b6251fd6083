// RFC 3339 formatting and parsing for event times (UTC microseconds).
#include "reflex/time.h"

#include <cstdio>

namespace reflex {
namespace {

bool digits(const std::string& s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

}  // namespace

std::string format_time_us(TimeUs t) {
  const CivilTime c = civil_from_time_us(t);
  if (c.date.year >= 0 && c.date.year <= 9999) {
    // The usual case by hand: snprintf was most of the cost of an event line.
    char b[] = "0000-00-00T00:00:00.000000Z";
    auto put = [&b](int at, int64_t v, int width) {
      for (int i = at + width - 1; i >= at; --i, v /= 10) b[i] = static_cast<char>('0' + v % 10);
    };
    put(0, c.date.year, 4);
    put(5, c.date.month, 2);
    put(8, c.date.day, 2);
    put(11, c.hour, 2);
    put(14, c.minute, 2);
    put(17, c.second, 2);
    put(20, c.micros, 6);
    return std::string(b, sizeof b - 1);
  }
  char buf[96];  // room for any int64 year, so -Wformat-truncation stays quiet
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02d:%02d:%02d.%06lldZ",
                static_cast<long long>(c.date.year), c.date.month, c.date.day, c.hour, c.minute,
                c.second, static_cast<long long>(c.micros));
  return buf;
}

std::optional<TimeUs> parse_rfc3339(const std::string& s) {
  int Y, M, D, h, mi, se;
  if (!digits(s, 0, 4, &Y) || s.size() < 19 || s[4] != '-' || !digits(s, 5, 2, &M) || s[7] != '-' ||
      !digits(s, 8, 2, &D) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
      !digits(s, 11, 2, &h) || s[13] != ':' || !digits(s, 14, 2, &mi) || s[16] != ':' ||
      !digits(s, 17, 2, &se))
    return std::nullopt;
  if (M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || mi > 59 || se > 60) return std::nullopt;
  size_t p = 19;
  int64_t us = 0;
  if (p < s.size() && (s[p] == '.' || s[p] == ',')) {
    ++p;
    int n = 0;
    while (p < s.size() && s[p] >= '0' && s[p] <= '9') {
      if (n < 6) us = us * 10 + (s[p] - '0');
      ++n;
      ++p;
    }
    if (n == 0) return std::nullopt;
    for (; n < 6; ++n) us *= 10;
  }
  int64_t offset_s = 0;
  if (p < s.size()) {
    if (s[p] == 'Z' || s[p] == 'z') {
      ++p;
    } else if (s[p] == '+' || s[p] == '-') {
      int oh, om;
      int sign = s[p] == '-' ? -1 : 1;
      if (!digits(s, p + 1, 2, &oh)) return std::nullopt;
      size_t q = p + 3;
      if (q < s.size() && s[q] == ':') ++q;
      if (!digits(s, q, 2, &om)) return std::nullopt;
      offset_s = sign * (oh * 3600 + om * 60);
      p = q + 2;
    } else {
      return std::nullopt;
    }
  }
  if (p != s.size()) return std::nullopt;
  int64_t days = days_from_civil(Y, static_cast<unsigned>(M), static_cast<unsigned>(D));
  int64_t secs = days * 86400 + h * 3600 + mi * 60 + se - offset_s;
  const TimeUs t = secs * 1000000 + us;
  if (!in_rfc3339_range(t)) return std::nullopt;  // e.g. 9999-12-31T23:30:00-01:00
  return t;
}

}  // namespace reflex
