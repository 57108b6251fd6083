// The event codec (reflex/event_json.h).
#include "reflex/event_json.h"

#include <nlohmann/json.hpp>

#include "reflex/topology.h"

namespace reflex {

namespace {

using nlohmann::json;
using ojson = nlohmann::ordered_json;

std::string scalar_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number_unsigned()) return std::to_string(v.get<uint64_t>());
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_null()) return "";
  return v.dump();
}

// {"k": v, ...} (the line) or [["k", v], ...] (the record) or
// [{"name": k, "value": v}, ...].
void read_pairs(const json& j, const char* key,
                std::vector<std::pair<std::string, std::string>>* out) {
  auto it = j.find(key);
  if (it == j.end()) return;
  if (it->is_object()) {
    for (auto& [k, v] : it->items()) out->emplace_back(k, scalar_text(v));
  } else if (it->is_array()) {
    for (auto& p : *it) {
      if (p.is_array() && p.size() == 2 && p[0].is_string())
        out->emplace_back(p[0].get<std::string>(), scalar_text(p[1]));
      else if (p.is_object() && p.contains("name") && p["name"].is_string())
        out->emplace_back(p["name"].get<std::string>(),
                          p.contains("value") ? scalar_text(p["value"]) : std::string());
    }
  }
}

// RFC 3339 text (the line) or microseconds (the record); null is absent.
bool read_time(const json& j, const char* key, std::optional<TimeUs>* out, std::string* error) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return true;
  if (it->is_string()) {
    *out = parse_rfc3339(it->get<std::string>());
    if (!*out && error) *error = std::string("bad \"") + key + "\": " + it->get<std::string>();
    return out->has_value();
  }
  if (it->is_number_integer()) *out = it->get<int64_t>();
  return true;
}

json pairs_array(const std::vector<std::pair<std::string, std::string>>& v) {
  json a = json::array();
  for (auto& [k, x] : v) a.push_back(json::array({k, x}));
  return a;
}

}  // namespace

EventLineWriter::EventLineWriter(const KnowledgeBase* kb) {
  if (!kb) return;
  for (const Signature& s : kb->signatures) {
    if (s.fault_class.empty()) continue;
    Class c;
    c.standard = kb->standard_class(s.fault_class);
    if (c.standard.empty()) c.standard = s.fault_class;
    if (c.standard != s.fault_class) c.subclass = s.fault_class;
    classes_.emplace(s.name, std::move(c));
  }
}

std::string EventLineWriter::line(const Event& ev, const std::string* evidence) const {
  ojson j;
  j["event"] = ev.name;
  auto ci = classes_.find(ev.name);
  j["fault_class"] = ci == classes_.end() ? ojson(nullptr) : ojson(ci->second.standard);
  if (ci != classes_.end() && !ci->second.subclass.empty()) j["subclass"] = ci->second.subclass;
  j["device"] = ev.device;
  j["host"] = ev.host.empty() ? ojson(nullptr) : ojson(ev.host);
  j["ts"] = ev.time.wall ? ojson(format_time_us(*ev.time.wall)) : ojson(nullptr);
  if (!ev.time.wall && ev.time.mono) j["mono"] = *ev.time.mono;
  ojson fields = ojson::object();
  for (auto& [k, v] : ev.fields) fields[k] = v;
  j["fields"] = std::move(fields);
  j["evidence"] = evidence ? *evidence : ev.evidence;
  j["line"] = ev.line;
  j["transport"] = transport_name(ev.transport);
  if (!ev.time.clock.empty()) j["clock"] = ev.time.clock;  // which clock ts came from (skew)
  if (!ev.bindings.empty()) {
    ojson b = ojson::object();
    for (auto& [k, v] : ev.bindings) b[k] = v;
    j["bindings"] = std::move(b);
  }
  if (ev.count > 1) {
    j["count"] = ev.count;
    j["first"] = ev.first ? ojson(format_time_us(*ev.first)) : ojson(nullptr);
    j["last"] = ev.last ? ojson(format_time_us(*ev.last)) : ojson(nullptr);
  }
  if (ev.placeholder_device) j["placeholder"] = true;
  return j.dump(-1, ' ', false, ojson::error_handler_t::replace);
}

