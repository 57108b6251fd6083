// Root causes to Alertmanager alerts, sent and resolved (alerts.h).
#include "alerts.h"

#include <nlohmann/json.hpp>

#include "deploy_codec.h"
#include "reflex/kb.h"
#include "reflex/modules/http_api.h"
#include "reflex/values.h"

namespace reflex::deploy {

namespace {
using Clock = std::chrono::steady_clock;

std::string rfc3339_now(double offset_s = 0) {
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count() +
            static_cast<int64_t>(offset_s * 1e6);
  return format_time_us(us);
}
}  // namespace

AlertSink::AlertSink(std::string url, std::string cluster, double resend_s, double ttl_s,
                     Metrics* m)
    : url_(std::move(url)),
      cluster_(std::move(cluster)),
      resend_s_(resend_s),
      ttl_s_(ttl_s),
      m_(m) {}
AlertSink::~AlertSink() = default;

void AlertSink::update(const std::string& shard, const Diagnosis& d, const Topology& topo) {
  if (!enabled()) return;
  auto now = Clock::now();
  std::map<std::string, bool> current;
  for (const RootCause& rc : d.root_causes) {
    std::string job = d.job.rfind("job/", 0) == 0 ? d.job.substr(4) : d.job;
    std::map<std::string, std::string> labels = {{"alertname", "ReflexRootCause"},
                                                 {"cluster", cluster_},
                                                 {"host", host_of_device(rc.device, topo)},
                                                 {"device", rc.device},
                                                 {"fault_class", rc.fault_class},
                                                 {"remediation", rc.remediation},
                                                 {"job", job},
                                                 {"severity", to_string(rc.severity)},
                                                 // No job-level symptom (null trigger): a
                                                 // node or device condition, not a job's.
                                                 {"kind", d.trigger ? "job" : "node"}};
    std::string fp = d.incident;
    for (auto& [k, v] : labels) fp += "\x1f" + k + "=" + v;
    current[fp] = true;
    Alert& a = alerts_[fp];
    if (a.starts_at.empty() || a.resolved) {
      a.starts_at = rfc3339_now();
      a.last_sent = {};
    }
    a.shard = shard;
    a.incident = d.incident;
    a.resolved = false;
    a.labels = labels;
    std::string chain, rule;
    for (const ChainLink& l : rc.chain) {
      if (!chain.empty()) chain += " -> ";
      chain += l.ev.event + " on " + l.ev.device;
      if (!l.ev.evidence.empty()) chain += " (" + l.ev.evidence + ")";
      if (rule.empty() && !l.rule.empty()) rule = l.rule;
    }
    a.annotations = {
        {"summary", rc.description.empty() ? rc.fault_class + " on " + rc.device : rc.description},
        {"evidence", chain},
        {"action", rc.action},
        {"rule", rule},
        {"incident", d.incident},
        {"confidence", rc.confidence}};
    if (a.last_update != Clock::time_point{} && a.last_sent != Clock::time_point{}) {
      // unchanged alerts keep their resend schedule
    }
    a.last_update = now;
  }
  // Roots the new answer no longer names are resolved.
  for (auto& [fp, a] : alerts_)
    if (a.incident == d.incident && !current.count(fp) && !a.resolved) {
      a.resolved = true;
      a.last_sent = {};
    }
  tick();
}

void AlertSink::forget_shard(const std::string& shard) {
  for (auto it = alerts_.begin(); it != alerts_.end();)
    it = it->second.shard == shard ? alerts_.erase(it) : std::next(it);
}

void AlertSink::tick() {
  if (!enabled() || !backoff_.ready()) return;
  auto now = Clock::now();
  std::vector<const Alert*> due;
  std::vector<std::string> done;
  for (auto& [fp, a] : alerts_) {
    if (!a.resolved && std::chrono::duration<double>(now - a.last_update).count() > ttl_s_) {
      a.resolved = true;  // the incident went quiet: cleared
      a.last_sent = {};
    }
    bool never = a.last_sent == Clock::time_point{};
    if (never || std::chrono::duration<double>(now - a.last_sent).count() >= resend_s_)
      due.push_back(&a);
  }
  if (due.empty()) return;
  if (!post(due)) {
    backoff_.failed();
    return;
  }
  backoff_.succeeded();
  for (auto& [fp, a] : alerts_) {
    for (const Alert* d : due)
      if (d == &a) {
        a.last_sent = now;
        if (a.resolved) done.push_back(fp);
      }
  }
  for (const auto& fp : done) alerts_.erase(fp);
}

bool AlertSink::post(const std::vector<const Alert*>& alerts) {
  nlohmann::json body = nlohmann::json::array();
  for (const Alert* a : alerts) {
    nlohmann::json j;
    j["labels"] = a->labels;
    j["annotations"] = a->annotations;
    j["startsAt"] = a->starts_at;
    // Active: ends a few resends ahead unless renewed; resolved: ends now.
    j["endsAt"] = a->resolved ? rfc3339_now() : rfc3339_now(3 * resend_s_ + 60);
    body.push_back(std::move(j));
  }
  std::string why;
  const HttpApi* http = http_api(&why);
  HttpReply res;
  if (http)
    res = http->post(url_, "/api/v2/alerts",
                     body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                     "application/json", /*connect_timeout_s=*/2, /*io_timeout_s=*/5);
  else
    res.error = why;
  if (!res.reached || res.status / 100 != 2) {
    m_->add("reflex_watch_alert_failures_total");
    log_limited(Level::warn, "alertmanager",
                "Alertmanager " + url_ + ": " +
                    (res.reached ? "HTTP " + std::to_string(res.status) + " " + res.body
                                 : "unreachable (" + res.error + ")"));
    return false;
  }
  for (const Alert* a : alerts)
    m_->add("reflex_watch_alerts_sent_total", 1,
            Metrics::label("state", a->resolved ? "resolved" : "firing"));
  return true;
}

}  // namespace reflex::deploy
