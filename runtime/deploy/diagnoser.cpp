// Diagnoser over Redis Streams. Every shard (one event stream) is owned by one
// diagnoser at a time through a lease (SET NX PX, renewed at a third of its
// TTL, taken over when it lapses). Diagnosers announce themselves in a
// membership set; each takes at most ceil(shards / live diagnosers) and gives
// shards up, one a second, when over that share. An owner's state is derived: it rebuilds
// the shard's window by reading the stream from its start, drops events whose
// id it has seen (redeliveries), and publishes each answer once per incident
// (an answer already published by the previous owner is recognized and not
// repeated) to the diagnoses stream, stdout (JSONL) and Alertmanager.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "alerts.h"
#include "deploy_codec.h"
#include "event_signing.h"
#include "lease_keeper.h"
#include "reflex/artifact.h"
#include "reflex/bus.h"
#include "reflex/deploy/daemon.h"
#include "reflex/deploy/diagnoser.h"
#include "reflex/deploy/seen_ids.h"
#include "reflex/engine.h"
#include "reflex/topology.h"

namespace reflex::deploy {

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kMaxPayload = 1 << 20;  // larger stream entries are skipped (counted)
constexpr size_t kSeenIds = 2000000;     // redelivery memory per shard

struct Shard {
  std::string name;
  std::unique_ptr<Engine> eng;
  std::string cursor = "0";
  std::string cluster_cursor = "0";  // the cluster shard, read by every shard (below)
  SeenIds seen{kSeenIds};
  std::optional<Clock::time_point> last_trim;      // retention (--retention)
  std::optional<Clock::time_point> waiting_since;  // oldest event not yet answered
  std::vector<Diagnosis> out;                      // from the engine's callback
  uint64_t dropped_seen = 0;                       // the engine's retention drops, counted
};

std::string answer_digest(const Diagnosis& d) {
  std::string key;
  for (const RootCause& rc : d.root_causes)
    key += rc.device + "\x1f" + rc.fault_class + "\x1f" + rc.event + "\x1e";
  return sha256_hex(key).substr(0, 16);
}

void declare_watch_metrics(Metrics& metrics) {
  metrics.counter("reflex_watch_events_total", "Events fed to the engines.");
  metrics.counter("reflex_watch_duplicate_events_total",
                  "Stream entries dropped as redeliveries (an id seen before).");
  metrics.counter("reflex_watch_skipped_entries_total", "Stream entries skipped, by reason.");
  metrics.counter("reflex_watch_refused_entries_total",
                  "Stream entries refused by --verify-key: unsigned, a bad signature, or an event "
                  "that is not the signer's own (other_host, other_shard, other_device).");
  metrics.counter("reflex_watch_diagnoses_total", "Diagnoses published.");
  metrics.counter("reflex_watch_diagnoses_already_published_total",
                  "Diagnoses whose answer had been published already (e.g. before a takeover).");
  metrics.counter("reflex_watch_takeovers_total", "Shard leases acquired.");
  metrics.counter("reflex_watch_leases_lost_total", "Shard leases lost.");
  metrics.counter("reflex_watch_shards_released_total",
                  "Shards given up to balance them with a diagnoser that joined.");
  metrics.gauge("reflex_watch_live_diagnosers", "Diagnosers alive (membership in Redis).");
  metrics.counter("reflex_watch_bus_errors_total", "Failed calls to Redis.");
  metrics.counter("reflex_watch_trimmed_entries_total",
                  "Stream entries dropped by time-based retention (--retention).");
  metrics.counter("reflex_watch_trim_failures_total", "Failed retention trims.");
  metrics.counter("reflex_watch_alerts_sent_total", "Alerts posted to Alertmanager, by state.");
  metrics.counter("reflex_watch_alert_failures_total", "Failed posts to Alertmanager.");
  metrics.gauge("reflex_watch_shards_owned", "Shards this diagnoser owns now.");
  metrics.gauge("reflex_watch_open_incidents", "Open incidents over the owned shards.");
  metrics.gauge("reflex_watch_events_held",
                "Events the owned shards' engines hold (--max-events).");
  metrics.counter("reflex_watch_events_dropped_total",
                  "Events the engines' retention dropped (beyond --max-events, no open incident "
                  "needed them).");
  metrics.histogram("reflex_watch_diagnosis_latency_seconds",
                    "From the oldest event a diagnosis answers (as this diagnoser read it) to "
                    "its publication.",
                    {0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300});
}

// The shards this diagnoser holds leases on, each with its own engine.
class RedisDiagnoser {
 public:
  struct Config {
    std::shared_ptr<const KnowledgeBase> kb;
    std::shared_ptr<const Topology> topo;
    EngineOptions opts;
    std::string owner;
    int ttl_ms = 0;
    size_t read_batch = 0;
    int64_t retention_ms = 0;  // 0: no time-based retention
    // With the master key (--verify-key): only entries signed by the host
    // they speak for are taken (event_signing.h).
    std::optional<Key> verify_master;
  };

