#include <nlohmann/json.hpp>

#include "reflex/store.h"

namespace reflex {

using nlohmann::json;

std::string event_to_store_json(const Event& ev) {
  json j;
  j["name"] = ev.name;
  j["device"] = ev.device;
  j["kind"] = to_string(ev.kind);
  j["host"] = ev.host;
  j["ts"] = ev.time.wall ? json(*ev.time.wall) : json(nullptr);
  j["mono"] = ev.time.mono ? json(*ev.time.mono) : json(nullptr);
  j["clock"] = ev.time.clock;
  json f = json::array();
  for (auto& [k, v] : ev.fields) f.push_back(json::array({k, v}));
  j["fields"] = std::move(f);
  json b = json::array();
  for (auto& [k, v] : ev.bindings) b.push_back(json::array({k, v}));
  j["bindings"] = std::move(b);
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

std::optional<Event> event_from_store_json(std::string_view text, std::string* error) {
  json j = json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    if (error) *error = "not a JSON object";
    return std::nullopt;
  }
  try {
    Event ev;
    ev.name = j.value("name", "");
    ev.device = j.value("device", "");
    if (auto k = device_kind_from_string(j.value("kind", "host"))) ev.kind = *k;
    ev.host = j.value("host", "");
    if (j.contains("ts") && j["ts"].is_number_integer()) ev.time.wall = j["ts"].get<TimeUs>();
    if (j.contains("mono") && j["mono"].is_number()) ev.time.mono = j["mono"].get<double>();
    ev.time.clock = j.value("clock", "");
    if (j.contains("fields") && j["fields"].is_array())
      for (auto& p : j["fields"])
        if (p.is_array() && p.size() == 2 && p[0].is_string() && p[1].is_string())
          ev.fields.emplace_back(p[0].get<std::string>(), p[1].get<std::string>());
    if (j.contains("bindings") && j["bindings"].is_array())
      for (auto& p : j["bindings"])
        if (p.is_array() && p.size() == 2 && p[0].is_string() && p[1].is_string())
          ev.bindings.emplace_back(p[0].get<std::string>(), p[1].get<std::string>());
    ev.evidence = j.value("evidence", "");
    ev.line = j.value("line", "");
    if (auto t = transport_from_string(j.value("transport", "app"))) ev.transport = *t;
    ev.count = j.value("count", uint64_t{1});
    if (j.contains("first") && j["first"].is_number_integer()) ev.first = j["first"].get<TimeUs>();
    if (j.contains("last") && j["last"].is_number_integer()) ev.last = j["last"].get<TimeUs>();
    ev.placeholder_device = j.value("placeholder", false);
    ev.seq = j.value("seq", uint64_t{0});
    return ev;
  } catch (const std::exception& e) {
    if (error) *error = e.what();
    return std::nullopt;
  }
}

}  // namespace reflex
