// A recognized event: one signature matched on one device at one time.
// Produced by ingest (or read back from `reflex events` JSONL), consumed by the
// diagnosis engine and the store.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "reflex/kb.h"
#include "reflex/time.h"  // TimeUs, format_time_us, parse_rfc3339

namespace reflex {

struct EventTime {
  std::optional<TimeUs> wall;  // absent for raw dmesg without boot_time
  std::optional<double> mono;  // seconds since boot, when the line carried it
  // Which clock the time came from: "<host>/kernel" or "<host>/app" (interfaces.md §3:
  // skew tolerance applies between clocks, order is exact within one).
  std::string clock;
  // The line had no time of its own and took the last earlier line's: the
  // event happened at or after `wall`, not necessarily at it (interfaces.md §4).
  bool inherited = false;
};

struct Event {
  std::string name;    // signature (or latent) name
  std::string device;  // interfaces.md §2 id, e.g. "node-0017/gpu3"; placeholder ids allowed
  DeviceKind kind = DeviceKind::host;
  std::string host;  // "" for cluster-level devices
  EventTime time;
  std::vector<std::pair<std::string, std::string>> fields;    // normalised values
  std::vector<std::pair<std::string, std::string>> bindings;  // extra devices: name -> device id
  std::string evidence;                                       // "hosts/node-0017/kern.log:812"
  std::string line;  // raw line (multi-line messages joined with "\n")
  Transport transport = kTransportApp;
  uint64_t count = 1;  // storms: how many lines folded into this event
  std::optional<TimeUs> first, last;
  bool placeholder_device = false;  // device not in topology; see notes
  uint64_t seq = 0;                 // ingest order, for stable sorting

  const std::string* field(const std::string& k) const {
    for (auto& [n, v] : fields)
      if (n == k) return &v;
    return nullptr;
  }
  const std::string* binding(const std::string& k) const {
    for (auto& [n, v] : bindings)
      if (n == k) return &v;
    return nullptr;
  }
};

// The storm summaries a producer (Ingestor, Engine) still holds open: dedup
// folds not emitted yet, each with its running count (first/last as they
// stand). Seen under the producer's lock, so nothing is emitted meanwhile: a
// store can commit what the sink gave it together with this snapshot and
// count every line exactly once (include/reflex/store.h, group commit).
class OpenStorms {
 public:
  // Changes whenever a fold opens, grows or closes; equal values, same set.
  virtual uint64_t generation() const = 0;
  // Every open fold, in ingest order of its first line.
  virtual void for_each(const std::function<void(const Event&)>& fn) const = 0;

 protected:
  ~OpenStorms() = default;
};

}  // namespace reflex