  RedisDiagnoser(Config cfg, bus::EventBus& bus, LeaseKeeper& keeper, Metrics& metrics,
                 AlertSink& alerts, Health& health)
      : cfg_(std::move(cfg)),
        verifier_(cfg_.verify_master ? std::optional<EntryVerifier>(*cfg_.verify_master)
                                     : std::nullopt),
        bus_(bus),
        keeper_(keeper),
        metrics_(metrics),
        alerts_(alerts),
        health_(health),
        renew_every_(cfg_.ttl_ms / 3) {}

  // Until a stop signal; then every open incident is answered and the leases go.
  void run() {
    while (!g_daemon_stop) {
      health_.beat();
      auto now = Clock::now();
      bool busy = false;
      if (backoff_.ready()) {
        uint64_t errors_before = bus_errors_;
        scanned_ = false;
        // Retry diagnoses Redis did not take.
        while (!unpublished_.empty() &&
               publish(unpublished_.front().first, unpublished_.front().second))
          unpublished_.pop_front();
        renew_membership(now);
        if (now - last_scan_ > std::chrono::seconds(1)) {
          last_scan_ = now;
          scan_shards();
        }
        renew_leases();
        trim_shards(now);
        busy = read_shards();
        if (bus_errors_ == errors_before && scanned_) report_ready();
      }
      if (Clock::now() - last_tick_ > std::chrono::milliseconds(200)) {
        last_tick_ = Clock::now();
        tick_engines();
      }
      metrics_.set("reflex_watch_shards_owned", static_cast<double>(shards_.size()));
      if (!busy) sleep_unless_stopped(std::chrono::milliseconds(50));
    }
    stop();
  }

 private:
  // Ready: a round with a scan of the shards (each second) reached Redis in
  // every call; the diagnoser then holds leases or waits for some. Rounds
  // between scans keep the last verdict.
  void report_ready() {
    health_.set_ready(true, shards_.empty()
                                ? "waiting for leases (" + std::to_string(known_shards_) +
                                      " shard(s) known, none free within this diagnoser's share)"
                                : "holding " + std::to_string(shards_.size()) + " of " +
                                      std::to_string(known_shards_) + " shard(s)");
  }

  void bus_error(const std::string& what, const std::string& e) {
    ++bus_errors_;
    health_.set_ready(false, what + ": " + e);
    metrics_.add("reflex_watch_bus_errors_total");
    backoff_.failed();
    log_limited(Level::warn, "bus:" + what, what + ": " + e);
  }

  // Once per incident answer: to the diagnoses stream, and when this call
  // published it (not a previous owner), to stdout. False when Redis failed.
  bool publish(const std::string& shard, const Diagnosis& d) {
    std::string json = diagnosis_to_json(d, -1);
    bool published = false;
    std::string e;
    if (!bus_.publish_diagnosis(shard, d.incident, d.revision, answer_digest(d), json, &published,
                                &e)) {
      bus_error("publish diagnosis", e);
      return false;
    }
    if (published) {
      json += '\n';
      std::fwrite(json.data(), 1, json.size(), stdout);
      std::fflush(stdout);
      metrics_.add("reflex_watch_diagnoses_total");
      log(Level::info, "shard " + shard + ": incident " + d.incident + " revision " +
                           std::to_string(d.revision) + " published");
    } else {
      metrics_.add("reflex_watch_diagnoses_already_published_total");
      log(Level::debug,
          "shard " + shard + ": incident " + d.incident + " answer already published");
    }
    return true;
  }

