// Root causes -> Prometheus Alertmanager (POST /api/v2/alerts, cpp-httplib).
// Each root cause of an incident's latest answer is one alert; it is re-sent
// while active (endsAt a few resend intervals ahead, as Alertmanager expects
// of a live source) and resolved (endsAt = now) when a later answer no longer
// names it or the incident has been quiet for the alert TTL.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "reflex/deploy/daemon.h"
#include "reflex/diagnosis.h"
#include "reflex/topology.h"

namespace reflex::deploy {

class AlertSink {
 public:
  // url: http://host:port of Alertmanager ("" = alerts off).
  AlertSink(std::string url, std::string cluster, double resend_s, double ttl_s, Metrics* m);
  ~AlertSink();
  bool enabled() const { return !url_.empty(); }
  // The latest answer for d.incident from shard `shard`.
  void update(const std::string& shard, const Diagnosis& d, const Topology& topo);
  // Sends what is due (re-sends, resolutions). Call often.
  void tick();
  // This diagnoser no longer owns the shard: stop re-sending its alerts (the
  // new owner re-derives them).
  void forget_shard(const std::string& shard);

 private:
  struct Alert {
    std::string shard, incident;
    std::map<std::string, std::string> labels, annotations;
    std::string starts_at;
    std::chrono::steady_clock::time_point last_sent{}, last_update{};
    bool resolved = false;
  };
  bool post(const std::vector<const Alert*>& alerts);
  std::string url_, cluster_;
  double resend_s_, ttl_s_;
  Metrics* m_;
  std::map<std::string, Alert> alerts_;  // fingerprint -> alert
  Backoff backoff_{std::chrono::milliseconds(200), std::chrono::seconds(10)};
};

}  // namespace reflex::deploy
