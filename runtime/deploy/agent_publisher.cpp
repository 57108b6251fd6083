// The agent's publisher: memory queue, spool, bus (agent_publisher.h).
#include "agent_publisher.h"

#include "deploy_codec.h"
#include "event_signing.h"

#include <cctype>
#include <optional>
#include <utility>
#include <vector>

namespace reflex::deploy::agent {

namespace {
// "256M", "1G", "4096": bytes (K/M/G are powers of 1024).
std::optional<uint64_t> parse_bytes(const std::string& s) {
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) return std::nullopt;
  size_t used = 0;
  unsigned long long v = 0;
  try {
    v = std::stoull(s, &used);
  } catch (...) {
    return std::nullopt;
  }
  std::string unit = s.substr(used);
  int shift = unit.empty() ? 0 : unit == "K" ? 10 : unit == "M" ? 20 : unit == "G" ? 30 : -1;
  if (shift < 0 || v > (UINT64_MAX >> shift)) return std::nullopt;
  return static_cast<uint64_t>(v) << shift;
}
}  // namespace

bool Publisher::open_spool(const std::string& spool_dir, const std::string& state_path,
                           const std::string& spool_max) {
  auto max = parse_bytes(spool_max);
  if (!max) {
    log(Level::error, "bad --spool-max '" + spool_max + "' (bytes, optional K/M/G suffix)");
    return false;
  }
  std::string dir = !spool_dir.empty()    ? spool_dir
                    : !state_path.empty() ? state_path + ".spool"
                                          : "";
  if (dir.empty() || *max == 0) return true;
  auto sp = std::make_unique<Spool>();
  std::string err;
  if (!sp->open(dir, *max, &err)) {
    log(Level::error, "--spool-dir: " + err);
    return false;
  }
  if (sp->events() > 0)
    log(Level::info, "spool " + dir + " holds " + std::to_string(sp->events()) +
                         " event(s) from before the restart; they are sent first");
  spool = std::move(sp);
  spool_metrics();
  return true;
}

void Publisher::reached() {
  backoff.succeeded();
  bus_ok = true;
  bus_why = "publishing to " + bus.describe();
  last_contact_ = std::chrono::steady_clock::now();
}

void Publisher::probe() {
  if (pending_events > 0 || (spool && spool->events() > 0) || !backoff.ready()) return;
  if (bus_ok && std::chrono::steady_clock::now() - last_contact_ < std::chrono::seconds(5)) return;
  std::string err;
  if (bus.ping(&err)) {
    reached();
    return;
  }
  backoff.failed();
  bus_ok = false;
  bus_why = bus.describe() + ": " + err;
  log_limited(Level::warn, "ping", "bus " + bus.describe() + " unreachable: " + err);
}

void Publisher::publish_failed(const std::string& err) {
  backoff.failed();
  bus_ok = false;
  bus_why = bus.describe() + ": " + err;
  metrics.add("reflex_agent_publish_failures_total");
  uint64_t spooled = spool ? spool->events() : 0;
  log_limited(Level::warn, "publish",
              "publish to " + bus.describe() + " failed, " + std::to_string(pending_events) +
                  " event(s) buffered in memory and " + std::to_string(spooled) +
                  " in the spool, retrying with backoff: " + err);
}

// The spool before memory: everything in it is older. Bounded per call so
// reading goes on while a large spool drains; true when it is empty.
bool Publisher::drain_spool() {
  for (int round = 0; round < 64 && spool && spool->events() > 0 && backoff.ready(); ++round) {
    std::vector<SpoolRecord> recs;
    std::string err;
    if (!spool->peek(batch, &recs, &err)) {
      log_limited(Level::error, "spool", "spool: " + err);
      break;
    }
    if (recs.empty()) break;
    std::vector<std::pair<std::string, bus::Record>> out;
    out.reserve(recs.size());
    for (SpoolRecord& r : recs)
      out.emplace_back(std::move(r.shard), bus::Record{std::move(r.id), std::move(r.payload)});
    sign(&out);
    if (!bus.publish_events(out, &err)) {
      publish_failed(err);
      break;
    }
    reached();
    // A failed head write re-delivers these after a restart (same ids).
    if (!spool->consume(&err)) log_limited(Level::error, "spool", "spool: " + err);
    published += out.size();
    metrics.add("reflex_agent_published_events_total", static_cast<double>(out.size()));
    metrics.add("reflex_agent_drained_events_total", static_cast<double>(out.size()));
    if (spool->events() == 0)
      log(Level::info, "spool " + spool->dir() + " drained to " + bus.describe());
  }
  return !spool || spool->events() == 0;
}

