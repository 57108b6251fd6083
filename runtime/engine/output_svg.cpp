// The SVG rendering of a Diagnosis: one panel per incident with the devices as
// lanes (grouped by host) on a real time axis, the evidence chain as arrows
// from the root to the trigger, the root's PCIe subtree and a legend. Self-
// contained (no script, no external font or image): it is opened from a
// ticket or a chat at 3 a.m. Every text from a log (lines, device ids, file
// names) is escaped and made valid UTF-8: the input is hostile.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "reflex/device_id.h"
#include "reflex/diagnosis.h"
#include "reflex/time.h"
#include "reflex/topology.h"

namespace reflex {
namespace {

// Layout (px). The plot's width is fixed so that one incident's time scale
// reads the same from picture to picture.
constexpr double kWidth = 1280, kLabelX = 12, kPlotX0 = 300, kPlotX1 = 980;
constexpr double kNoTimeX0 = 1000, kNoTimeX1 = 1270;
constexpr double kLaneH = 26, kHostH = 20, kTitleH = 84, kAxisH = 30;
constexpr size_t kMaxLanes = 40, kMaxChildren = 16, kMaxMarks = 200;

// Valid UTF-8 (a bad byte becomes U+FFFD), no control characters, XML-escaped,
// at most `max` bytes of input.
std::string xml_text(std::string_view s, size_t max = 240) {
  std::string o;
  size_t i = 0;
  const size_t n = std::min(s.size(), max);
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (c == '&')
        o += "&amp;";
      else if (c == '<')
        o += "&lt;";
      else if (c == '>')
        o += "&gt;";
      else if (c == '"')
        o += "&quot;";
      else if (c == '\'')
        o += "&#39;";
      else if (c < 0x20 || c == 0x7f)
        o += ' ';
      else
        o += static_cast<char>(c);
      ++i;
      continue;
    }
    size_t len = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c <= 0xdf ? 2 : 0;
    bool ok = len > 0 && i + len <= n;
    for (size_t k = 1; ok && k < len; ++k)
      ok = (static_cast<unsigned char>(s[i + k]) & 0xc0) == 0x80;
    if (ok && len == 3) {  // no overlong forms, no surrogates
      unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
      ok = !(c == 0xe0 && c1 < 0xa0) && !(c == 0xed && c1 >= 0xa0);
    }
    if (ok && len == 4) {
      unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
      ok = !(c == 0xf0 && c1 < 0x90) && !(c == 0xf4 && c1 >= 0x90);
    }
    if (ok) {
      o.append(s.substr(i, len));
      i += len;
    } else {
      o += "\xef\xbf\xbd";
      ++i;
    }
  }
  if (s.size() > max) o += "...";
  return o;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string duration_text(double s) {
  char buf[48];
  if (s < 1)
    std::snprintf(buf, sizeof buf, "+%.0f ms", s * 1000);
  else if (s < 120)
    std::snprintf(buf, sizeof buf, "+%.1f s", s);
  else if (s < 7200)
    std::snprintf(buf, sizeof buf, "+%.0f min", s / 60);
  else if (s < 172800)
    std::snprintf(buf, sizeof buf, "+%.1f h", s / 3600);
  else
    std::snprintf(buf, sizeof buf, "+%.1f days", s / 86400);
  return buf;
}

std::string time_title(const EventTime& t) {
  if (t.wall) return format_time_us(*t.wall);
  if (t.mono) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "[%.6f s since boot]", *t.mono);
    return buf;
  }
  return "(no time)";
}

// The short name of a rule ("name:cause->effect" of a group rule: "name").
std::string rule_short(const std::string& r) {
  return r.substr(0, r.find(':'));
}

// What one mark on a lane is, in the order its style takes precedence.
enum class Role { root, chain, device_evidence, unexplained, alternative };

