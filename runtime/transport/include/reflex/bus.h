// The transport between agents and diagnosers (docs/deployment.md): one
// small interface, an embedded in-process implementation (the default, one
// process) and Redis Streams (hiredis). Payloads are opaque text here; what
// an event looks like on the wire is the caller's codec.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace reflex::bus {

// One event to publish: a deterministic id (a redelivery carries the same
// one, so consumers drop it) and the encoded event.
struct Record {
  std::string id;
  std::string payload;
  // The host that signs it and the signature (docs/deployment.md, "Threat
  // model"); empty when the agent has no key.
  std::string signer, sig;
};

// One entry read back. `foreign` = the entry lacks the fields Reflex writes
// (someone else XADDed to the stream); it is still returned so the caller
// can count it and move past it.
struct Entry {
  std::string stream_id;  // position in the shard's stream ("1700000000000-0")
  std::string id;
  std::string payload;
  std::string signer, sig;  // as the writer gave them ("" when unsigned)
  bool foreign = false;
};

struct Options {
  // The data servers' password, read from a file or the environment by the
  // caller so that it is never in argv; it beats the URL's, and makes
  // "redis://USER@host" name the user.
  std::string password;
  size_t maxlen = 1000000;           // per event stream, trimmed approximately (MAXLEN ~)
  size_t diagnoses_maxlen = 100000;  // per diagnoses stream
  int timeout_ms = 2000;             // connect and command timeout
  // publish_events succeeds only once this many replicas acknowledged the
  // events (WAIT), so a failover cannot lose what the caller counted as
  // delivered; 0 = on the primary is enough.
  int min_replicas = 0;
  int replica_timeout_ms = 1000;  // how long WAIT waits for them
};

class EventBus {
 public:
  virtual ~EventBus() = default;
  // Appends every record to its shard's stream. True = all accepted. False =
  // some may have been: retrying is safe (ids are deterministic).
  virtual bool publish_events(const std::vector<std::pair<std::string, Record>>& batch,
                              std::string* err) = 0;
  // Up to `max` entries of `shard` after *cursor ("0" = from the start);
  // advances *cursor past what it returns.
  virtual bool read_events(const std::string& shard, std::string* cursor, size_t max,
                           std::vector<Entry>* out, std::string* err) = 0;
  // One shard of a multi-shard read: its cursor, advanced as in read_events,
  // and where its entries go (appended).
  struct Source {
    std::string shard;
    std::string* cursor;
    std::vector<Entry>* out;
  };
  // read_events over many shards at once, up to `max` entries each (shards
  // listed once). Redis: one XREAD over all their streams (a few when there
  // are hundreds), so a diagnoser's polling costs round trips per read, not
  // per owned shard. False = some sources may have advanced, others not;
  // each cursor stays consistent with what its `out` received.
  virtual bool read_many(const std::vector<Source>& sources, size_t max, std::string* err) {
    for (const Source& s : sources)
      if (!read_events(s.shard, s.cursor, max, s.out, err)) return false;
    return true;
  }
  // The shards that have an event stream.
  virtual bool list_shards(std::vector<std::string>* out, std::string* err) = 0;
  // Acquires or renews `owner`'s lease on `shard` for ttl_ms; *held says
  // whether owner holds it afterwards (false: someone else does).
  virtual bool lease(const std::string& shard, const std::string& owner, int ttl_ms, bool* held,
                     std::string* err) = 0;
  virtual bool release(const std::string& shard, const std::string& owner, std::string* err) = 0;
  // Publishes one diagnosis unless the same answer (`answer`: a digest of its
  // root causes) for that incident was published before, by anyone — a new
  // owner that rebuilds a shard re-derives the old answers: *published says
  // which.
  virtual bool publish_diagnosis(const std::string& shard, const std::string& incident,
                                 int revision, const std::string& answer, const std::string& json,
                                 bool* published, std::string* err) = 0;
  // Diagnoser membership, for balancing shards: announces `owner` alive for
  // ttl_ms (0: leaves at once) and returns, sorted, every diagnoser whose
  // announcement has not lapsed (owner included unless it left).
  virtual bool members(const std::string& owner, int ttl_ms, std::vector<std::string>* live,
                       std::string* err) = 0;
  // Time-based retention of a shard: drops the entries of its event and
  // diagnoses streams added more than max_age_ms ago by the bus's clock
  // (Redis: TIME and XTRIM MINID ~, so whole stream nodes go, never a newer
  // entry). Adds what went to *removed. Length-based retention is
  // Options::maxlen, applied on every append.
  virtual bool trim(const std::string& shard, int64_t max_age_ms, int64_t* removed,
                    std::string* err) = 0;
  // Whether the bus answers (for readiness probes): connected and, with a
  // user, authenticated. Redis: PING; a NOPERM reply (a user without PING,
  // e.g. the agent's) still proves the server reached and the user accepted.
  virtual bool ping(std::string* /*err*/) { return true; }
  // Where this bus goes, for logs ("embedded", "redis://127.0.0.1:6379").
  virtual std::string describe() const = 0;
};

// In-process: one process publishes and consumes (tests, single host).
std::unique_ptr<EventBus> make_embedded_bus(Options opts = {});

// redis://[user[:password]@]host[:port][/db], or
// redis+sentinel://[user[:password]@]host[:port][,host[:port]...]/NAME[/db]:
// the primary Sentinel calls NAME, asked of those sentinels (default port
// 26379) at every connect, so a failover is followed; the credentials are
// the data servers', the sentinels are asked without. Connects lazily and
// reconnects after errors (and after a READONLY reply: a demoted primary);
// nullptr + *err for a URL that cannot be used.
std::unique_ptr<EventBus> make_redis_bus(const std::string& url, Options opts, std::string* err);

// Key layout (hash tag = the shard, so one shard's keys share a Redis Cluster slot).
std::string events_key(const std::string& shard);     // reflex:{shard}:events
std::string lease_key(const std::string& shard);      // reflex:{shard}:lease
std::string diagnoses_key(const std::string& shard);  // reflex:{shard}:diagnoses
std::string published_key(const std::string& shard);  // reflex:{shard}:published
std::string members_key();                            // reflex:diagnosers

// The URL without its password, for logs.
std::string redact_url(const std::string& url);

}  // namespace reflex::bus
