// `reflex events` JSONL (spec §7) back into Events, so matching can run beside
// each host's log shipper and only events travel to the engine.
#include <nlohmann/json.hpp>

#include "reflex/engine.h"

namespace reflex {
namespace {

std::string scalar_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number_unsigned()) return std::to_string(v.get<uint64_t>());
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_null()) return "";
  return v.dump();
}

// {"k": v, ...} or [["k", v], ...] or [{"name": k, "value": v}, ...].
void read_pairs(const nlohmann::json& j, const char* key,
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

std::optional<TimeUs> read_time(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) return std::nullopt;
  if (it->is_string()) return parse_rfc3339(it->get<std::string>());
  if (it->is_number_integer()) return it->get<int64_t>();
  return std::nullopt;
}

}  // namespace

bool event_from_json(std::string_view json_line, const KnowledgeBase& kb, const Topology& topo,
                     Event* out, std::string* error) {
  auto fail = [&](const std::string& m) {
    if (error) *error = m;
    return false;
  };
  nlohmann::json j = nlohmann::json::parse(json_line.begin(), json_line.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return fail("not a JSON object");
  Event e;
  auto str = [&](const char* k) -> std::string {
    auto it = j.find(k);
    return it == j.end() ? std::string() : scalar_text(*it);
  };
  e.name = str("event");
  if (e.name.empty()) e.name = str("name");  // the store's column format
  if (e.name.empty()) return fail("missing \"event\"");
  e.device = str("device");
  if (e.device.empty()) return fail("missing \"device\"");
  e.host = str("host");
  e.evidence = str("evidence");
  e.line = str("line");
  const Signature* sig = kb.find_signature(e.name);
  if (auto k = j.find("kind"); k != j.end() && k->is_string()) {
    if (auto dk = device_kind_from_string(k->get<std::string>())) e.kind = *dk;
  } else if (sig) {
    e.kind = sig->kind;
  } else if (auto info = topo.device(e.device)) {
    e.kind = info->kind;
  }
  if (auto ts = j.find("ts"); ts != j.end() && ts->is_string()) {
    auto t = parse_rfc3339(ts->get<std::string>());
    if (!t) return fail("bad \"ts\": " + ts->get<std::string>());
    e.time.wall = *t;
  } else if (ts != j.end() && ts->is_number_integer()) {
    e.time.wall = ts->get<int64_t>();
  }
  if (auto m = j.find("mono"); m != j.end() && m->is_number()) e.time.mono = m->get<double>();
  std::string transport = str("transport");
  if (transport.empty()) transport = str("source");
  if (auto t = transport_from_string(transport)) {
    e.transport = *t;
  } else if (sig && sig->sources == kTransportKernel) {
    e.transport = kTransportKernel;
  } else {
    e.transport = kTransportApp;
  }
  e.time.clock = str("clock");
  if (e.time.clock.empty() && !e.host.empty())
    e.time.clock = e.host + (e.transport == kTransportKernel ? "/kernel" : "/app");
  read_pairs(j, "fields", &e.fields);
  read_pairs(j, "bindings", &e.bindings);
  if (auto c = j.find("count"); c != j.end() && c->is_number_unsigned())
    e.count = c->get<uint64_t>();
  else if (c != j.end() && c->is_number_integer() && c->get<int64_t>() > 0)
    e.count = static_cast<uint64_t>(c->get<int64_t>());
  e.first = read_time(j, "first");
  e.last = read_time(j, "last");
  if (auto p = j.find("placeholder"); p != j.end() && p->is_boolean())
    e.placeholder_device = p->get<bool>();
  if (auto s = j.find("seq"); s != j.end() && s->is_number_unsigned()) e.seq = s->get<uint64_t>();
  *out = std::move(e);
  return true;
}

}  // namespace reflex