const char* role_class(Role r) {
  switch (r) {
    case Role::root:
      return "mark root";
    case Role::chain:
      return "mark chain";
    case Role::device_evidence:
      return "mark device-evidence";
    case Role::unexplained:
      return "mark unexplained";
    case Role::alternative:
      return "mark alternative";
  }
  return "mark";
}

struct Mark {
  EventRef ev;
  Role role;
  size_t lane = 0;
  double x = 0, y = 0;
};

struct Lane {
  std::string device, group;
  bool culprit = false;
};

// The group a device's lane sits in: its host (the topology's for a rank),
// else the job or the cluster.
std::string lane_group(const std::string& device, const Topology* topo) {
  if (topo)
    if (auto info = topo->device(device); info && !info->host.empty()) return info->host;
  const DeviceIdView id = DeviceIdView::parse(device);
  if (id.valid && !id.host.empty()) return std::string(id.host);
  if (id.valid && !id.job.empty()) return "job/" + std::string(id.job);
  return "cluster";
}

// "rank2" before "rank10": digit runs compare as numbers.
bool natural_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      size_t i2 = i, j2 = j;
      while (i2 < a.size() && a[i2] == '0') ++i2;
      while (j2 < b.size() && b[j2] == '0') ++j2;
      size_t ie = i2, je = j2;
      while (ie < a.size() && digit(a[ie])) ++ie;
      while (je < b.size() && digit(b[je])) ++je;
      if (ie - i2 != je - j2) return ie - i2 < je - j2;
      int c = a.compare(i2, ie - i2, b, j2, je - j2);
      if (c != 0) return c < 0;
      i = ie;
      j = je;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j;
}

// One incident's marks and lanes, before layout.
struct Panel {
  std::vector<Mark> marks;
  std::vector<Lane> lanes;
  size_t lanes_cut = 0;
  std::optional<TimeUs> t0, t1;
  bool any_untimed = false;
};

Panel collect(const Diagnosis& d, const Topology* topo) {
  Panel p;
  std::map<std::string, size_t> lane_of;
  std::set<std::tuple<std::string, std::string, std::string>> seen;  // device, event, evidence
  auto add = [&](const EventRef& e, Role role) {
    if (p.marks.size() >= kMaxMarks) return;
    if (!seen.insert({e.device, e.event, e.evidence + "|" + time_title(e.time)}).second) return;
    auto it = lane_of.find(e.device);
    if (it == lane_of.end()) {
      if (p.lanes.size() >= kMaxLanes) {
        ++p.lanes_cut;
        return;
      }
      it = lane_of.emplace(e.device, p.lanes.size()).first;
      p.lanes.push_back({e.device, lane_group(e.device, topo), false});
    }
    Mark m{e, role, it->second};
    p.marks.push_back(std::move(m));
    if (e.time.wall) {
      p.t0 = p.t0 ? std::min(*p.t0, *e.time.wall) : *e.time.wall;
      p.t1 = p.t1 ? std::max(*p.t1, *e.time.wall) : *e.time.wall;
    } else {
      p.any_untimed = true;
    }
  };
  if (!d.root_causes.empty()) {
    const RootCause& r = d.root_causes[0];
    for (size_t k = 0; k < r.chain.size(); ++k)
      add(r.chain[k].ev, k == 0 ? Role::root : Role::chain);
    for (const EventRef& e : r.device_evidence) add(e, Role::device_evidence);
  }
  if (d.trigger) add(*d.trigger, Role::chain);
  for (const EventRef& u : d.unexplained) add(u, Role::unexplained);
  for (size_t i = 1; i < d.root_causes.size(); ++i)
    if (!d.root_causes[i].chain.empty()) add(d.root_causes[i].chain[0].ev, Role::alternative);
  if (!d.root_causes.empty())
    for (Lane& l : p.lanes) l.culprit = l.device == d.root_causes[0].device;
  // Lanes grouped by host, the culprit's host first, then in order of appearance.
  std::vector<std::string> groups;
  for (const Lane& l : p.lanes)
    if (std::find(groups.begin(), groups.end(), l.group) == groups.end()) groups.push_back(l.group);
  std::set<std::string> in_chain;
  if (!d.root_causes.empty())
    for (const ChainLink& l : d.root_causes[0].chain) in_chain.insert(l.ev.device);
  std::vector<size_t> order;
  for (const std::string& g : groups) {
    const size_t from = order.size();
    for (size_t i = 0; i < p.lanes.size(); ++i)
      if (p.lanes[i].group == g) order.push_back(i);
    // In a host: the culprit, the chain's devices, then the rest by name (rank2 before rank10).
    std::stable_sort(
        order.begin() + static_cast<std::ptrdiff_t>(from), order.end(), [&](size_t a, size_t b) {
          const Lane &x = p.lanes[a], &y = p.lanes[b];
          if (x.culprit != y.culprit) return x.culprit;
          const bool cx = in_chain.count(x.device) > 0, cy = in_chain.count(y.device) > 0;
          if (cx != cy) return cx;
          return natural_less(x.device, y.device);
        });
  }
  std::vector<size_t> new_index(p.lanes.size());
  std::vector<Lane> lanes;
  for (size_t k = 0; k < order.size(); ++k) {
    new_index[order[k]] = k;
    lanes.push_back(p.lanes[order[k]]);
  }
  p.lanes = std::move(lanes);
  for (Mark& m : p.marks) m.lane = new_index[m.lane];
  return p;
}

