// RFC 3339 formatting and parsing for event times (UTC microseconds).
#include <cstdio>
#include <ctime>

#include "reflex/event.h"

namespace reflex {
namespace {

// Days since 1970-01-01 for a civil date (Howard Hinnant's algorithm); avoids
// timegm's dependence on the process time zone.
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

void civil_from_days(int64_t z, int64_t* y, unsigned* m, unsigned* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = static_cast<int64_t>(yoe) + era * 400 + (*m <= 2);
}

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
  int64_t secs = t >= 0 ? t / 1000000 : -((-t + 999999) / 1000000);
  int64_t us = t - secs * 1000000;
  int64_t days = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);
  int64_t rem = secs - days * 86400;
  int64_t y;
  unsigned m, d;
  civil_from_days(days, &y, &m, &d);
  char buf[96];  // room for any int64 year, so -Wformat-truncation stays quiet
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02lld:%02lld:%02lld.%06lldZ",
                static_cast<long long>(y), m, d, static_cast<long long>(rem / 3600),
                static_cast<long long>(rem / 60 % 60), static_cast<long long>(rem % 60),
                static_cast<long long>(us));
  return buf;
}

TimeUs civil_to_time_us(int year, int month, int day, int hour, int minute, int second,
                        int64_t micros) {
  int64_t days = days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  return (days * 86400 + hour * 3600 + minute * 60 + second) * 1000000 + micros;
}

std::optional<TimeUs> parse_rfc3339(const std::string& s) {
  int Y, M, D, h, mi, se;
  if (!digits(s, 0, 4, &Y) || s.size() < 19 || s[4] != '-' || !digits(s, 5, 2, &M) ||
      s[7] != '-' || !digits(s, 8, 2, &D) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
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
  return secs * 1000000 + us;
}

}  // namespace reflex
