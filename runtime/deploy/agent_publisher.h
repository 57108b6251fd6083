// Between the agent's sources and the bus: events and checkpoints queue in
// memory in the order they were read; a checkpoint becomes durable once the
// bus (or the on-disk spool beyond the memory buffer) took every event
// queued before it. The spool drains first, oldest first, when the bus is back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "agent_hosts.h"
#include "agent_positions.h"
#include "agent_types.h"
#include "reflex/bus.h"
#include "reflex/deploy/daemon.h"
#include "reflex/deploy/spool.h"

namespace reflex::deploy::agent {

struct Publisher {
  Publisher(bus::EventBus& b, Metrics& m, Positions& p) : bus(b), metrics(m), positions(p) {}

  bus::EventBus& bus;
  Metrics& metrics;
  Positions& positions;
  size_t buffer_max = 100000, batch = 500;
  std::deque<Pending> pending;
  size_t pending_events = 0;
  Backoff backoff{std::chrono::milliseconds(100), std::chrono::seconds(5)};
  uint64_t published = 0;
  // Beyond the memory buffer: the on-disk spool (null: reading pauses instead).
  std::unique_ptr<Spool> spool;
  bool spool_full = false;

  // With a key (--signing-key), every entry is signed as `signer`'s
  // (event_signing.h) when it is sent, from memory or from the spool.
  std::string signer;
  std::string signing_key;
  // With --signing-keys (a log server's agent): each entry is signed as the
  // host of its event (Record::signer, set when it was queued; decoded from
  // the payload for spooled ones) with that host's key; `signer`'s own key,
  // when given, for its own events. No key: the entry goes unsigned (said).
  HostKeys* host_keys = nullptr;
  void sign(std::vector<std::pair<std::string, bus::Record>>* out) const;

  bool full() const { return pending_events >= buffer_max; }
  void add_event(Pending&& p) {
    pending.push_back(std::move(p));
    ++pending_events;
  }
  void add_marker(Pending m) { pending.push_back(std::move(m)); }

  // The spool of --spool-dir (or beside the state file) bounded by
  // --spool-max, when there is one; false (after a message) when it cannot be used.
  bool open_spool(const std::string& spool_dir, const std::string& state_path,
                  const std::string& spool_max);
  // Publishes what is pending (the spool first), then spills to the spool
  // when memory is full.
  void send();
  // The gauges of what waits (after the state file is written: what they
  // show is durable); true when nothing waits.
  bool report();
  // Memory full (or, with all, at stop): every event in memory goes to the spool.
  void spill(bool all);
  void spool_metrics();
  // For /readyz: whether the bus took the last batch or answered the last
  // ping, and why not. Idle (nothing to send), the bus is pinged every few
  // seconds so a Redis that went away shows before the next event.
  bool bus_ok = false;
  std::string bus_why = "the bus has not been reached yet";
  void probe();

 private:
  std::chrono::steady_clock::time_point last_contact_{};
  void reached();
  void publish_failed(const std::string& err);
  bool drain_spool();
  bool spill_chunk(size_t keep, size_t max);
  void apply_front_markers();
};

}  // namespace reflex::deploy::agent
