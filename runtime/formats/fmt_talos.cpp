// talosctl dmesg (Talos Linux): the kernel ring buffer read through the Talos
// API, each line framed with its node, facility and level. The node names the
// host; kern lines are kernel lines as with dmesg -x.
#include <string>

#include "format_kit.h"
#include "format_registry.h"
#include "line_parser_impl.h"

namespace reflex::formats {

namespace {

// talosctl dmesg: "<node>: <facility>: <level>: [<RFC 3339>]: msg", the level
// right-aligned ("kern:     err:", "kern: warning:"). Returns the length of
// the prefix up to the time's "[" (0 if none); *node gets the node, *kern is
// set when the facility is kern.
size_t talos_prefix(std::string_view s, std::string_view* node, bool* kern) {
  size_t colon = s.find(": ");
  if (colon == 0 || colon == std::string_view::npos || colon > 64) return 0;
  if (!hostname_token(s.substr(0, colon))) return 0;
  size_t i = colon + 2, fs = i;
  while (i < s.size() && ((s[i] >= 'a' && s[i] <= 'z') || is_digit(s[i])) && i - fs < 9) ++i;
  if (i == fs || i >= s.size() || s[i] != ':') return 0;
  std::string_view fac = s.substr(fs, i - fs);
  bool k = false;
  // facility_prefix() knows the facilities and levels: ask it in dmesg -x form.
  std::string probe(fac);
  size_t j = i + 1;
  while (j < s.size() && s[j] == ' ') ++j;
  size_t ls = j;
  while (j < s.size() && s[j] >= 'a' && s[j] <= 'z' && j - ls < 8) ++j;
  std::string_view level = s.substr(ls, j - ls);
  if (level == "warning") level = "warn";
  probe += ":" + std::string(level) + ":";
  if (facility_prefix(probe, &k) != probe.size()) return 0;
  if (j + 2 >= s.size() || s[j] != ':' || s[j + 1] != ' ' || s[j + 2] != '[') return 0;
  *node = s.substr(0, colon);
  *kern = k;
  return j + 2;
}

}  // namespace

// "<node>: <facility>: <level>: [<RFC 3339>]: msg"; the node may be an IP.
Match talos_dmesg(LineParserImpl& p, std::string_view raw, LogRecord* out, std::string_view* msg) {
  std::string_view node;
  bool kern = false;
  size_t n = talos_prefix(raw, &node, &kern);
  if (!n) return Match::kNo;
  Civil c;
  bool comma = false;
  std::string_view rest = raw.substr(n + 1);
  size_t t = parse_iso(rest, &c, &comma);
  if (!t || t + 2 > rest.size() || rest[t] != ']' || rest[t + 1] != ':') return Match::kNo;
  p.set_civil(c, true, out);
  p.host_from_field(node, out);
  out->transport = kern ? kTransportKernel : kTransportSyslog;
  *msg = ltrim(rest.substr(t + 2));
  return Match::kYes;
}

}  // namespace reflex::formats