// A tick step (µs) giving at most about 8 ticks over `span`.
int64_t tick_step(int64_t span) {
  static const int64_t kSteps[] = {100000,     200000,     500000,      1000000,     2000000,
                                   5000000,    10000000,   15000000,    30000000,    60000000,
                                   120000000,  300000000,  600000000,   900000000,   1800000000,
                                   3600000000, 7200000000, 21600000000, 43200000000, 86400000000};
  for (int64_t s : kSteps)
    if (span / s <= 8) return s;
  int64_t day = 86400000000;
  return ((span / day) / 8 + 1) * day;
}

std::string tick_label(TimeUs t, int64_t step) {
  std::string f = format_time_us(t);  // 2026-03-05T10:41:02.301144Z
  if (f.size() < 23) return f;
  if (step < 1000000) return f.substr(11, 10);
  if (step < 60000000) return f.substr(11, 8);
  if (step < 86400000000) return f.substr(11, 5);
  return f.substr(5, 5);
}

class PanelWriter {
 public:
  PanelWriter(const Diagnosis& d, const Topology* topo, size_t index, double y0)
      : d_(d), topo_(topo), idx_(index), y0_(y0), p_(collect(d, topo)) {}

  // Appends the panel's SVG; returns its height.
  double write(std::string* out) {
    s_ = out;
    id_ = "inc" + std::to_string(idx_);
    *s_ += "<g class=\"incident\" id=\"" + id_ + "\">\n";
    title();
    const double lanes_y = y0_ + kTitleH + kAxisH;
    const double lanes_h = lanes(lanes_y);
    axis(y0_ + kTitleH, lanes_y + lanes_h);
    place_marks();
    arrows();
    marks();
    double h = kTitleH + kAxisH + lanes_h + 10;
    h += subtree(y0_ + h);
    *s_ += "</g>\n";
    return h + 16;
  }

 private:
  void text(double x, double y, const std::string& cls, const std::string& escaped,
            const char* anchor = "start") {
    *s_ += "<text class=\"" + cls + "\" x=\"" + num(x) + "\" y=\"" + num(y) + "\" text-anchor=\"" +
           anchor + "\">" + escaped + "</text>\n";
  }