std::string event_to_record_json(const Event& ev) {
  json j;
  j["name"] = ev.name;
  j["device"] = ev.device;
  j["kind"] = to_string(ev.kind);
  j["host"] = ev.host;
  j["ts"] = ev.time.wall ? json(*ev.time.wall) : json(nullptr);
  j["mono"] = ev.time.mono ? json(*ev.time.mono) : json(nullptr);
  j["clock"] = ev.time.clock;
  j["fields"] = pairs_array(ev.fields);
  j["bindings"] = pairs_array(ev.bindings);
  j["evidence"] = ev.evidence;
  j["line"] = ev.line;
  j["transport"] = transport_name(ev.transport);
  j["count"] = ev.count;
  j["first"] = ev.first ? json(*ev.first) : json(nullptr);
  j["last"] = ev.last ? json(*ev.last) : json(nullptr);
  j["placeholder"] = ev.placeholder_device;
  j["seq"] = ev.seq;
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<Event> parse_event_json(std::string_view text, std::string* error,
                                      const KnowledgeBase* kb, const Topology* topo) {
  auto fail = [&](const std::string& m) -> std::optional<Event> {
    if (error) *error = m;
    return std::nullopt;
  };
  json j = json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return fail("not a JSON object");
  Event e;
  auto str = [&](const char* k) -> std::string {
    auto it = j.find(k);
    return it == j.end() ? std::string() : scalar_text(*it);
  };
  // The identity of an event is text: a number or an array there is a
  // mistyped (foreign or damaged) line, not an event to guess at.
  for (const char* k : {"event", "name", "device", "host", "evidence", "line"}) {
    auto it = j.find(k);
    if (it != j.end() && !it->is_string() && !it->is_null())
      return fail(std::string("\"") + k + "\" is not a string");
  }
  e.name = str("event");
  if (e.name.empty()) e.name = str("name");  // the record
  if (e.name.empty()) return fail("missing \"event\"");
  e.device = str("device");
  if (e.device.empty()) return fail("missing \"device\"");
  e.host = str("host");
  e.evidence = str("evidence");
  e.line = str("line");
  const Signature* sig = kb ? kb->find_signature(e.name) : nullptr;
  if (auto k = j.find("kind"); k != j.end() && k->is_string()) {
    if (auto dk = device_kind_from_string(k->get<std::string>())) e.kind = *dk;
  } else if (sig) {
    e.kind = sig->kind;
  } else if (auto info = topo ? topo->device(e.device) : std::nullopt) {
    e.kind = info->kind;
  }
  std::string err;
  if (!read_time(j, "ts", &e.time.wall, &err)) return fail(err);
  if (auto m = j.find("mono"); m != j.end() && m->is_number()) e.time.mono = m->get<double>();
  std::string transport = str("transport");
  if (transport.empty()) transport = str("source");
  if (auto t = transport_from_string(transport)) {
    e.transport = *t;
  } else if (sig && sig->sources == kTransportKernel) {
    e.transport = kTransportKernel;
  }
  e.time.clock = str("clock");
  if (kb && e.time.clock.empty() && !e.host.empty())
    e.time.clock = e.host + (e.transport == kTransportKernel ? "/kernel" : "/app");
  read_pairs(j, "fields", &e.fields);
  read_pairs(j, "bindings", &e.bindings);
  if (auto c = j.find("count"); c != j.end() && c->is_number_unsigned())
    e.count = c->get<uint64_t>();
  else if (c != j.end() && c->is_number_integer() && c->get<int64_t>() > 0)
    e.count = static_cast<uint64_t>(c->get<int64_t>());
  // first/last are informational: a bad one is dropped, not the event.
  read_time(j, "first", &e.first, nullptr);
  read_time(j, "last", &e.last, nullptr);
  if (auto p = j.find("placeholder"); p != j.end() && p->is_boolean())
    e.placeholder_device = p->get<bool>();
  if (auto s = j.find("seq"); s != j.end() && s->is_number_unsigned()) e.seq = s->get<uint64_t>();
  return e;
}

}  // namespace reflex