  void take(const std::string& name) {
    Shard s;
    s.name = name;
    s.eng = std::make_unique<Engine>(cfg_.kb, cfg_.topo, cfg_.opts);
    keeper_.add(name);
    auto [it, ok] = shards_.emplace(name, std::move(s));
    Shard* sp = &it->second;
    sp->eng->set_callback([sp](const Diagnosis& d) { sp->out.push_back(d); });
    metrics_.add("reflex_watch_takeovers_total");
    log(Level::info, "took shard " + name + ": rebuilding its window from the stream");
  }

  void drain_out(Shard& s) {
    for (Diagnosis& d : s.out) {
      if (s.waiting_since) {
        metrics_.observe("reflex_watch_diagnosis_latency_seconds",
                         std::chrono::duration<double>(Clock::now() - *s.waiting_since).count());
        s.waiting_since.reset();
      }
      alerts_.update(s.name, d, *cfg_.topo);
      if (!publish(s.name, d)) unpublished_.emplace_back(s.name, std::move(d));
    }
    s.out.clear();
  }

  // Announces this diagnoser alive (same TTL as its leases, renewed with
  // them) and learns how many are. Without an answer (e.g. an ACL file
  // without the membership key) it counts itself alone: every free shard is
  // then taken, as before balancing.
  void renew_membership(Clock::time_point now) {
    if (last_members_ && now - *last_members_ < renew_every_) return;
    last_members_ = now;
    std::vector<std::string> live;
    std::string e;
    if (!bus_.members(cfg_.owner, cfg_.ttl_ms, &live, &e)) {
      metrics_.add("reflex_watch_bus_errors_total");
      log_limited(Level::warn, "members",
                  "diagnoser membership: " + e + " (shards are not balanced meanwhile)");
      live.clear();
    }
    live_ = std::max<size_t>(1, live.size());
    metrics_.set("reflex_watch_live_diagnosers", static_cast<double>(live_));
  }

  // This diagnoser's share: ceil(shards / live diagnosers).
  size_t share() const { return (known_shards_ + live_ - 1) / live_; }

  // Leases on the shards nobody holds, up to this diagnoser's share.
  void scan_shards() {
    std::vector<std::string> names;
    std::string e;
    if (!bus_.list_shards(&names, &e)) {
      bus_error("list shards", e);
      return;
    }
    known_shards_ = names.size();
    scanned_ = true;
    for (const std::string& n : names) {
      if (shards_.size() >= share()) break;
      if (shards_.count(n)) continue;
      bool held = false;
      if (!bus_.lease(n, cfg_.owner, cfg_.ttl_ms, &held, &e)) {
        bus_error("lease", e);
        break;
      }
      if (held) take(n);
    }
    rebalance();
  }

  // More than its share (a diagnoser joined): gives one shard up per scan,
  // the one with the fewest open incidents and, among those, the fewest
  // events held — the cheapest to rebuild: a 100k-GPU job's shard is a
  // million events to re-read, a host's a handful — releasing its lease so
  // another takes it at once and rebuilds it from the stream (answers
  // already published are recognized, not repeated).
  void rebalance() {
    if (shards_.size() <= share()) return;
    auto victim = shards_.end();
    std::pair<uint64_t, uint64_t> fewest{UINT64_MAX, UINT64_MAX};
    for (auto it = shards_.begin(); it != shards_.end(); ++it) {
      EngineStats st = it->second.eng->stats();
      std::pair<uint64_t, uint64_t> cost{st.open_incidents, st.indexed_events};
      if (cost < fewest) {
        fewest = cost;
        victim = it;
      }
    }
    std::string name = victim->first, e;
    drain_out(victim->second);
    keeper_.remove(name);  // no renewal after this: the release is final
    if (!bus_.release(name, cfg_.owner, &e)) {
      bus_error("release", e);
      return;
    }
    metrics_.add("reflex_watch_shards_released_total");
    log(Level::info, "gave shard " + name + " up to balance (" + std::to_string(live_) +
                         " diagnosers, " + std::to_string(known_shards_) + " shards, share " +
                         std::to_string(share()) + ")");
    alerts_.forget_shard(name);
    shards_.erase(victim);
  }