  void title() {
    std::string head = "Incident " + d_.incident;
    if (!d_.job.empty()) head += " \xc2\xb7 " + d_.job;
    head += d_.trigger ? " \xc2\xb7 " + std::to_string(d_.symptoms) + " symptom event(s)"
                       : std::string(" \xc2\xb7 no job-level symptom");
    text(kLabelX, y0_ + 20, "title", xml_text(head));
    std::string root = "no root cause found";
    if (!d_.root_causes.empty()) {
      const RootCause& r = d_.root_causes[0];
      root = "Root cause: " + r.device + (r.host.empty() ? "" : " (host " + r.host + ")") + "  [" +
             r.fault_class + "]  " + r.event + ", confidence " +
             (r.confidence.empty() ? "-" : r.confidence);
    }
    text(kLabelX, y0_ + 40, "subtitle", xml_text(root, 400));
    std::string trig = d_.trigger ? "Trigger: " + d_.trigger->event + " on " + d_.trigger->device +
                                        " at " + time_title(d_.trigger->time)
                                  : "Trigger: none (fault evidence diagnosed on its own)";
    text(kLabelX, y0_ + 58, "subtitle", xml_text(trig, 400));
  }

  double lanes(double y) {
    double h = 0;
    std::string group;
    lane_y_.assign(p_.lanes.size(), 0);
    for (size_t i = 0; i < p_.lanes.size(); ++i) {
      const Lane& l = p_.lanes[i];
      if (l.group != group) {
        group = l.group;
        *s_ += "<g class=\"host\"><rect class=\"host-band\" x=\"0\" y=\"" + num(y + h) +
               "\" width=\"" + num(kWidth) + "\" height=\"" + num(kHostH) + "\"/>\n";
        text(kLabelX, y + h + 14, "host-label", xml_text(group));
        *s_ += "</g>\n";
        h += kHostH;
      }
      const double ly = y + h;
      lane_y_[i] = ly + kLaneH / 2;
      *s_ += std::string("<g class=\"lane") + (l.culprit ? " culprit" : "") + "\" id=\"" + id_ +
             "-lane" + std::to_string(i) + "\">\n";
      *s_ += "<rect class=\"lane-bg\" x=\"0\" y=\"" + num(ly) + "\" width=\"" + num(kWidth) +
             "\" height=\"" + num(kLaneH) + "\"/>\n";
      *s_ += "<line class=\"lane-line\" x1=\"" + num(kPlotX0) + "\" y1=\"" + num(lane_y_[i]) +
             "\" x2=\"" + num(kNoTimeX1) + "\" y2=\"" + num(lane_y_[i]) + "\"/>\n";
      text(kLabelX + 12, lane_y_[i] + 4, "lane-label", xml_text(l.device, 60));
      *s_ += "</g>\n";
      h += kLaneH;
    }
    if (p_.lanes_cut) {
      text(kLabelX + 12, y + h + 14, "note",
           std::to_string(p_.lanes_cut) + " more device(s) not drawn (--format json lists them)");
      h += kHostH;
    }
    if (p_.lanes.empty()) {
      text(kLabelX, y + 16, "note", "no event to draw");
      h += kLaneH;
    }
    return h;
  }

  double x_of(TimeUs t) const {
    const double span = static_cast<double>(*p_.t1 - *p_.t0);
    return kPlotX0 + 20 + (static_cast<double>(t - *p_.t0) / span) * (kPlotX1 - kPlotX0 - 40);
  }

