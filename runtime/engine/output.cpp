// Renderings of a Diagnosis: JSON (interfaces.md §5), text for a person, Graphviz dot.
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "reflex/diagnosis.h"

namespace reflex {
namespace {

using json = nlohmann::ordered_json;

double round3(double v) {
  return std::round(v * 1000.0) / 1000.0;
}

std::string fmt_mono(double m) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.6f", m);
  return buf;
}

json ref_json(const EventRef& r) {
  json j;
  j["event"] = r.event;
  j["device"] = r.device;
  if (r.time.wall)
    j["ts"] = format_time_us(*r.time.wall);
  else
    j["ts"] = nullptr;
  if (r.time.mono && !r.time.wall) j["mono"] = *r.time.mono;
  if (r.latent) {
    j["latent"] = true;
    if (r.time.wall) j["ts_estimated"] = true;
    j["evidence"] = nullptr;
    j["line"] = nullptr;
  } else {
    j["evidence"] = r.evidence;
    j["line"] = r.line;
  }
  if (r.count > 1) j["count"] = r.count;
  return j;
}

json diag_json(const Diagnosis& d) {
  json j;
  j["incident"] = d.incident;
  j["revision"] = d.revision;
  if (d.trigger)
    j["trigger"] = ref_json(*d.trigger);
  else
    j["trigger"] = nullptr;
  if (!d.job.empty()) j["job"] = d.job;
  json roots = json::array();
  for (auto& r : d.root_causes) {
    json rj;
    rj["device"] = r.device;
    if (r.host.empty())
      rj["host"] = nullptr;
    else
      rj["host"] = r.host;
    rj["fault_class"] = r.fault_class;
    if (!r.subclass.empty()) rj["subclass"] = r.subclass;
    rj["event"] = r.event;
    rj["score"] = round3(r.score);
    rj["severity"] = to_string(r.severity);
    if (!r.nature.empty()) rj["nature"] = r.nature;
    if (!r.confidence.empty()) rj["confidence"] = r.confidence;
    if (!r.check.empty()) rj["check"] = r.check;
    rj["action"] = r.action;
    if (!r.remediation.empty()) rj["remediation"] = r.remediation;
    if (!r.component.empty()) rj["component"] = r.component;
    if (!r.description.empty()) rj["description"] = r.description;
    if (r.latent) rj["latent"] = true;
    if (!r.basis.empty()) rj["basis"] = r.basis;
    rj["explains"] = r.explains;
    json other = json::array();
    for (auto& e : r.device_evidence) other.push_back(ref_json(e));
    rj["device_evidence"] = std::move(other);
    json chain = json::array();
    for (auto& l : r.chain) {
      json lj = ref_json(l.ev);
      if (l.rule.empty()) {
        lj["rule"] = nullptr;
        lj["relation"] = nullptr;
      } else {
        lj["rule"] = l.rule;
        lj["rule_name"] = l.rule_name;
        lj["relation"] = l.relation;
        lj["strength"] = round3(l.strength);
        if (l.order_unknown) lj["order_unknown"] = true;
      }
      chain.push_back(std::move(lj));
    }
    rj["chain"] = std::move(chain);
    rj["why"] = r.why;
    roots.push_back(std::move(rj));
  }
  j["root_causes"] = std::move(roots);
  json un = json::array();
  for (auto& u : d.unexplained) un.push_back(ref_json(u));
  j["unexplained"] = std::move(un);
  j["notes"] = d.notes;
  j["eviction_set"] = d.eviction_set;
  if (!d.next_check.empty()) j["next_check"] = d.next_check;
  j["symptoms"] = d.symptoms;
  return j;
}

std::string dump(const json& j, int indent) {
  return j.dump(indent < 0 ? -1 : indent, ' ', false, json::error_handler_t::replace);
}

std::string time_text(const EventTime& t) {
  if (t.wall) return format_time_us(*t.wall);
  if (t.mono) return "[" + fmt_mono(*t.mono) + " since boot]";
  return "(no time)";
}

std::string one_line(const std::string& s, size_t max = 200) {
  std::string o;
  for (char c : s) {
    if (c == '\n') {
      o += " \\ ";
      continue;
    }
    o += (static_cast<unsigned char>(c) < 0x20) ? ' ' : c;
  }
  if (o.size() > max) o = o.substr(0, max) + "...";
  return o;
}

std::string dot_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (c == '\n') {
      o += "\\n";
      continue;
    }
    o += c;
  }
  return o;
}