// Moves up to `max` of the oldest events (while more than `keep` are in
// memory) to the spool, durably; the checkpoints among them then hold, as
// if the bus had accepted them. False when nothing could be moved.
bool Publisher::spill_chunk(size_t keep, size_t max) {
  uint64_t room = spool->room(), bytes = 0;
  std::vector<SpoolRecord> recs;
  size_t items = 0;
  for (const Pending& p : pending) {
    if (pending_events - recs.size() <= keep || recs.size() >= max) break;
    if (!p.marker) {
      SpoolRecord r{p.shard, p.rec.id, p.rec.payload};
      bytes += Spool::encoded_size(r);
      if (bytes > room) break;
      recs.push_back(std::move(r));
    }
    ++items;
  }
  if (recs.empty()) {
    if (!spool_full) {
      spool_full = true;
      metrics.add("reflex_agent_spool_full_total");
      log(Level::warn, "spool " + spool->dir() + " full (" + std::to_string(spool->bytes()) +
                           " bytes, " + std::to_string(spool->events()) +
                           " events): reading pauses until the bus takes events again");
    }
    return false;
  }
  std::string err;
  if (!spool->append(recs, &err)) {
    metrics.add("reflex_agent_spool_errors_total");
    log_limited(Level::error, "spool-write",
                "spool " + spool->dir() + ": cannot append (" + err +
                    "); the events stay in memory, reading pauses while it is full");
    return false;
  }
  spool_full = false;
  for (size_t i = 0; i < items; ++i) {
    if (pending.front().marker)
      positions.apply_marker(pending.front());
    else
      --pending_events;
    pending.pop_front();
  }
  metrics.add("reflex_agent_spilled_events_total", static_cast<double>(recs.size()));
  log_limited(Level::info, "spill",
              std::to_string(recs.size()) + " event(s) spilled to the spool " + spool->dir() +
                  " (now " + std::to_string(spool->events()) + " events, " +
                  std::to_string(spool->bytes()) + " bytes)");
  return true;
}

// Memory full (or, with all, at stop): every event in memory goes to the
// spool, so the checkpoints queued behind them hold too (a file's comes
// after its whole read, a journal's or kmsg's after its round) and sources
// that cannot be read again keep their events.
void Publisher::spill(bool all) {
  if (!spool || (!all && !full())) return;
  for (int i = 0; i < 1024 && pending_events > 0; ++i)
    if (!spill_chunk(0, 4096)) break;
  apply_front_markers();
}

void Publisher::apply_front_markers() {
  while (!pending.empty() && pending.front().marker) {
    positions.apply_marker(pending.front());
    pending.pop_front();
  }
}

void Publisher::spool_metrics() {
  if (!spool) return;
  for (const std::string& n : spool->notes) log(Level::warn, "spool: " + n);
  spool->notes.clear();
  metrics.set("reflex_agent_spool_events", static_cast<double>(spool->events()));
  metrics.set("reflex_agent_spool_bytes", static_cast<double>(spool->bytes()));
  metrics.set("reflex_agent_spool_damaged_total", static_cast<double>(spool->damaged_truncated),
              Metrics::label("reason", "truncated"));
  metrics.set("reflex_agent_spool_damaged_total", static_cast<double>(spool->damaged_corrupt),
              Metrics::label("reason", "corrupt"));
  metrics.set("reflex_agent_spool_damaged_bytes_total", static_cast<double>(spool->damaged_bytes));
}

void Publisher::sign(std::vector<std::pair<std::string, bus::Record>>* out) const {
  if (signing_key.empty() && !host_keys) return;
  for (auto& [shard, rec] : *out) {
    if (!host_keys) {
      rec.signer = signer;
      rec.sig = sign_entry(signing_key, signer, shard, rec.id, rec.payload);
      continue;
    }
    std::string host = rec.signer, err;
    if (host.empty())
      if (auto ev = decode_event(rec.payload, &err)) host = ev->host;
    const Key* key =
        !signing_key.empty() && host == signer ? &signing_key : host_keys->key_of(host);
    rec.signer = key ? host : std::string();
    rec.sig = key ? sign_entry(*key, host, shard, rec.id, rec.payload) : std::string();
  }
}

void Publisher::send() {
  apply_front_markers();
  bool spool_empty = drain_spool();
  while (spool_empty && pending_events > 0 && backoff.ready()) {
    std::vector<std::pair<std::string, bus::Record>> out;
    size_t items = 0;
    for (const Pending& p : pending) {
      if (out.size() >= batch) break;
      ++items;
      if (!p.marker) out.emplace_back(p.shard, p.rec);
    }
    sign(&out);
    std::string err;
    if (!bus.publish_events(out, &err)) {
      publish_failed(err);
      break;
    }
    reached();
    for (size_t i = 0; i < items; ++i) {
      Pending& p = pending.front();
      if (p.marker) {
        positions.apply_marker(p);
      } else {
        --pending_events;
      }
      pending.pop_front();
    }
    published += out.size();
    metrics.add("reflex_agent_published_events_total", static_cast<double>(out.size()));
    apply_front_markers();
  }
  spill(false);
}

bool Publisher::report() {
  double lag = 0;
  for (const Pending& p : pending)
    if (!p.marker) {
      lag = std::chrono::duration<double>(Clock::now() - p.queued).count();
      break;
    }
  metrics.set("reflex_agent_publish_lag_seconds", lag);
  metrics.set("reflex_agent_buffer_events", static_cast<double>(pending_events));
  spool_metrics();
  return pending_events == 0 && (!spool || spool->events() == 0);
}

}  // namespace reflex::deploy::agent