  void axis(double y, double bottom) {
    *s_ += "<g class=\"axis\">\n";
    if (p_.t0) {
      if (*p_.t1 == *p_.t0) {  // one instant: a second around it
        p_.t0 = *p_.t0 - 500000;
        p_.t1 = *p_.t1 + 500000;
      }
      const int64_t span = *p_.t1 - *p_.t0;
      const int64_t step = tick_step(span);
      for (int64_t t = (*p_.t0 / step + 1) * step; t <= *p_.t1; t += step) {
        const double x = x_of(t);
        *s_ += "<line class=\"tick\" x1=\"" + num(x) + "\" y1=\"" + num(y + 18) + "\" x2=\"" +
               num(x) + "\" y2=\"" + num(bottom) + "\"/>\n";
        text(x, y + 14, "tick-label", tick_label(t, step), "middle");
      }
      const std::string f = format_time_us(*p_.t0);
      text(kPlotX0, y - 2, "axis-label", "time (UTC), " + f.substr(0, 10), "start");
    } else {
      text(kPlotX0, y + 14, "axis-label", "no event has a wall-clock time");
    }
    *s_ += "</g>\n";
    if (p_.any_untimed || !p_.t0) {
      *s_ += "<g class=\"notime-band\"><rect x=\"" + num(kNoTimeX0) + "\" y=\"" + num(y + 18) +
             "\" width=\"" + num(kNoTimeX1 - kNoTimeX0) + "\" height=\"" + num(bottom - y - 18) +
             "\"/>\n";
      text((kNoTimeX0 + kNoTimeX1) / 2, y + 14, "tick-label", "no wall time", "middle");
      *s_ += "</g>\n";
    }
  }

  // Marks without a wall time sit in the "no wall time" band, in input order,
  // close together on their lane (one label stands for them).
  void place_marks() {
    std::vector<size_t> untimed(p_.lanes.size(), 0);
    for (Mark& m : p_.marks) {
      m.y = lane_y_[m.lane];
      if (m.ev.time.wall)
        m.x = x_of(*m.ev.time.wall);
      else
        m.x = kNoTimeX0 + 15 + 10 * static_cast<double>(std::min<size_t>(untimed[m.lane]++, 8));
    }
  }

  const Mark* mark_of(const EventRef& e) const {
    for (const Mark& m : p_.marks)
      if (m.ev.device == e.device && m.ev.event == e.event && m.ev.evidence == e.evidence)
        return &m;
    return nullptr;
  }

  void arrows() {
    if (d_.root_causes.empty()) return;
    const RootCause& r = d_.root_causes[0];
    *s_ += "<g class=\"chain\">\n";
    for (size_t k = 1; k < r.chain.size(); ++k) {
      const Mark* a = mark_of(r.chain[k - 1].ev);
      const Mark* b = mark_of(r.chain[k].ev);
      if (!a || !b) continue;
      const double dx = std::fabs(b->x - a->x) / 3;
      const double lift = a->y == b->y ? -22 : 0;  // same lane: arc above it
      *s_ += "<path class=\"chain-arrow\" id=\"" + id_ + "-step" + std::to_string(k) + "\" d=\"M" +
             num(a->x) + "," + num(a->y) + " C" + num(a->x + dx) + "," + num(a->y + lift) + " " +
             num(b->x - dx) + "," + num(b->y + lift) + " " + num(b->x) + "," + num(b->y) +
             "\" marker-end=\"url(#arrow)\"><title>" +
             xml_text(r.chain[k].rule + " " + r.chain[k].rule_name + ", " + r.chain[k].relation) +
             "</title></path>\n";
      std::string label = rule_short(r.chain[k].rule_name);
      const auto& ta = r.chain[k - 1].ev.time.wall;
      const auto& tb = r.chain[k].ev.time.wall;
      if (ta && tb && *tb >= *ta) label += "  " + duration_text(double(*tb - *ta) / 1e6);
      const double ly = (a->y + b->y) / 2 + (a->y == b->y ? -14 : -4);
      text((a->x + b->x) / 2 + 6, ly, "step-label", xml_text(label, 80), "start");
    }
    *s_ += "</g>\n";
  }

