// The default transport: everything in one process, same semantics as the
// Redis one (append-only streams, leases with expiry, publish-once diagnoses).
#include <chrono>
#include <map>
#include <mutex>
#include <set>

#include "reflex/bus.h"

namespace reflex::bus {
namespace {

using Clock = std::chrono::steady_clock;

class EmbeddedBus final : public EventBus {
 public:
  explicit EmbeddedBus(Options o) : opts_(o) {}

  bool publish_events(const std::vector<std::pair<std::string, Record>>& batch,
                      std::string*) override {
    std::lock_guard<std::mutex> lk(mu_);
    for (const auto& [shard, rec] : batch) {
      Stream& s = streams_[shard];
      s.entries.push_back(
          {std::to_string(++s.next) + "-0", rec.id, rec.payload, rec.signer, rec.sig, false});
      s.added.push_back(now_ms());
      while (s.entries.size() > opts_.maxlen) {
        s.entries.erase(s.entries.begin());
        s.added.erase(s.added.begin());
      }
    }
    return true;
  }

  bool read_events(const std::string& shard, std::string* cursor, size_t max,
                   std::vector<Entry>* out, std::string*) override {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = streams_.find(shard);
    if (it == streams_.end()) return true;
    uint64_t after = std::stoull(cursor->empty() ? "0" : *cursor);
    for (const Entry& e : it->second.entries) {
      if (out->size() >= max) break;
      if (std::stoull(e.stream_id) <= after) continue;
      out->push_back(e);
      *cursor = e.stream_id;
    }
    return true;
  }

  bool list_shards(std::vector<std::string>* out, std::string*) override {
    std::lock_guard<std::mutex> lk(mu_);
    for (auto& [k, v] : streams_) out->push_back(k);
    return true;
  }

  bool lease(const std::string& shard, const std::string& owner, int ttl_ms, bool* held,
             std::string*) override {
    std::lock_guard<std::mutex> lk(mu_);
    auto now = Clock::now();
    auto& l = leases_[shard];
    if (l.owner.empty() || l.owner == owner || l.until < now) {
      l.owner = owner;
      l.until = now + std::chrono::milliseconds(ttl_ms);
      *held = true;
    } else {
      *held = false;
    }
    return true;
  }

  bool release(const std::string& shard, const std::string& owner, std::string*) override {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = leases_.find(shard);
    if (it != leases_.end() && it->second.owner == owner) leases_.erase(it);
    return true;
  }

  bool publish_diagnosis(const std::string& shard, const std::string& incident, int,
                         const std::string& answer, const std::string& json, bool* published,
                         std::string*) override {
    std::lock_guard<std::mutex> lk(mu_);
    *published = published_.insert(shard + "\n" + incident + "\n" + answer).second;
    if (*published) {
      auto& d = diagnoses_[shard];
      d.emplace_back(now_ms(), json);
      while (d.size() > opts_.diagnoses_maxlen) d.erase(d.begin());
    }
    return true;
  }

  bool members(const std::string& owner, int ttl_ms, std::vector<std::string>* live,
               std::string*) override {
    std::lock_guard<std::mutex> lk(mu_);
    auto now = Clock::now();
    if (ttl_ms > 0)
      members_[owner] = now + std::chrono::milliseconds(ttl_ms);
    else
      members_.erase(owner);
    live->clear();
    for (auto it = members_.begin(); it != members_.end();) {
      if (it->second <= now) {
        it = members_.erase(it);
        continue;
      }
      live->push_back(it->first);  // std::map: sorted
      ++it;
    }
    return true;
  }

  bool trim(const std::string& shard, int64_t max_age_ms, int64_t* removed, std::string*) override {
    std::lock_guard<std::mutex> lk(mu_);
    int64_t min_ms = now_ms() - max_age_ms;
    if (auto it = streams_.find(shard); it != streams_.end()) {
      Stream& s = it->second;
      size_t n = 0;
      while (n < s.added.size() && s.added[n] < min_ms) ++n;
      s.entries.erase(s.entries.begin(), s.entries.begin() + static_cast<ptrdiff_t>(n));
      s.added.erase(s.added.begin(), s.added.begin() + static_cast<ptrdiff_t>(n));
      *removed += static_cast<int64_t>(n);
    }
    if (auto it = diagnoses_.find(shard); it != diagnoses_.end()) {
      auto& d = it->second;
      size_t n = 0;
      while (n < d.size() && d[n].first < min_ms) ++n;
      d.erase(d.begin(), d.begin() + static_cast<ptrdiff_t>(n));
      *removed += static_cast<int64_t>(n);
    }
    return true;
  }

  std::string describe() const override { return "embedded"; }

 private:
  // Wall clock, as Redis stamps its stream ids.
  static int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

  struct Stream {
    uint64_t next = 0;
    std::vector<Entry> entries;
    std::vector<int64_t> added;  // when each entry was appended (ms)
  };
  struct Lease {
    std::string owner;
    Clock::time_point until;
  };
  Options opts_;
  std::mutex mu_;
  std::map<std::string, Stream> streams_;
  std::map<std::string, Lease> leases_;
  std::map<std::string, Clock::time_point> members_;
  std::set<std::string> published_;
  std::map<std::string, std::vector<std::pair<int64_t, std::string>>> diagnoses_;
};

}  // namespace

std::unique_ptr<EventBus> make_embedded_bus(Options opts) {
  return std::make_unique<EmbeddedBus>(opts);
}

}  // namespace reflex::bus
