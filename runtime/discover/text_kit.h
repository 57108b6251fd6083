// Small text helpers the discover parsers share.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace reflex::discover::kit {

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// Lines without their '\n' (and a trailing '\r').
inline std::vector<std::string_view> lines(std::string_view text) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.push_back(line);
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return out;
}

// Whitespace-separated tokens.
inline std::vector<std::string_view> tokens(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

inline bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
inline bool all_hex(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!is_hex(c)) return false;
  return true;
}
inline bool all_digits(std::string_view s) {
  if (s.empty() || s.size() > 9) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}
inline std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  return out;
}
// "key : value" of nvidia-smi -q and ibstat: the value after the first ':'.
inline bool key_value(std::string_view line, std::string_view key, std::string_view* value) {
  std::string_view t = trim(line);
  if (t.substr(0, key.size()) != key) return false;
  std::string_view rest = trim(t.substr(key.size()));
  if (rest.empty() || rest.front() != ':') return false;
  *value = trim(rest.substr(1));
  return true;
}

}  // namespace reflex::discover::kit