  void marks() {
    // The root drawn last (on top); a label only where no label of the same
    // lane is near, that one saying how many it stands for (tooltips name each).
    std::vector<size_t> order(p_.marks.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return static_cast<int>(p_.marks[a].role) > static_cast<int>(p_.marks[b].role);
    });
    std::vector<size_t> by_x = order;
    std::stable_sort(by_x.begin(), by_x.end(), [&](size_t a, size_t b) {
      const Mark &x = p_.marks[a], &y = p_.marks[b];
      if (x.lane != y.lane) return x.lane < y.lane;
      if (x.role != y.role) return x.role < y.role;  // the root names its cluster
      return x.x < y.x;
    });
    std::vector<int> more(p_.marks.size(), -1);  // -1: no label; else marks it stands for
    size_t head = SIZE_MAX;
    for (size_t i : by_x) {
      const Mark& m = p_.marks[i];
      if (m.role == Role::unexplained) continue;  // many: the tooltip names them
      if (head != SIZE_MAX && p_.marks[head].lane == m.lane &&
          std::fabs(p_.marks[head].x - m.x) < 90) {
        ++more[head];
        continue;
      }
      head = i;
      more[i] = 0;
    }
    for (size_t i : order) {
      const Mark& m = p_.marks[i];
      std::string cls = role_class(m.role);
      if (m.ev.latent) cls += " latent";
      const std::string tip =
          xml_text(m.ev.event + " on " + m.ev.device + " at " + time_title(m.ev.time) +
                       (m.ev.count > 1 ? " (x" + std::to_string(m.ev.count) + ")" : ""),
                   400) +
          (m.ev.evidence.empty() ? "" : "\n" + xml_text(m.ev.evidence + ": " + m.ev.line, 400));
      *s_ += "<g class=\"" + cls + "\"><title>" + tip + "</title>";
      const double r = m.role == Role::root ? 8 : m.role == Role::unexplained ? 4 : 6;
      if (m.role == Role::alternative)
        *s_ += "<rect x=\"" + num(m.x - 5) + "\" y=\"" + num(m.y - 5) +
               "\" width=\"10\" height=\"10\"/>";
      else
        *s_ += "<circle cx=\"" + num(m.x) + "\" cy=\"" + num(m.y) + "\" r=\"" + num(r) + "\"/>";
      *s_ += "</g>\n";
      if (more[i] < 0) continue;
      // In the band a label has the band's width; on the axis, the plot's.
      std::string label = xml_text(m.ev.event, m.x >= kNoTimeX0 ? 24 : 60);
      if (m.ev.count > 1) label += " x" + std::to_string(m.ev.count);
      if (more[i] > 0) label += " (+" + std::to_string(more[i]) + " here)";
      const bool right = m.x > kPlotX0 + 0.7 * (kPlotX1 - kPlotX0) && m.x < kNoTimeX0;
      if (right)  // near the band: the label goes left of its mark
        text(m.x - 10, m.y - 8, "mark-label", label, "end");
      else
        text(m.x + 10, m.y - 8, "mark-label", label);
    }
  }

  // The devices under the root's PCIe switch (or under the root, when it is
  // one): where a person looks next with lspci -tv.
  double subtree(double y) {
    if (!topo_ || d_.root_causes.empty()) return 0;
    const std::string& root = d_.root_causes[0].device;
    auto info = topo_->device(root);
    if (!info || info->placeholder) return 0;
    std::string top;
    if (info->kind == DeviceKind::pcie_port) {
      top = root;
    } else if (info->kind == DeviceKind::gpu || info->kind == DeviceKind::nic ||
               info->kind == DeviceKind::nvswitch) {
      size_t fewest = SIZE_MAX;  // the nearest switch above: the fewest devices below it
      for (const std::string& sw :
           topo_->related_devices(Relation::below, root, false, DeviceKind::pcie_port, 64)) {
        size_t n = children(sw).size();
        if (n < fewest) {
          fewest = n;
          top = sw;
        }
      }
    }
    if (top.empty()) return 0;
    std::vector<std::string> kids = children(top);
    if (kids.empty()) return 0;
    std::set<std::string> in_chain;
    for (const ChainLink& l : d_.root_causes[0].chain) in_chain.insert(l.ev.device);
    const size_t shown = std::min(kids.size(), kMaxChildren);
    *s_ += "<g class=\"subtree\">\n";
    text(kLabelX, y + 16, "host-label", "PCIe subtree of the root (from the topology)");
    const double cx = kPlotX0 + (kPlotX1 - kPlotX0) / 2, bw = 150;
    node(top, cx - bw / 2, y + 26, bw, top == root, in_chain.count(top) > 0);
    const double gap = std::min(160.0, (kNoTimeX1 - kLabelX) / double(shown));
    const double x0 = cx - gap * double(shown) / 2;
    for (size_t i = 0; i < shown; ++i) {
      const double x = x0 + gap * double(i) + 4;
      *s_ += "<line class=\"subtree-edge\" x1=\"" + num(cx) + "\" y1=\"" + num(y + 50) +
             "\" x2=\"" + num(x + (gap - 8) / 2) + "\" y2=\"" + num(y + 78) + "\"/>\n";
      node(kids[i], x, y + 78, gap - 8, kids[i] == root, in_chain.count(kids[i]) > 0);
    }
    if (kids.size() > shown)
      text(kLabelX, y + 128, "note", std::to_string(kids.size() - shown) + " more below");
    *s_ += "</g>\n";
    return 136;
  }

  std::vector<std::string> children(const std::string& sw) const {
    std::vector<std::string> out;
    for (DeviceKind k :
         {DeviceKind::pcie_port, DeviceKind::gpu, DeviceKind::nic, DeviceKind::nvswitch})
      for (std::string& c : topo_->related_devices(Relation::below, sw, true, k, 64))
        if (c != sw) out.push_back(std::move(c));
    return out;
  }

  void node(const std::string& dev, double x, double y, double w, bool culprit, bool chain) {
    std::string cls = "subtree-node";
    if (culprit) cls += " culprit";
    if (chain && !culprit) cls += " in-chain";
    *s_ += "<g class=\"" + cls + "\"><title>" + xml_text(dev) + "</title><rect x=\"" + num(x) +
           "\" y=\"" + num(y) + "\" width=\"" + num(w) + "\" height=\"24\" rx=\"4\"/>";
    const size_t slash = dev.find('/');
    const std::string shown = slash == std::string::npos ? dev : dev.substr(slash + 1);
    *s_ += "</g>\n";
    text(x + w / 2, y + 16, "node-label", xml_text(shown, 24), "middle");
  }

  const Diagnosis& d_;
  const Topology* topo_;
  size_t idx_;
  double y0_;
  Panel p_;
  std::vector<double> lane_y_;
  std::string* s_ = nullptr;
  std::string id_;
};