std::string score_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

std::string text_header(const Diagnosis& d) {
  std::string s;
  s += "Incident " + d.incident + " (revision " + std::to_string(d.revision) + ")";
  if (!d.job.empty()) s += ", " + d.job;
  if (d.symptoms) s += ", " + std::to_string(d.symptoms) + " symptom event(s)";
  s += "\n";
  if (d.trigger) {
    s += "Trigger: " + d.trigger->event + " on " + d.trigger->device + " at " +
         time_text(d.trigger->time) + "\n";
    if (!d.trigger->evidence.empty())
      s += "  " + d.trigger->evidence + ": " + one_line(d.trigger->line) + "\n";
  } else {
    s += "Trigger: none (no job-level symptom; fault evidence diagnosed on its own)\n";
  }
  return s;
}

std::string text_chain(const RootCause& r) {
  std::string s = "  evidence chain (root first):\n";
  for (size_t k = 0; k < r.chain.size(); ++k) {
    const ChainLink& l = r.chain[k];
    if (k > 0) {
      char st[16];
      std::snprintf(st, sizeof st, "%.2f", l.strength);
      s += "      | " + l.rule + " (" + l.rule_name + "), " + l.relation + ", strength " + st +
           (l.order_unknown ? ", order unknown (different clocks)" : "") + "\n";
      s += "      v\n";
    }
    s += "    " + time_text(l.ev.time) + "  " + l.ev.event + " on " + l.ev.device;
    if (l.ev.count > 1) s += " (x" + std::to_string(l.ev.count) + ")";
    if (l.ev.latent) s += "  (hypothesised)";
    s += "\n";
    if (!l.ev.evidence.empty()) s += "        " + l.ev.evidence + ": " + one_line(l.ev.line) + "\n";
  }
  return s;
}

// The fault evidence on the root's device that `why` counts, shown rather than counted.
std::string text_device_evidence(const RootCause& r) {
  if (r.device_evidence.empty()) return "";
  std::string s = "  other fault evidence on " + r.device + ":\n";
  for (const EventRef& e : r.device_evidence) {
    s += "    " + time_text(e.time) + "  " + e.event;
    if (e.count > 1) s += " (x" + std::to_string(e.count) + ", first shown)";
    s += "\n";
    if (!e.evidence.empty()) s += "        " + e.evidence + ": " + one_line(e.line) + "\n";
  }
  return s;
}

std::string text_root(const RootCause& r) {
  std::string s;
  s += "\nRoot cause: " + r.device + "  [" + r.fault_class +
       (r.subclass.empty() ? "" : "/" + r.subclass) + "]  score " + score_text(r.score) +
       (r.confidence.empty() ? "" : ", confidence " + r.confidence) + "\n";
  if (!r.host.empty() && r.host != r.device) s += "  host:        " + r.host + "\n";
  s += "  event:       " + r.event +
       (r.basis == "named_by_peer" ? " (named by its peers; no log of its own in this input)"
        : r.latent                 ? " (hypothesised, no log line)"
                                   : "") +
       ", severity " + to_string(r.severity) + "\n";
  if (!r.description.empty()) s += "  description: " + r.description + "\n";
  if (!r.component.empty()) s += "  component:   " + r.component + "\n";
  s += "  action:      " + (r.action.empty() ? std::string("(none given)") : r.action) + "\n";
  if (!r.remediation.empty()) s += "  remediation: " + r.remediation + "\n";
  if (!r.check.empty()) s += "  check:       " + r.check + "\n";
  s += text_chain(r);
  s += text_device_evidence(r);
  s += "  why: " + r.why + "\n";
  return s;
}

