#include "reflex/bus.h"

namespace reflex::bus {

std::string events_key(const std::string& shard) {
  return "reflex:{" + shard + "}:events";
}
std::string lease_key(const std::string& shard) {
  return "reflex:{" + shard + "}:lease";
}
std::string diagnoses_key(const std::string& shard) {
  return "reflex:{" + shard + "}:diagnoses";
}
std::string published_key(const std::string& shard) {
  return "reflex:{" + shard + "}:published";
}

std::string members_key() {
  return "reflex:diagnosers";
}

std::string redact_url(const std::string& url) {
  auto scheme = url.find("://");
  auto at = url.rfind('@');
  if (scheme == std::string::npos || at == std::string::npos || at < scheme) return url;
  // user:password@ keeps the user; password@ alone (redis-cli's form) goes whole.
  auto colon = url.find(':', scheme + 3);
  if (colon == std::string::npos || colon > at)
    return url.substr(0, scheme + 3) + "***" + url.substr(at);
  return url.substr(0, colon + 1) + "***" + url.substr(at);
}

}  // namespace reflex::bus