  // The keeper renews; a lease it could not confirm within its TTL, or
  // found taken, is someone else's now.
  void renew_leases() {
    std::string err;
    if (uint64_t n = keeper_.take_errors(&err)) {  // one backoff and warning for the lot
      metrics_.add("reflex_watch_bus_errors_total", static_cast<double>(n - 1));
      bus_error("renew lease", err);
    }
    for (auto it = shards_.begin(); it != shards_.end();) {
      if (!keeper_.held(it->first)) {
        Shard& s = it->second;
        keeper_.remove(s.name);
        metrics_.add("reflex_watch_leases_lost_total");
        log(Level::warn, "lost shard " + s.name + " (lease taken or not renewed in time)");
        alerts_.forget_shard(s.name);
        it = shards_.erase(it);
        continue;
      }
      ++it;
    }
  }

  // Time-based retention, by each shard's owner: its streams lose what is
  // older than --retention, at take-over and then every retention/10 (at
  // most a minute apart). A failure (e.g. an ACL without XTRIM) is said and
  // counted; it does not hold the diagnoser back.
  void trim_shards(Clock::time_point now) {
    if (cfg_.retention_ms <= 0) return;
    auto every =
        std::chrono::milliseconds(std::clamp<int64_t>(cfg_.retention_ms / 10, 1000, 60000));
    for (auto& [name, s] : shards_) {
      if (s.last_trim && now - *s.last_trim < every) continue;
      s.last_trim = now;
      int64_t removed = 0;
      std::string e;
      if (!bus_.trim(name, cfg_.retention_ms, &removed, &e)) {
        metrics_.add("reflex_watch_trim_failures_total");
        log_limited(Level::warn, "trim", "retention trim of shard " + name + " failed: " + e);
        continue;
      }
      if (removed > 0) {
        metrics_.add("reflex_watch_trimmed_entries_total", static_cast<double>(removed));
        log(Level::debug, "shard " + name + ": " + std::to_string(removed) +
                              " entries older than the retention dropped");
      }
    }
  }

  // New entries of every owned shard into its engine; true when any arrived.
  // One multi-stream read for all owned shards (bus::read_many: one XREAD
  // per hundred streams), so polling costs do not grow with the shards.
  // Events of devices without a host (fabric switches, shared storage) go to
  // the cluster shard; any job's incident may need them, so every shard's
  // engine also gets that stream: read once, from the oldest of the shards'
  // cursors on it, each shard fed what lies past its own cursor (its owner
  // diagnoses what involves no job).
  bool read_shards() {
    if (shards_.empty()) return false;
    std::vector<bus::EventBus::Source> sources;
    std::vector<std::vector<bus::Entry>> got(shards_.size());
    std::vector<Shard*> order;
    std::optional<StreamPos> oldest;
    for (auto& [name, s] : shards_) {
      sources.push_back({name, &s.cursor, &got[order.size()]});
      order.push_back(&s);
      if (name != kClusterShard) {
        StreamPos p = stream_pos(s.cluster_cursor);
        if (!oldest || p < *oldest) oldest = p;
      }
    }
    std::string e;
    bool ok = bus_.read_many(sources, cfg_.read_batch, &e);
    if (!ok) bus_error("read shards", e);
    bool busy = false;
    std::vector<bus::Entry> cluster;
    if (ok && oldest) {
      std::string from = std::to_string(oldest->first) + "-" + std::to_string(oldest->second);
      if (!bus_.read_events(kClusterShard, &from, cfg_.read_batch, &cluster, &e)) {
        bus_error("read " + std::string(kClusterShard), e);
        cluster.clear();
      }
    }
    // What was read is fed even after an error: each cursor matches what its
    // shard received.
    for (size_t i = 0; i < order.size(); ++i) {
      Shard& s = *order[i];
      if (!got[i].empty()) busy = true;
      for (const bus::Entry& en : got[i]) feed_entry(s, en);
      if (s.name != kClusterShard && !cluster.empty()) {
        StreamPos at = stream_pos(s.cluster_cursor);
        for (const bus::Entry& en : cluster)
          if (stream_pos(en.stream_id) > at) {
            feed_entry(s, en);
            s.cluster_cursor = en.stream_id;
            busy = true;
          }
      }
      drain_out(s);
    }
    if (fed_) metrics_.add("reflex_watch_events_total", static_cast<double>(fed_));
    fed_ = 0;
    return busy;
  }

