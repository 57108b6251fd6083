// Typed-value normalisation for captures (docs/language.md §5 field types).
#include "reflex/values.h"

#include <cctype>
#include <charconv>
#include <cstdlib>

namespace reflex {
namespace {

bool is_hex(char c) {
  return std::isxdigit(static_cast<unsigned char>(c)) != 0;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Appends `n` hex digits of `s` lower-cased, left-padded with zeros to `width`.
bool hex_group(std::string_view g, size_t min_len, size_t max_len, size_t width, std::string* out) {
  if (g.size() < min_len || g.size() > max_len) return false;
  for (char c : g)
    if (!is_hex(c)) return false;
  // Fabric Manager prints an 8-digit domain ("00000000"); keep the low 4 digits.
  if (g.size() > width) {
    for (size_t i = 0; i < g.size() - width; ++i)
      if (g[i] != '0') return false;
    g.remove_prefix(g.size() - width);
  }
  out->append(width - g.size(), '0');
  for (char c : g) out->push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return true;
}

}  // namespace

std::optional<std::string> normalize_bdf(std::string_view s) {
  s = trim(s);
  if (s.size() > 4 && (s.substr(0, 4) == "PCI:" || s.substr(0, 4) == "pci:")) s.remove_prefix(4);
  // Split off the function.
  std::string_view func = "0";
  if (auto dot = s.rfind('.'); dot != std::string_view::npos) {
    func = s.substr(dot + 1);
    s = s.substr(0, dot);
    if (func.size() != 1 || func[0] < '0' || func[0] > '7') return std::nullopt;
  }
  std::string_view parts[3];
  size_t n = 0;
  while (n < 3) {
    auto c = s.find(':');
    parts[n++] = s.substr(0, c);
    if (c == std::string_view::npos) break;
    s.remove_prefix(c + 1);
    if (n == 3) return std::nullopt;  // more than three groups
  }
  std::string out;
  out.reserve(12);
  if (n == 3) {
    if (!hex_group(parts[0], 1, 8, 4, &out)) return std::nullopt;
  } else if (n == 2) {
    out = "0000";
  } else {
    return std::nullopt;
  }
  out.push_back(':');
  if (!hex_group(parts[n - 2], 1, 2, 2, &out)) return std::nullopt;
  out.push_back(':');
  if (!hex_group(parts[n - 1], 1, 2, 2, &out)) return std::nullopt;
  out.push_back('.');
  out.append(func);
  return out;
}

std::optional<std::string> normalize_ip(std::string_view s) {
  s = trim(s);
  if (s.empty() || s.size() > 45) return std::nullopt;
  if (s.find(':') == std::string_view::npos) {
    int parts = 0;
    size_t i = 0;
    while (i <= s.size()) {
      size_t j = s.find('.', i);
      if (j == std::string_view::npos) j = s.size();
      std::string_view p = s.substr(i, j - i);
      if (p.empty() || p.size() > 3) return std::nullopt;
      int v = 0;
      for (char c : p) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + (c - '0');
      }
      if (v > 255) return std::nullopt;
      ++parts;
      i = j + 1;
      if (j == s.size()) break;
    }
    if (parts != 4) return std::nullopt;
    return std::string(s);
  }
  std::string out;
  for (char c : s) {
    if (!is_hex(c) && c != ':' && c != '.') return std::nullopt;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

std::optional<std::string> normalize_hex(std::string_view s) {
  s = trim(s);
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  if (s.empty() || s.size() > 32) return std::nullopt;
  std::string out = "0x";
  for (char c : s) {
    if (!is_hex(c)) return std::nullopt;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

std::optional<int64_t> parse_int(std::string_view s) {
  s = trim(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::optional<double> parse_float(std::string_view s) {
  s = trim(s);
  if (s.empty() || s.size() > 64) return std::nullopt;
  std::string tmp(s);
  char* end = nullptr;
  double v = std::strtod(tmp.c_str(), &end);
  if (end != tmp.c_str() + tmp.size()) return std::nullopt;
  return v;
}

std::optional<std::string> normalize_value(FieldType type, std::string_view raw) {
  switch (type) {
    case FieldType::int_:
      if (auto v = parse_int(raw)) return std::to_string(*v);
      return std::nullopt;
    case FieldType::hex:
      return normalize_hex(raw);
    case FieldType::float_:
      if (parse_float(raw)) return std::string(trim(raw));
      return std::nullopt;
    case FieldType::bdf:
      return normalize_bdf(raw);
    case FieldType::ip:
      return normalize_ip(raw);
    case FieldType::string:
      return std::string(raw);
  }
  return std::nullopt;
}

std::optional<double> parse_duration_s(std::string_view s) {
  s = trim(s);
  size_t i = 0;
  while (i < s.size() &&
         (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.' || (i == 0 && s[i] == '-')))
    ++i;
  auto num = parse_float(s.substr(0, i));
  if (!num) return std::nullopt;
  std::string_view unit = s.substr(i);
  double mult;
  if (unit == "ms")
    mult = 0.001;
  else if (unit == "s")
    mult = 1;
  else if (unit == "m")
    mult = 60;
  else if (unit == "h")
    mult = 3600;
  else if (unit == "d")
    mult = 86400;
  else
    return std::nullopt;
  return *num * mult;
}

}  // namespace reflex
