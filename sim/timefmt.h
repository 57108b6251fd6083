// Time formats of the log sources the simulator imitates. All times are UTC
// microseconds since the epoch; no time-zone database and no machine clock.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "reflex/time.h"

namespace reflex::sim {

using Us = int64_t;
constexpr Us kSec = 1000000;

struct Civil {
  int year, month, day, hour, minute, second;
  int64_t micros;
  int weekday;  // 0 = Sunday
};

// The calendar arithmetic is the model's (reflex/time.h).
inline Us to_us(int y, int mo, int d, int h, int mi, int s) {
  return reflex::civil_to_time_us(y, mo, d, h, mi, s, 0);
}
inline Civil civil(Us t) {
  const reflex::CivilTime m = reflex::civil_from_time_us(t);
  Civil c{};
  c.year = static_cast<int>(m.date.year);
  c.month = static_cast<int>(m.date.month);
  c.day = static_cast<int>(m.date.day);
  c.hour = m.hour;
  c.minute = m.minute;
  c.second = m.second;
  c.micros = m.micros;
  c.weekday = m.weekday;
  return c;
}

inline const char* month_abbr(int m) {
  static const char* k[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  return k[(m - 1) % 12];
}
inline const char* weekday_abbr(int w) {
  static const char* k[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  return k[w % 7];
}

// 2026-03-05T10:11:12.345678Z
inline std::string iso_us(Us t) {
  Civil c = civil(t);
  char b[96];  // room for any int per field: gcc -O3 checks the worst case (format-truncation)
  std::snprintf(b, sizeof b, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", c.year, c.month, c.day,
                c.hour, c.minute, c.second, static_cast<long long>(c.micros));
  return b;
}
// Appends into a caller buffer (hot path of the file writer).
inline void append_iso_ns(std::string& out, Us t, int extra_ns) {  // CRI: 9 digits
  Civil c = civil(t);
  char b[48];
  int n = std::snprintf(b, sizeof b, "%04d-%02d-%02dT%02d:%02d:%02d.%06lld%03dZ", c.year, c.month,
                        c.day, c.hour, c.minute, c.second, static_cast<long long>(c.micros),
                        extra_ns % 1000);
  out.append(b, static_cast<size_t>(n));
}
inline void append_ymd(std::string& out, Us t) {  // 2026-03-05 10:11:12,345
  Civil c = civil(t);
  char b[96];
  int n = std::snprintf(b, sizeof b, "%04d-%02d-%02d %02d:%02d:%02d,%03lld", c.year, c.month, c.day,
                        c.hour, c.minute, c.second, static_cast<long long>(c.micros / 1000));
  out.append(b, static_cast<size_t>(n));
}
inline void append_dmesg_T(std::string& out, Us t) {  // [Thu Mar  5 10:11:12 2026]
  Civil c = civil(t);
  char b[48];
  int n = std::snprintf(b, sizeof b, "[%s %s %2d %02d:%02d:%02d %04d]", weekday_abbr(c.weekday),
                        month_abbr(c.month), c.day, c.hour, c.minute, c.second, c.year);
  out.append(b, static_cast<size_t>(n));
}
inline void append_rfc3164(std::string& out, Us t) {  // Mar  5 10:11:12
  Civil c = civil(t);
  char b[32];
  int n = std::snprintf(b, sizeof b, "%s %2d %02d:%02d:%02d", month_abbr(c.month), c.day, c.hour,
                        c.minute, c.second);
  out.append(b, static_cast<size_t>(n));
}
inline void append_dmesg_iso(std::string& out, Us t) {  // 2026-03-05T10:11:12,345678+00:00
  Civil c = civil(t);
  char b[48];
  int n = std::snprintf(b, sizeof b, "%04d-%02d-%02dT%02d:%02d:%02d,%06lld+00:00", c.year, c.month,
                        c.day, c.hour, c.minute, c.second, static_cast<long long>(c.micros));
  out.append(b, static_cast<size_t>(n));
}
inline void append_mono(std::string& out, Us mono) {  // [12345.678901]
  char b[96];
  int n = std::snprintf(b, sizeof b, "[%5lld.%06lld]", static_cast<long long>(mono / kSec),
                        static_cast<long long>(mono % kSec));
  out.append(b, static_cast<size_t>(n));
}
// PyTorch c10 glog prefix: E305 10:11:12.345678901 (month not padded, as printed)
inline void append_glog(std::string& out, char level, Us t, int extra_ns) {
  Civil c = civil(t);
  char b[48];
  int n =
      std::snprintf(b, sizeof b, "%c%d%02d %02d:%02d:%02d.%06lld%03d", level, c.month, c.day,
                    c.hour, c.minute, c.second, static_cast<long long>(c.micros), extra_ns % 1000);
  out.append(b, static_cast<size_t>(n));
}
inline void append_fm(std::string& out, Us t) {  // [Mar 05 2026 10:11:12]
  Civil c = civil(t);
  char b[96];
  int n = std::snprintf(b, sizeof b, "[%s %02d %04d %02d:%02d:%02d]", month_abbr(c.month), c.day,
                        c.year, c.hour, c.minute, c.second);
  out.append(b, static_cast<size_t>(n));
}
inline void append_opensm(std::string& out, Us t) {  // Mar 05 10:11:12 123456
  Civil c = civil(t);
  char b[96];
  int n = std::snprintf(b, sizeof b, "%s %02d %02d:%02d:%02d %06lld", month_abbr(c.month), c.day,
                        c.hour, c.minute, c.second, static_cast<long long>(c.micros));
  out.append(b, static_cast<size_t>(n));
}
inline void append_smi(std::string& out, Us t) {  // 2026/03/05 10:11:12.345
  Civil c = civil(t);
  char b[96];
  int n = std::snprintf(b, sizeof b, "%04d/%02d/%02d %02d:%02d:%02d.%03lld", c.year, c.month, c.day,
                        c.hour, c.minute, c.second, static_cast<long long>(c.micros / 1000));
  out.append(b, static_cast<size_t>(n));
}
inline void append_sel(std::string& out, Us t) {  // 03/05/2026 | 10:11:12
  Civil c = civil(t);
  char b[96];
  int n = std::snprintf(b, sizeof b, "%02d/%02d/%04d | %02d:%02d:%02d", c.month, c.day, c.year,
                        c.hour, c.minute, c.second);
  out.append(b, static_cast<size_t>(n));
}

}  // namespace reflex::sim
