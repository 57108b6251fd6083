// Event time (UTC microseconds since the epoch) and the calendar arithmetic
// every component shares: the compiler, the log parsers, the engine and the
// simulator. Proleptic Gregorian; no time-zone database, locale or clock.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace reflex {

// Microseconds since the Unix epoch, UTC.
using TimeUs = int64_t;
inline constexpr int64_t kUsPerSec = 1000000;

// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
constexpr int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

struct CivilDate {
  int64_t year = 1970;
  unsigned month = 1, day = 1;
};

// The inverse of days_from_civil.
constexpr CivilDate civil_from_days(int64_t z) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  CivilDate c;
  c.day = doy - (153 * mp + 2) / 5 + 1;
  c.month = mp < 10 ? mp + 3 : mp - 9;
  c.year = static_cast<int64_t>(yoe) + era * 400 + (c.month <= 2);
  return c;
}

// A UTC time broken down. Floor division, so times before 1970 work too.
struct CivilTime {
  CivilDate date;
  int hour = 0, minute = 0, second = 0;
  int64_t micros = 0;
  int weekday = 4;  // 0 = Sunday (1970-01-01 was a Thursday)
};

constexpr CivilTime civil_from_time_us(TimeUs t) {
  const int64_t secs = t >= 0 ? t / kUsPerSec : -((-t + kUsPerSec - 1) / kUsPerSec);
  const int64_t days = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);
  const int64_t sod = secs - days * 86400;
  CivilTime c;
  c.date = civil_from_days(days);
  c.hour = static_cast<int>(sod / 3600);
  c.minute = static_cast<int>(sod / 60 % 60);
  c.second = static_cast<int>(sod % 60);
  c.micros = t - secs * kUsPerSec;
  c.weekday = static_cast<int>(((days + 4) % 7 + 7) % 7);
  return c;
}

// A UTC civil time to microseconds since the epoch.
constexpr TimeUs civil_to_time_us(int year, int month, int day, int hour, int minute, int second,
                                  int64_t micros) {
  const int64_t days =
      days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  return (days * 86400 + hour * 3600 + minute * 60 + second) * kUsPerSec + micros;
}

// The times RFC 3339 can write (a four-digit year): 0000-01-01T00:00:00Z to
// 9999-12-31T23:59:59.999999Z. A time outside it would be written as text no
// reader takes back, so every reader of integer times refuses it.
inline constexpr TimeUs kMinRfc3339Us = civil_to_time_us(0, 1, 1, 0, 0, 0, 0);
inline constexpr TimeUs kMaxRfc3339Us = civil_to_time_us(9999, 12, 31, 23, 59, 59, 999999);
constexpr bool in_rfc3339_range(TimeUs t) {
  return t >= kMinRfc3339Us && t <= kMaxRfc3339Us;
}

// Output times: RFC 3339 UTC with microseconds and 'Z'.
std::string format_time_us(TimeUs t);
// Parses what format_time_us writes (and RFC 3339 with offsets / fewer digits);
// nullopt for a time outside in_rfc3339_range once its offset is applied.
std::optional<TimeUs> parse_rfc3339(const std::string& s);

}  // namespace reflex
