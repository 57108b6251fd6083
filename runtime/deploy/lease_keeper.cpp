// The lease keeper's thread (lease_keeper.h).
#include "lease_keeper.h"

#include <vector>

namespace reflex::deploy {

LeaseKeeper::LeaseKeeper(std::unique_ptr<bus::EventBus> bus, std::string owner, int ttl_ms)
    : bus_(std::move(bus)), owner_(std::move(owner)), ttl_ms_(ttl_ms) {
  thread_ = std::thread([this] { loop(); });
}

LeaseKeeper::~LeaseKeeper() {
  {
    std::lock_guard<std::mutex> lk(state_mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void LeaseKeeper::add(const std::string& shard) {
  std::lock_guard<std::mutex> lk(state_mu_);
  shards_[shard] = State{Clock::now(), false};
}

void LeaseKeeper::remove(const std::string& shard) {
  std::lock_guard<std::mutex> calls(call_mu_);
  std::lock_guard<std::mutex> lk(state_mu_);
  shards_.erase(shard);
}

bool LeaseKeeper::held(const std::string& shard) const {
  std::lock_guard<std::mutex> lk(state_mu_);
  auto it = shards_.find(shard);
  return it != shards_.end() && !it->second.taken &&
         Clock::now() - it->second.confirmed <= std::chrono::milliseconds(ttl_ms_);
}

uint64_t LeaseKeeper::take_errors(std::string* last) {
  std::lock_guard<std::mutex> lk(state_mu_);
  uint64_t n = errors_;
  errors_ = 0;
  *last = std::move(last_error_);
  last_error_.clear();
  return n;
}

void LeaseKeeper::renew_all() {
  std::lock_guard<std::mutex> calls(call_mu_);
  std::vector<std::string> names;
  {
    std::lock_guard<std::mutex> lk(state_mu_);
    for (auto& [name, st] : shards_)
      if (!st.taken) names.push_back(name);
  }
  for (const std::string& name : names) {
    {
      std::lock_guard<std::mutex> lk(state_mu_);
      if (stop_) return;
      if (!shards_.count(name)) continue;  // defensive: remove() waits for this pass
    }
    auto asked = Clock::now();
    bool ours = false;
    std::string err;
    bool ok = bus_->lease(name, owner_, ttl_ms_, &ours, &err);
    std::lock_guard<std::mutex> lk(state_mu_);
    auto it = shards_.find(name);
    if (it == shards_.end()) continue;
    if (!ok) {
      ++errors_;
      last_error_ = err;
    } else if (ours)
      it->second.confirmed = asked;  // the TTL runs from when it was asked
    else
      it->second.taken = true;
  }
}

void LeaseKeeper::loop() {
  const auto every = std::chrono::milliseconds(std::max(1, ttl_ms_ / 3));
  std::unique_lock<std::mutex> lk(state_mu_);
  while (!stop_) {
    cv_.wait_for(lk, every, [this] { return stop_; });
    if (stop_) break;
    lk.unlock();
    renew_all();
    lk.lock();
  }
}

}  // namespace reflex::deploy