  // A stream id ("1700000000000-3", "0") as a comparable pair.
  using StreamPos = std::pair<uint64_t, uint64_t>;
  static StreamPos stream_pos(const std::string& id) {
    StreamPos p{0, 0};
    size_t dash = id.find('-');
    auto num = [](std::string_view v) {
      uint64_t x = 0;
      std::from_chars(v.data(), v.data() + v.size(), x);
      return x;
    };
    p.first = num(std::string_view(id).substr(0, dash));
    if (dash != std::string::npos) p.second = num(std::string_view(id).substr(dash + 1));
    return p;
  }

  // One stream entry: skipped (counted, said at a limited rate) when foreign,
  // too large, a redelivery or not an event; else fed to the shard's engine.
  void feed_entry(Shard& s, const bus::Entry& en) {
    const std::string& name = s.name;
    if (en.foreign) {
      metrics_.add("reflex_watch_skipped_entries_total", 1, Metrics::label("reason", "foreign"));
      log_limited(
          Level::warn, "foreign:" + name,
          "shard " + name + ": skipped entry " + en.stream_id + " (not written by a reflex agent)");
      return;
    }
    if (en.payload.size() > kMaxPayload) {
      metrics_.add("reflex_watch_skipped_entries_total", 1, Metrics::label("reason", "too_large"));
      log_limited(Level::warn, "large:" + name,
                  "shard " + name + ": skipped entry " + en.stream_id + " (" +
                      std::to_string(en.payload.size()) + " bytes)");
      return;
    }
    if (s.seen.contains(en.id)) {
      metrics_.add("reflex_watch_duplicate_events_total");
      return;
    }
    std::string derr;
    auto ev = decode_event(en.payload, &derr);
    if (!ev || ev->name.empty() || ev->device.empty()) {
      metrics_.add("reflex_watch_skipped_entries_total", 1, Metrics::label("reason", "bad_event"));
      log_limited(Level::warn, "bad:" + name,
                  "shard " + name + ": skipped entry " + en.stream_id + ": " +
                      (derr.empty() ? "no event name or device" : derr));
      return;
    }
    if (verifier_) {
      const EntryRefusal r =
          verifier_->check(en.signer, en.sig, name, en.id, en.payload, *ev, *cfg_.topo);
      if (r != EntryRefusal::none) {
        metrics_.add("reflex_watch_refused_entries_total", 1,
                     Metrics::label("reason", refusal_name(r)));
        log_limited(Level::warn, std::string("refused:") + refusal_name(r) + ":" + name,
                    "shard " + name + ": refused entry " + en.stream_id + " (" + refusal_name(r) +
                        "; signer '" + en.signer.substr(0, 64) + "', event " + ev->name + " on " +
                        ev->device + ")");
        return;
      }
    }
    s.seen.insert(en.id);
    if (!s.waiting_since) s.waiting_since = Clock::now();
    ++fed_;  // counted once per read (read_shards), not a metrics lookup per event
    s.eng->feed_event(std::move(*ev));
  }

  void tick_engines() {
    uint64_t open = 0, held = 0, dropped = 0;
    for (auto& [name, s] : shards_) {
      s.eng->tick();
      drain_out(s);
      EngineStats st = s.eng->stats();
      open += st.open_incidents;
      held += st.indexed_events;
      dropped += st.dropped_events - s.dropped_seen;
      s.dropped_seen = st.dropped_events;
    }
    metrics_.set("reflex_watch_open_incidents", static_cast<double>(open));
    metrics_.set("reflex_watch_events_held", static_cast<double>(held));
    if (dropped) metrics_.add("reflex_watch_events_dropped_total", static_cast<double>(dropped));
    alerts_.tick();
  }

