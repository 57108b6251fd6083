// Events to and from the wire, their ids and shards (deploy_codec.h).
#include "deploy_codec.h"

#include "reflex/artifact.h"
#include "reflex/event_json.h"

namespace reflex::deploy {

std::string encode_event(const Event& ev) {
  return event_to_record_json(ev);
}

std::optional<Event> decode_event(std::string_view payload, std::string* err) {
  return parse_event_json(payload, err);
}

std::string event_id(const Event& ev, std::string_view source) {
  std::string key;
  key.reserve(ev.line.size() + 128);
  for (std::string_view part :
       {source, std::string_view(ev.host), std::string_view(ev.evidence), std::string_view(ev.name),
        std::string_view(ev.device), std::string_view(ev.line)}) {
    key.append(part);
    key.push_back('\x1f');
  }
  if (ev.time.wall) key += std::to_string(*ev.time.wall);
  return sha256_hex(key).substr(0, 32);
}

namespace {
// Hash tags end at the first '}', so a shard name never carries one.
std::string clean(std::string s) {
  for (char& c : s)
    if (c == '{' || c == '}' || static_cast<unsigned char>(c) < 0x21) c = '_';
  return s.empty() ? "_" : s;
}
}  // namespace

std::string shard_of(const Event& ev, const Topology& topo) {
  const std::string job_prefix = "job/";
  if (ev.device.compare(0, job_prefix.size(), job_prefix) == 0) {
    std::string rest = ev.device.substr(job_prefix.size());
    return "job:" + clean(rest.substr(0, rest.find('/')));
  }
  if (!ev.host.empty()) {
    auto jobs = topo.jobs_of_host(ev.host);
    if (!jobs.empty()) return "job:" + clean(jobs.front());
    return "host:" + clean(ev.host);
  }
  return kClusterShard;
}

std::string host_of_device(const std::string& device, const Topology& topo) {
  if (auto d = topo.device(device); d && !d->host.empty()) return d->host;
  for (const char* p : {"job/", "fabric/", "storage/"})
    if (device.rfind(p, 0) == 0) return "";
  return device.substr(0, device.find('/'));
}

}  // namespace reflex::deploy
