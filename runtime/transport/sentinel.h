// Finding the current primary through Redis Sentinel (redis_bus.cpp's
// redis+sentinel:// URLs): the client side of the Sentinel protocol that
// Redis documents for clients, asking each sentinel in turn.
#pragma once

#include <string>
#include <vector>

namespace reflex::bus::detail {

struct HostPort {
  std::string host;
  int port = 0;
};

// Asks the sentinels, in order, for the address of the primary they call
// `name` (SENTINEL get-master-addr-by-name), each connection bounded by
// timeout_ms. The first that answers moves to the front, so the next call
// asks it first. False + *err (every sentinel's reason) when none knows.
bool ask_sentinels(std::vector<HostPort>* sentinels, const std::string& name, int timeout_ms,
                   HostPort* primary, std::string* err);

}  // namespace reflex::bus::detail
