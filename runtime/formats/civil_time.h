// Small fixed-format time scanners shared by the line parser and the bundle
// walker (the calendar arithmetic is the model's, reflex/time.h). No allocation, no locale, no
// system clock.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "reflex/time.h"

namespace reflex::formats {

inline bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// days_from_civil, civil_from_days and kUsPerSec are the model's (reflex/time.h).
inline int year_of_us(int64_t us) {
  return static_cast<int>(civil_from_time_us(us).date.year);
}

struct Civil {
  int year = 0;  // 0 = not given by the format
  int month = 0, day = 0, hour = 0, minute = 0, second = 0;
  int64_t frac_us = 0;
  bool has_zone = false;  // an explicit Z / offset was present
  int zone_s = 0;         // offset east of UTC, seconds
};

inline bool valid(const Civil& c) {
  return c.month >= 1 && c.month <= 12 && c.day >= 1 && c.day <= 31 && c.hour <= 23 &&
         c.minute <= 59 && c.second <= 60;
}

// Microseconds since the epoch; the civil time is local at `zone_s` east of UTC.
inline int64_t to_us(const Civil& c, int year, int zone_s) {
  int64_t days = days_from_civil(year, unsigned(c.month), unsigned(c.day));
  int64_t secs = days * 86400 + c.hour * 3600 + c.minute * 60 + c.second - zone_s;
  return secs * kUsPerSec + c.frac_us;
}

// Reads exactly n digits at s[*i].
inline bool digits(std::string_view s, size_t* i, size_t n, int* out) {
  if (*i + n > s.size()) return false;
  int v = 0;
  for (size_t k = 0; k < n; ++k) {
    char c = s[*i + k];
    if (!is_digit(c)) return false;
    v = v * 10 + (c - '0');
  }
  *i += n;
  *out = v;
  return true;
}

// Fraction digits after '.' or ',' (any count; kept to microseconds).
inline int64_t fraction(std::string_view s, size_t* i) {
  int64_t us = 0;
  int n = 0;
  while (*i < s.size() && is_digit(s[*i])) {
    if (n < 6) {
      us = us * 10 + (s[*i] - '0');
      ++n;
    }
    ++*i;
  }
  while (n < 6) {
    us *= 10;
    ++n;
  }
  return us;
}

// "Jan".."Dec" -> 1..12; 0 otherwise.
inline int month_abbrev(std::string_view s) {
  if (s.size() < 3) return 0;
  static constexpr const char* kM = "JanFebMarAprMayJunJulAugSepOctNovDec";
  for (int m = 0; m < 12; ++m)
    if (s[0] == kM[m * 3] && s[1] == kM[m * 3 + 1] && s[2] == kM[m * 3 + 2]) return m + 1;
  return 0;
}

inline bool weekday_abbrev(std::string_view s) {
  if (s.size() < 3) return false;
  static constexpr const char* kD = "MonTueWedThuFriSatSun";
  for (int d = 0; d < 7; ++d)
    if (s[0] == kD[d * 3] && s[1] == kD[d * 3 + 1] && s[2] == kD[d * 3 + 2]) return true;
  return false;
}

// "HH:MM:SS" at s[*i].
inline bool hms(std::string_view s, size_t* i, Civil* c) {
  return digits(s, i, 2, &c->hour) && *i < s.size() && s[(*i)++] == ':' &&
         digits(s, i, 2, &c->minute) && *i < s.size() && s[(*i)++] == ':' &&
         digits(s, i, 2, &c->second);
}

// Zone suffix: "Z", "+hh:mm", "+hhmm", "+hh". Leaves *i unchanged when absent.
inline bool zone(std::string_view s, size_t* i, Civil* c) {
  if (*i >= s.size()) return true;
  char z = s[*i];
  if (z == 'Z' || z == 'z') {
    ++*i;
    c->has_zone = true;
    c->zone_s = 0;
    return true;
  }
  if (z != '+' && z != '-') return true;
  size_t j = *i + 1;
  int hh = 0, mm = 0;
  if (!digits(s, &j, 2, &hh)) return true;  // not a zone (e.g. "-" separator)
  if (j < s.size() && s[j] == ':') {
    ++j;
    if (!digits(s, &j, 2, &mm)) return false;
  } else if (j + 1 < s.size() && is_digit(s[j]) && is_digit(s[j + 1])) {
    digits(s, &j, 2, &mm);
  }
  if (hh > 14 || mm > 59) return false;
  c->has_zone = true;
  c->zone_s = (hh * 3600 + mm * 60) * (z == '-' ? -1 : 1);
  *i = j;
  return true;
}

// ISO 8601 / RFC 3339 date-time at the start of s:
// YYYY-MM-DD[T ]HH:MM:SS[(.|,)frac][zone]. Returns the length consumed, 0 if none.
// *comma is set when the fraction used ',' (util-linux dmesg --time-format iso).
inline size_t parse_iso(std::string_view s, Civil* c, bool* comma = nullptr) {
  size_t i = 0;
  if (!digits(s, &i, 4, &c->year) || i >= s.size() || s[i++] != '-' ||
      !digits(s, &i, 2, &c->month) || i >= s.size() || s[i++] != '-' ||
      !digits(s, &i, 2, &c->day) || i >= s.size() || (s[i] != 'T' && s[i] != ' '))
    return 0;
  ++i;
  if (!hms(s, &i, c)) return 0;
  c->frac_us = 0;
  if (comma) *comma = false;
  if (i < s.size() && (s[i] == '.' || s[i] == ',') && i + 1 < s.size() && is_digit(s[i + 1])) {
    if (comma) *comma = s[i] == ',';
    ++i;
    c->frac_us = fraction(s, &i);
  }
  c->has_zone = false;
  if (!zone(s, &i, c)) return 0;
  if (!valid(*c)) return 0;
  return i;
}

}  // namespace reflex::formats
