// Shard leases renewed on a thread of their own (docs/deployment.md).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "reflex/bus.h"

namespace reflex::deploy {

// A diagnoser's main loop can be busy for longer than a lease lives: the
// revision of a 100k-GPU job's incident walks ~290,000 symptoms, seconds on
// a loaded machine, and a shard whose lease lapsed meanwhile was taken over
// and rebuilt from the stream — a million events re-read — while its owner
// was still answering it. The keeper renews every lease it holds every
// third of the TTL over its own connection, whatever the main loop is doing;
// the main loop only asks whether a lease is still held.
class LeaseKeeper {
 public:
  using Clock = std::chrono::steady_clock;
  LeaseKeeper(std::unique_ptr<bus::EventBus> bus, std::string owner, int ttl_ms);
  ~LeaseKeeper();  // stops the thread and waits for it
  LeaseKeeper(const LeaseKeeper&) = delete;
  LeaseKeeper& operator=(const LeaseKeeper&) = delete;

  void add(const std::string& shard);  // just acquired: renewed from now on
  // Stops renewing `shard`; when it returns no renewal of it is under way or
  // will follow (so a release that comes next is final).
  void remove(const std::string& shard);
  // Still ours: confirmed by Redis within the TTL and not found taken.
  bool held(const std::string& shard) const;
  // Failed renewal calls since the last call (for the bus error metric),
  // and the last one's error.
  uint64_t take_errors(std::string* last);

 private:
  void loop();
  void renew_all();

  std::unique_ptr<bus::EventBus> bus_;
  const std::string owner_;
  const int ttl_ms_;
  struct State {
    Clock::time_point confirmed;
    bool taken = false;
  };
  mutable std::mutex state_mu_;  // shards_, errors_, stop_
  std::mutex call_mu_;           // held during a renewal pass and by remove()
  std::condition_variable cv_;
  std::map<std::string, State> shards_;
  uint64_t errors_ = 0;
  std::string last_error_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace reflex::deploy
