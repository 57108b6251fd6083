// Application logs that frame their own lines: PyTorch's "[rank3]:" and its
// glog bracket, glog itself, NCCL's "host:pid:tid [3] ", torch elastic's
// "[default7]:" and kubectl's "[pod/name/container] ". They give a rank hint
// (never a host: the names in them are pod names) and, for glog, a year-less
// time.
#include "format_kit.h"
#include "format_registry.h"
#include "line_parser_impl.h"

namespace reflex::formats {

namespace {

// PyTorch/glog "[E603 17:48:01.005271823 ProcessGroupNCCL.cpp:632] " or glog
// "E0603 17:48:01.005271 12345 file.cc:632] ". Month/day but no year.
size_t glog_prefix(std::string_view s, Civil* c) {
  size_t i = 0;
  bool bracket = !s.empty() && s[0] == '[';
  if (bracket) ++i;
  if (i >= s.size() || (s[i] != 'I' && s[i] != 'W' && s[i] != 'E' && s[i] != 'F')) return 0;
  ++i;
  size_t ds = i;
  while (i < s.size() && is_digit(s[i])) ++i;
  size_t nd = i - ds;
  if (nd != 3 && nd != 4) return 0;
  int md = 0;
  for (size_t k = ds; k < i; ++k) md = md * 10 + (s[k] - '0');
  c->month = md / 100;
  c->day = md % 100;
  if (i >= s.size() || s[i++] != ' ' || !hms(s, &i, c)) return 0;
  c->frac_us = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    c->frac_us = fraction(s, &i);
  }
  c->year = 0;
  if (!valid(*c)) return 0;
  size_t close = s.find(']', i);
  if (close == std::string_view::npos || close > i + 160) return 0;
  i = close + 1;
  while (i < s.size() && s[i] == ' ') ++i;
  return i;
}

// NCCL: "node-0017:1234:5678 [3] " -> local device hint 3. The name before the
// first ':' is often a pod name and never chooses the host.
size_t nccl_prefix(std::string_view s, int* rank) {
  size_t sp = s.find(' ');
  if (sp == std::string_view::npos || sp == 0 || sp > 256) return 0;
  std::string_view tok = s.substr(0, sp);
  size_t c2 = tok.rfind(':');
  if (c2 == std::string_view::npos || c2 + 1 >= tok.size()) return 0;
  size_t c1 = tok.rfind(':', c2 - 1);
  if (c1 == std::string_view::npos || c1 == 0 || c2 == 0) return 0;
  for (size_t k = c1 + 1; k < tok.size(); ++k)
    if (k != c2 && !is_digit(tok[k])) return 0;
  if (c2 == c1 + 1) return 0;
  size_t i = sp + 1;
  if (i >= s.size() || s[i] != '[') return 0;
  size_t j = i + 1;
  int r = 0;
  while (j < s.size() && is_digit(s[j]) && j - i < 7) r = r * 10 + (s[j++] - '0');
  if (j == i + 1 || j >= s.size() || s[j] != ']') return 0;
  *rank = r;
  ++j;
  while (j < s.size() && s[j] == ' ') ++j;
  return j;
}

// "[rank3]:" (PyTorch's per-rank prefix).
size_t rank_prefix(std::string_view s, int* rank) {
  if (s.size() < 8 || s.substr(0, 5) != "[rank") return 0;
  size_t i = 5;
  int r = 0;
  while (i < s.size() && is_digit(s[i]) && i < 14) r = r * 10 + (s[i++] - '0');
  if (i == 5 || i + 1 >= s.size() || s[i] != ']' || s[i + 1] != ':') return 0;
  *rank = r;
  i += 2;
  while (i < s.size() && s[i] == ' ') ++i;
  return i;
}

}  // namespace

// Application-level prefixes inside a message: "[rank3]:[E603 ...]" and NCCL's
// "host:pid:tid [3] ". They give a rank hint; the host name is ignored.
void app_prefixes(LineParserImpl& p, std::string_view* msg, LogRecord* out) {
  int r = -1;
  // torch.distributed.elastic's "[default7]:" (a local rank, not a global one)
  // and `kubectl logs --prefix`'s "[pod/name/container] ".
  if (msg->size() > 10 && (*msg)[0] == '[') {
    if (msg->substr(1, 7) == "default") {
      size_t i = 8;
      while (i < msg->size() && is_digit((*msg)[i]) && i < 14) ++i;
      if (i > 8 && i + 1 < msg->size() && (*msg)[i] == ']' && (*msg)[i + 1] == ':') {
        msg->remove_prefix(i + 2);
        *msg = ltrim(*msg);
      }
    } else if (msg->substr(1, 4) == "pod/") {
      size_t close = msg->find("] ");
      if (close != std::string_view::npos && close < 256) *msg = ltrim(msg->substr(close + 2));
    }
  }
  if (size_t n = rank_prefix(*msg, &r)) {
    out->rank_hint = r;
    msg->remove_prefix(n);
    Civil c;
    if (size_t g = glog_prefix(*msg, &c)) {
      if (!out->time.wall && !out->time.mono) p.set_civil(c, true, out);
      msg->remove_prefix(g);
    }
    return;
  }
  if (!msg->empty() && is_hex(msg->front()) == false && !is_alpha(msg->front())) return;
  if (size_t n = nccl_prefix(*msg, &r)) {
    out->rank_hint = r;
    msg->remove_prefix(n);
  }
}

// "[rank3]:...": the prefix (and a glog time behind it) is read by
// app_prefixes once the format is settled; here it only claims the line.
Match app_rank(LineParserImpl&, std::string_view raw, LogRecord*, std::string_view*) {
  int r;
  return rank_prefix(raw, &r) ? Match::kYes : Match::kNo;
}

// "E0603 17:48:01.005271 12345 file.cc:632] msg": month and day, no year.
Match app_glog(LineParserImpl& p, std::string_view raw, LogRecord* out, std::string_view* msg) {
  Civil c;
  size_t n = glog_prefix(raw, &c);
  if (!n) return Match::kNo;
  p.set_civil(c, true, out);
  *msg = raw.substr(n);
  return Match::kYes;
}

}  // namespace reflex::formats