// One incident without its notes (text_notes says them).
std::string text_body(const Diagnosis& d) {
  std::string s = text_header(d);
  if (d.root_causes.empty()) s += "\nNo root cause found.\n";
  for (size_t i = 0; i < d.root_causes.size(); ++i) {
    const RootCause& r = d.root_causes[i];
    if (i == 0) {
      s += text_root(r);
      continue;
    }
    if (i == 1) s += "\nAlternatives (ranked lower):\n";
    s += "  " + std::to_string(i + 1) + ". " + r.device + "  [" + r.fault_class + "] " + r.event +
         "  score " + score_text(r.score) + "\n";
    s += "     why lower: " + r.why + "\n";
  }
  if (!d.next_check.empty()) s += "\nNext check: " + d.next_check + "\n";
  if (!d.unexplained.empty()) {
    s += "\nUnexplained symptoms:\n";
    for (auto& u : d.unexplained)
      s += "  " + time_text(u.time) + "  " + u.event + " on " + u.device +
           (u.evidence.empty() ? "" : "  (" + u.evidence + ")") + "\n";
  }
  if (!d.eviction_set.empty()) {
    s += "\nEviction set:";
    for (auto& e : d.eviction_set) s += " " + e;
    s += "\n";
  } else if (!d.root_causes.empty()) {
    s += "\nEviction set: none (the root cause is not a hardware fault to drain; see its action)\n";
  }
  return s;
}

// The notes of all incidents, each once, in order of first appearance; a note
// that only some of several incidents carry names them.
std::vector<std::string> collect_notes(const std::vector<Diagnosis>& ds) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<size_t>> where;
  for (size_t i = 0; i < ds.size(); ++i)
    for (const std::string& n : ds[i].notes) {
      auto& w = where[n];
      if (w.empty()) order.push_back(n);
      if (w.empty() || w.back() != i) w.push_back(i);
    }
  std::vector<std::string> out;
  for (const std::string& n : order) {
    const auto& w = where[n];
    if (ds.size() == 1 || w.size() == ds.size()) {
      out.push_back(one_line(n, 400));
      continue;
    }
    std::string tag;
    for (size_t i : w) tag += (tag.empty() ? "" : ", ") + ds[i].incident;
    out.push_back(one_line(n, 400) + " (" + tag + ")");
  }
  return out;
}

constexpr size_t kTextNotes = 5;

std::string text_notes(const std::vector<std::string>& notes) {
  if (notes.empty()) return "";
  std::string s = "\nNotes:\n";
  for (size_t i = 0; i < notes.size() && i < kTextNotes; ++i) s += "  - " + notes[i] + "\n";
  if (notes.size() > kTextNotes)
    s += "  - " + std::to_string(notes.size() - kTextNotes) + " more (--format json lists all)\n";
  return s;
}

}  // namespace

std::string format_event_time(const EventTime& t) {
  return t.wall ? format_time_us(*t.wall) : std::string();
}

std::string diagnosis_to_json(const Diagnosis& d, int indent) {
  return dump(diag_json(d), indent);
}

std::string diagnoses_to_json(const std::vector<Diagnosis>& ds, int indent) {
  if (ds.empty()) {
    Diagnosis d;
    d.incident = "inc-none";
    d.notes.push_back("no input");
    return dump(diag_json(d), indent);
  }
  json j = diag_json(ds[0]);
  if (ds.size() > 1) {
    json all = json::array();
    for (size_t i = 0; i < ds.size(); ++i) {
      json one = diag_json(ds[i]);
      if (i == 0) one["principal"] = true;  // the entry this document shows
      all.push_back(std::move(one));
    }
    j["incidents"] = std::move(all);
    // The engine orders them: with a job symptom the principal
    // root explains the most symptoms and no other incident explains it;
    // without one it is the worst fault, and the others follow newest first.
    j["notes"].push_back(
        std::to_string(ds.size()) +
        " independent incidents; this document shows the principal one " +
        (ds[0].trigger ? "(its root explains the most job-level symptoms and no other incident "
                         "explains it), \"incidents\" lists them, the others by time"
                       : "(no job-level symptom: the worst fault by severity, then nature), "
                         "\"incidents\" lists them, the others newest first"));
  }
  return dump(j, indent);
}