const char* kStyle =
    "<style>\n"
    "text{font-family:sans-serif;font-size:12px;fill:#222}\n"
    ".title{font-size:16px;font-weight:bold}.subtitle{font-size:13px}\n"
    ".host-band{fill:#e8ecf2}.host-label{font-weight:bold}\n"
    ".lane-bg{fill:#fff}.lane.culprit .lane-bg{fill:#fde8e8}\n"
    ".lane.culprit .lane-label{fill:#b00020;font-weight:bold}\n"
    ".lane-line{stroke:#ccd;stroke-width:1}\n"
    ".tick{stroke:#eee;stroke-width:1}.tick-label,.axis-label{fill:#555;font-size:11px}\n"
    ".notime-band rect{fill:#f4f4f4;stroke:#bbb;stroke-dasharray:4 3}\n"
    ".mark circle,.mark rect{stroke:#fff;stroke-width:1.5}\n"
    ".mark.root circle{fill:#d00020;stroke:#600;stroke-width:2.5}\n"
    ".mark.chain circle{fill:#1f4e9c}.mark.device-evidence circle{fill:#e08000}\n"
    ".mark.unexplained circle{fill:#999}.mark.alternative rect{fill:#fff;stroke:#777}\n"
    ".mark.latent circle{fill:#fff;stroke:#d00020;stroke-dasharray:3 2}\n"
    ".mark-label{font-size:11px}.step-label{font-size:10px;fill:#1f4e9c}\n"
    ".chain-arrow{fill:none;stroke:#1f4e9c;stroke-width:2}\n"
    ".subtree-node rect{fill:#fff;stroke:#888}.subtree-edge{stroke:#888}\n"
    ".subtree-node.culprit rect{fill:#fde8e8;stroke:#d00020;stroke-width:3}\n"
    ".subtree-node.in-chain rect{stroke:#1f4e9c;stroke-width:2}\n"
    ".node-label{font-size:11px}.note{fill:#777;font-style:italic}\n"
    ".legend-box{fill:#fafafa;stroke:#ddd}\n"
    "</style>\n";