  // SIGTERM, as in `reflex watch`: every open incident is diagnosed and
  // published; then the leases go so another diagnoser takes over at once.
  void stop() {
    g_daemon_stop = 0;
    for (auto& [name, s] : shards_) {
      s.eng->flush();
      drain_out(s);
    }
    alerts_.tick();
    for (auto& [name, s] : shards_) {
      std::string e;
      keeper_.remove(name);
      bus_.release(name, cfg_.owner, &e);
    }
    std::vector<std::string> live;
    std::string e;
    bus_.members(cfg_.owner, 0, &live, &e);  // the others' shares grow at once
    log(Level::info, "stopped; released " + std::to_string(shards_.size()) + " shard(s)");
  }

  const Config cfg_;
  std::optional<EntryVerifier> verifier_;  // from cfg_.verify_master
  uint64_t fed_ = 0;                       // events fed since read_shards last counted them
  bus::EventBus& bus_;
  LeaseKeeper& keeper_;
  Metrics& metrics_;
  AlertSink& alerts_;
  Health& health_;
  uint64_t bus_errors_ = 0;  // bus_error() calls, for readiness
  bool scanned_ = false;     // this round's shard scan went through
  const std::chrono::milliseconds renew_every_;
  std::map<std::string, Shard> shards_;
  std::deque<std::pair<std::string, Diagnosis>> unpublished_;  // Redis was down
  Backoff backoff_{std::chrono::milliseconds(100), std::chrono::seconds(5)};
  Clock::time_point last_scan_ = Clock::now() - std::chrono::hours(1);
  Clock::time_point last_tick_ = Clock::now();
  std::optional<Clock::time_point> last_members_;
  size_t live_ = 1, known_shards_ = 0;  // live diagnosers, shards with a stream
};

}  // namespace

int run_diagnoser(const DiagnoserConfig& dc, std::shared_ptr<const KnowledgeBase> kb,
                  std::shared_ptr<const Topology> topo) {
  std::string err;
  bus::Options bopts;
  if (!redis_password(dc.redis_url, dc.redis_password_file, &bopts.password, &err)) {
    log(Level::error, "--redis-password-file: " + err);
    return 2;
  }
  std::optional<Key> master;
  if (!dc.verify_key_file.empty() && !(master = read_key_file(dc.verify_key_file, &err))) {
    log(Level::error, "--verify-key: " + err);
    return 2;
  }
  auto bus = bus::make_redis_bus(dc.redis_url, bopts, &err);
  if (!bus) {
    log(Level::error, "--redis: " + err);
    return 2;
  }

  Metrics metrics;
  declare_watch_metrics(metrics);
  metrics.standard(engine_version());
  Health health;
  MetricsServer server;
  if (!dc.metrics.empty() && !server.start(dc.metrics, &metrics, &health, &err)) {
    log(Level::error, err);
    return 2;
  }
  AlertSink alerts(dc.alertmanager, topo->cluster(), dc.alert_resend_s, dc.alert_ttl_s, &metrics);
  install_daemon_signals();
  log(Level::info, "diagnoser " + dc.owner + " on " + bus->describe());

  RedisDiagnoser::Config cfg;
  cfg.kb = std::move(kb);
  cfg.topo = topo;
  cfg.opts = dc.engine;
  // A GPU off the bus alerts before (or without) a job failing on it.
  cfg.opts.fault_incidents = true;
  cfg.owner = dc.owner;
  cfg.ttl_ms = dc.ttl_ms;
  cfg.read_batch = dc.read_batch;
  cfg.retention_ms = dc.retention_ms;
  cfg.verify_master = master;
  // Leases are renewed over a connection of their own, on their own thread.
  auto lease_bus = bus::make_redis_bus(dc.redis_url, bopts, &err);
  if (!lease_bus) {
    log(Level::error, "--redis: " + err);
    return 2;
  }
  LeaseKeeper keeper(std::move(lease_bus), cfg.owner, cfg.ttl_ms);
  RedisDiagnoser diagnoser(std::move(cfg), *bus, keeper, metrics, alerts, health);
  diagnoser.run();
  return 0;
}

}  // namespace reflex::deploy