std::string diagnosis_to_text(const Diagnosis& d) {
  return text_body(d) + text_notes(collect_notes({d}));
}

std::string diagnoses_to_text(const std::vector<Diagnosis>& ds) {
  if (ds.empty()) return "No incident.\n";
  std::string s;
  if (ds.size() > 1)
    s += std::to_string(ds.size()) + " independent incidents, the principal one first.\n\n";
  for (size_t i = 0; i < ds.size(); ++i) {
    if (i) s += "\n" + std::string(72, '-') + "\n\n";
    s += text_body(ds[i]);
  }
  // The run's notes (topology, input) are in every incident: said once, after all of them.
  if (ds.size() > 1) s += "\n" + std::string(72, '-') + "\n";
  return s + text_notes(collect_notes(ds));
}

std::string diagnoses_to_jsonl(const std::vector<Diagnosis>& ds) {
  if (ds.empty()) return diagnoses_to_json(ds, -1) + "\n";
  std::string s;
  for (size_t i = 0; i < ds.size(); ++i) {
    json one = diag_json(ds[i]);
    if (ds.size() > 1) one["principal"] = i == 0;
    s += dump(one, -1) + "\n";
  }
  return s;
}

std::string diagnoses_to_dot(const std::vector<Diagnosis>& ds) {
  std::string s = "digraph reflex {\n  rankdir=LR;\n  node [fontname=\"Helvetica\"];\n";
  int next = 0;
  std::map<std::string, std::string> dev_nodes;
  auto dev_node = [&](const std::string& dev, bool grey) {
    auto it = dev_nodes.find(dev);
    if (it != dev_nodes.end()) return it->second;
    std::string id = "d" + std::to_string(next++);
    s += "  " + id + " [shape=ellipse, label=\"" + dot_escape(dev) + "\"" +
         (grey ? ", color=grey, fontcolor=grey" : "") + "];\n";
    dev_nodes[dev] = id;
    return id;
  };
  for (size_t di = 0; di < ds.size(); ++di) {
    const Diagnosis& d = ds[di];
    s += "  subgraph cluster_" + std::to_string(di) + " {\n    label=\"" + dot_escape(d.incident) +
         "\";\n  }\n";
    for (size_t ri = 0; ri < d.root_causes.size(); ++ri) {
      const RootCause& r = d.root_causes[ri];
      bool grey = ri > 0;
      std::string attrs = grey ? ", color=grey, fontcolor=grey" : "";
      std::string prev;
      for (size_t k = 0; k < r.chain.size(); ++k) {
        const ChainLink& l = r.chain[k];
        std::string id = "e" + std::to_string(next++);
        std::string label =
            l.ev.event + "\\n" + dot_escape(l.ev.device) + "\\n" + dot_escape(time_text(l.ev.time));
        std::string shape = k == 0 ? (grey ? "box" : "box, style=bold, penwidth=2") : "box";
        if (l.ev.latent) shape += ", style=dashed";
        s += "  " + id + " [shape=" + shape + ", label=\"" + label + "\"" + attrs + "];\n";
        s += "  " + id + " -> " + dev_node(l.ev.device, grey) + " [style=dotted, arrowhead=none" +
             attrs + "];\n";
        if (!prev.empty())
          s += "  " + prev + " -> " + id + " [label=\"" + dot_escape(l.rule) + "\\n" +
               dot_escape(l.relation) + "\"" + attrs + "];\n";
        prev = id;
      }
    }
  }
  s += "}\n";
  return s;
}

}  // namespace reflex