double legend(std::string* s, double y) {
  *s += "<g class=\"legend\" id=\"legend\"><rect class=\"legend-box\" x=\"6\" y=\"" + num(y) +
        "\" width=\"" + num(kWidth - 12) + "\" height=\"44\"/>\n";
  const double cy = y + 22;
  struct Item {
    const char* cls;
    const char* label;
  };
  const Item items[] = {{"mark root", "root cause"},
                        {"mark chain", "evidence chain"},
                        {"mark device-evidence", "other fault evidence on the root's device"},
                        {"mark unexplained", "unexplained symptom"},
                        {"mark alternative", "alternative root"}};
  double x = 20;
  for (const Item& it : items) {
    *s += std::string("<g class=\"") + it.cls + "\">";
    if (std::string(it.cls) == "mark alternative")
      *s += "<rect x=\"" + num(x - 5) + "\" y=\"" + num(cy - 5) + "\" width=\"10\" height=\"10\"/>";
    else
      *s += "<circle cx=\"" + num(x) + "\" cy=\"" + num(cy) + "\" r=\"6\"/>";
    *s += "</g><text x=\"" + num(x + 12) + "\" y=\"" + num(cy + 4) + "\">" + it.label + "</text>\n";
    x += 40 + 6.5 * static_cast<double>(std::string(it.label).size());
  }
  *s += "<path class=\"chain-arrow\" d=\"M" + num(x) + "," + num(cy) + " L" + num(x + 40) + "," +
        num(cy) + "\" marker-end=\"url(#arrow)\"/><text x=\"" + num(x + 48) + "\" y=\"" +
        num(cy + 4) + "\">rule step (name, time between)</text>\n";
  *s += "</g>\n";
  return 56;
}

}  // namespace

std::string diagnoses_to_svg(const std::vector<Diagnosis>& ds, const Topology* topo) {
  std::string body;
  double y = 8;
  if (ds.empty()) {
    body += "<text class=\"title\" x=\"12\" y=\"28\">No incident.</text>\n";
    y = 44;
  }
  for (size_t i = 0; i < ds.size(); ++i) {
    if (i) {
      body += "<line class=\"tick\" x1=\"0\" y1=\"" + num(y - 8) + "\" x2=\"" + num(kWidth) +
              "\" y2=\"" + num(y - 8) + "\"/>\n";
    }
    PanelWriter w(ds[i], topo, i, y);
    y += w.write(&body);
  }
  y += legend(&body, y);
  std::string s = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  s += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(kWidth) + "\" height=\"" +
       num(y) + "\" viewBox=\"0 0 " + num(kWidth) + " " + num(y) + "\">\n";
  s += "<title>Reflex diagnosis</title>\n";
  s += kStyle;
  s += "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" "
       "markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#1f4e9c\"/>"
       "</marker></defs>\n";
  s += "<rect x=\"0\" y=\"0\" width=\"" + num(kWidth) + "\" height=\"" + num(y) +
       "\" fill=\"#fff\"/>\n";
  return s + body + "</svg>\n";
}

}  // namespace reflex
