// Redis Streams transport (hiredis, synchronous). One connection per bus,
// made lazily and remade after any error, so a Redis restart costs the
// caller failed calls (which it retries with backoff), never a crash.
#include <hiredis/hiredis.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>
#include <unordered_map>

#include "reflex/bus.h"
#include "sentinel.h"

namespace reflex::bus {
namespace {

struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyFree>;

struct Url {
  std::string user, password, host = "127.0.0.1";
  int port = 6379, db = 0;
  // redis+sentinel://: the sentinels to ask and the primary's name there.
  std::vector<detail::HostPort> sentinels;
  std::string master;
};

bool parse_int(std::string_view s, int* out) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// "host[:port]" (an empty host keeps *host); false on a bad port.
bool parse_host_port(const std::string& text, std::string* host, int* port) {
  std::string rest = text;
  auto colon = rest.rfind(':');
  if (colon != std::string::npos) {
    if (!parse_int(rest.substr(colon + 1), port) || *port <= 0 || *port > 65535) return false;
    rest = rest.substr(0, colon);
  }
  if (!rest.empty()) *host = rest;
  return true;
}

const char* kUrlForms =
    "redis://[user[:password]@]host[:port][/db] or "
    "redis+sentinel://[user[:password]@]host[:port][,host[:port]...]/NAME[/db]";

// The sentinel list and /NAME[/db] of a redis+sentinel:// URL (after the
// credentials).
bool parse_sentinels(const std::string& url, std::string rest, Url* u, std::string* err) {
  auto slash = rest.find('/');
  std::string path = slash == std::string::npos ? "" : rest.substr(slash + 1);
  rest = rest.substr(0, std::min(slash, rest.size()));
  auto db = path.find('/');
  u->master = path.substr(0, db);
  if (u->master.empty()) {
    *err = "no primary name in " + redact_url(url) + " (expected " + kUrlForms + ")";
    return false;
  }
  if (db != std::string::npos && db + 1 < path.size() && !parse_int(path.substr(db + 1), &u->db)) {
    *err = "bad database number in " + redact_url(url);
    return false;
  }
  for (size_t at = 0; at <= rest.size();) {
    size_t comma = std::min(rest.find(',', at), rest.size());
    detail::HostPort hp{"", 26379};  // Sentinel's own default port
    if (!parse_host_port(rest.substr(at, comma - at), &hp.host, &hp.port) || hp.host.empty()) {
      *err = "bad sentinel address in " + redact_url(url);
      return false;
    }
    u->sentinels.push_back(std::move(hp));
    at = comma + 1;
  }
  return true;
}

bool parse_url(const std::string& url, Url* u, std::string* err) {
  const std::string plain = "redis://", sentinel = "redis+sentinel://";
  bool is_sentinel = url.compare(0, sentinel.size(), sentinel) == 0;
  if (!is_sentinel && url.compare(0, plain.size(), plain) != 0) {
    *err = std::string("expected ") + kUrlForms + ", got '" + redact_url(url) + "'";
    return false;
  }
  std::string rest = url.substr(is_sentinel ? sentinel.size() : plain.size());
  auto at = rest.rfind('@');
  if (at != std::string::npos) {
    std::string cred = rest.substr(0, at);
    rest = rest.substr(at + 1);
    auto colon = cred.find(':');
    if (colon == std::string::npos) {
      u->password = cred;  // redis://password@host, as redis-cli -u takes it
    } else {
      u->user = cred.substr(0, colon);
      u->password = cred.substr(colon + 1);
    }
  }
  if (is_sentinel) return parse_sentinels(url, rest, u, err);
  auto slash = rest.find('/');
  if (slash != std::string::npos) {
    if (slash + 1 < rest.size() && !parse_int(rest.substr(slash + 1), &u->db)) {
      *err = "bad database number in " + redact_url(url);
      return false;
    }
    rest = rest.substr(0, slash);
  }
  if (!parse_host_port(rest, &u->host, &u->port)) {
    *err = "bad port in " + redact_url(url);
    return false;
  }
  return true;
}

// Lease: take it when free, renew it when ours, else leave it.
const char* kLeaseScript =
    "local v = redis.call('GET', KEYS[1]) "
    "if v == false then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end "
    "if v == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end "
    "return 0";
const char* kReleaseScript =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end "
    "return 0";
// Publish-once: the (incident, answer) set and the stream share the shard's
// hash tag, so this is atomic on a cluster too.
const char* kPublishScript =
    "if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 1 then "
    "redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[4], '*', 'incident', ARGV[5], "
    "'revision', ARGV[2], 'diagnosis', ARGV[3]) return 1 end return 0";

// Membership: a sorted set of diagnosers scored by when their announcement
// lapses, on the server's clock (TIME in a script is fine: Redis 7
// replicates a script's effects, not the script).
const char* kMembersScript =
    "local t = redis.call('TIME') "
    "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) "
    "if tonumber(ARGV[2]) > 0 then redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1]) "
    "else redis.call('ZREM', KEYS[1], ARGV[1]) end "
    "redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now) "
    "return redis.call('ZRANGE', KEYS[1], 0, -1)";

// The entries of one stream in an XREAD reply; *cursor moves past them.
bool parse_entries(redisReply* entries, std::string* cursor, std::vector<Entry>* out) {
  if (entries->type != REDIS_REPLY_ARRAY) return false;
  for (size_t i = 0; i < entries->elements; ++i) {
    redisReply* e = entries->element[i];
    if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
        e->element[0]->type != REDIS_REPLY_STRING)
      continue;
    Entry en;
    en.stream_id.assign(e->element[0]->str, e->element[0]->len);
    redisReply* fv = e->element[1];
    bool have_id = false, have_payload = false;
    if (fv->type == REDIS_REPLY_ARRAY)
      for (size_t k = 0; k + 1 < fv->elements; k += 2) {
        redisReply* f = fv->element[k];
        redisReply* v = fv->element[k + 1];
        if (f->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING) continue;
        std::string_view name(f->str, f->len);
        if (name == "id") {
          en.id.assign(v->str, v->len);
          have_id = true;
        } else if (name == "e") {
          en.payload.assign(v->str, v->len);
          have_payload = true;
        } else if (name == "h") {
          en.signer.assign(v->str, v->len);
        } else if (name == "s") {
          en.sig.assign(v->str, v->len);
        }
      }
    en.foreign = !(have_id && have_payload);
    *cursor = en.stream_id;
    out->push_back(std::move(en));
  }
  return true;
}

class RedisBus final : public EventBus {
 public:
  RedisBus(Url u, std::string url, Options o) : u_(std::move(u)), url_(std::move(url)), opts_(o) {}
  ~RedisBus() override { drop(); }

  bool publish_events(const std::vector<std::pair<std::string, Record>>& batch,
                      std::string* err) override {
    if (batch.empty()) return true;
    if (!connect(err)) return false;
    std::string maxlen = std::to_string(opts_.maxlen);
    for (const auto& [shard, rec] : batch) {
      std::string key = events_key(shard);
      const char* argv[] = {"XADD",
                            key.c_str(),
                            "MAXLEN",
                            "~",
                            maxlen.c_str(),
                            "*",
                            "id",
                            rec.id.c_str(),
                            "e",
                            rec.payload.c_str(),
                            "h",
                            rec.signer.c_str(),
                            "s",
                            rec.sig.c_str()};
      size_t lens[] = {4,
                       key.size(),
                       6,
                       1,
                       maxlen.size(),
                       1,
                       2,
                       rec.id.size(),
                       1,
                       rec.payload.size(),
                       1,
                       rec.signer.size(),
                       1,
                       rec.sig.size()};
      const int argc = rec.signer.empty() ? 10 : 14;  // unsigned: the fields as before
      if (redisAppendCommandArgv(ctx_, argc, argv, lens) != REDIS_OK) return fail(err);
    }
    bool ok = true, demoted = false;
    for (size_t i = 0; i < batch.size(); ++i) {
      void* raw = nullptr;
      if (redisGetReply(ctx_, &raw) != REDIS_OK) return fail(err);
      Reply r(static_cast<redisReply*>(raw));
      if (r->type == REDIS_REPLY_ERROR) {
        if (ok) *err = std::string("XADD: ") + r->str;
        ok = false;
        demoted = demoted || is_readonly(r.get());
      }
    }
    if (demoted) drop();  // a replica now: the next call asks the sentinels again
    return ok && replicated(err);
  }

  bool read_events(const std::string& shard, std::string* cursor, size_t max,
                   std::vector<Entry>* out, std::string* err) override {
    return read_many({{shard, cursor, out}}, max, err);
  }

  bool read_many(const std::vector<Source>& sources, size_t max, std::string* err) override {
    if (sources.empty()) return true;
    if (!connect(err)) return false;
    // Streams per XREAD: bounds one reply to kKeys * max entries.
    constexpr size_t kKeys = 100;
    std::string count = std::to_string(max);
    for (size_t at = 0; at < sources.size(); at += kKeys) {
      size_t n = std::min(kKeys, sources.size() - at);
      std::vector<std::string> args = {"XREAD", "COUNT", count, "STREAMS"};
      std::unordered_map<std::string, const Source*> by_key;
      for (size_t i = at; i < at + n; ++i) {
        args.push_back(events_key(sources[i].shard));
        by_key[args.back()] = &sources[i];
      }
      for (size_t i = at; i < at + n; ++i)
        args.push_back(sources[i].cursor->empty() ? "0" : *sources[i].cursor);
      Reply r = command(args, err);
      if (!r) return false;
      if (r->type == REDIS_REPLY_NIL) continue;  // nothing new in any of them
      if (r->type != REDIS_REPLY_ARRAY) return unexpected(err, "XREAD");
      for (size_t k = 0; k < r->elements; ++k) {
        redisReply* stream = r->element[k];
        if (stream->type != REDIS_REPLY_ARRAY || stream->elements != 2 ||
            stream->element[0]->type != REDIS_REPLY_STRING)
          return unexpected(err, "XREAD");
        auto it = by_key.find(std::string(stream->element[0]->str, stream->element[0]->len));
        if (it == by_key.end()) return unexpected(err, "XREAD (a stream not asked for)");
        if (!parse_entries(stream->element[1], it->second->cursor, it->second->out))
          return unexpected(err, "XREAD");
      }
    }
    return true;
  }

  bool list_shards(std::vector<std::string>* out, std::string* err) override {
    if (!connect(err)) return false;
    std::string cursor = "0";
    // SCAN is bounded: at most this many round trips per call.
    for (int round = 0; round < 10000; ++round) {
      Reply r = command(
          {"SCAN", cursor, "MATCH", "reflex:{*}:events", "COUNT", "1000", "TYPE", "stream"}, err);
      if (!r) return false;
      if (r->type != REDIS_REPLY_ARRAY || r->elements != 2) return unexpected(err, "SCAN");
      cursor.assign(r->element[0]->str, r->element[0]->len);
      redisReply* keys = r->element[1];
      for (size_t i = 0; i < keys->elements; ++i) {
        std::string k(keys->element[i]->str, keys->element[i]->len);
        const std::string pre = "reflex:{", post = "}:events";
        if (k.size() > pre.size() + post.size())
          out->push_back(k.substr(pre.size(), k.size() - pre.size() - post.size()));
      }
      if (cursor == "0") return true;
    }
    return true;
  }

  bool lease(const std::string& shard, const std::string& owner, int ttl_ms, bool* held,
             std::string* err) override {
    if (!connect(err)) return false;
    Reply r =
        command({"EVAL", kLeaseScript, "1", lease_key(shard), owner, std::to_string(ttl_ms)}, err);
    if (!r) return false;
    if (r->type != REDIS_REPLY_INTEGER) return unexpected(err, "lease", r.get());
    *held = r->integer == 1;
    return true;
  }

  bool release(const std::string& shard, const std::string& owner, std::string* err) override {
    if (!connect(err)) return false;
    Reply r = command({"EVAL", kReleaseScript, "1", lease_key(shard), owner}, err);
    return r && r->type == REDIS_REPLY_INTEGER;
  }

  bool publish_diagnosis(const std::string& shard, const std::string& incident, int revision,
                         const std::string& answer, const std::string& json, bool* published,
                         std::string* err) override {
    if (!connect(err)) return false;
    std::string rev = std::to_string(revision);
    Reply r = command(
        {"EVAL", kPublishScript, "2", published_key(shard), diagnoses_key(shard),
         incident + "#" + answer, rev, json, std::to_string(opts_.diagnoses_maxlen), incident},
        err);
    if (!r) return false;
    if (r->type != REDIS_REPLY_INTEGER) return unexpected(err, "publish diagnosis", r.get());
    *published = r->integer == 1;
    return true;
  }

  bool members(const std::string& owner, int ttl_ms, std::vector<std::string>* live,
               std::string* err) override {
    if (!connect(err)) return false;
    Reply r =
        command({"EVAL", kMembersScript, "1", members_key(), owner, std::to_string(ttl_ms)}, err);
    if (!r) return false;
    if (r->type != REDIS_REPLY_ARRAY) return unexpected(err, "members", r.get());
    live->clear();
    for (size_t i = 0; i < r->elements; ++i)
      if (r->element[i]->type == REDIS_REPLY_STRING)
        live->emplace_back(r->element[i]->str, r->element[i]->len);
    std::sort(live->begin(), live->end());
    return true;
  }

  bool trim(const std::string& shard, int64_t max_age_ms, int64_t* removed,
            std::string* err) override {
    if (!connect(err)) return false;
    // Stream ids carry the server's clock: the threshold is taken from it too.
    Reply t = command({"TIME"}, err);
    if (!t) return false;
    if (t->type != REDIS_REPLY_ARRAY || t->elements != 2 ||
        t->element[0]->type != REDIS_REPLY_STRING || t->element[1]->type != REDIS_REPLY_STRING)
      return unexpected(err, "TIME");
    int64_t now_ms = std::strtoll(t->element[0]->str, nullptr, 10) * 1000 +
                     std::strtoll(t->element[1]->str, nullptr, 10) / 1000;
    if (now_ms <= max_age_ms) return true;
    std::string minid = std::to_string(now_ms - max_age_ms);
    for (const std::string& key : {events_key(shard), diagnoses_key(shard)}) {
      Reply r = command({"XTRIM", key, "MINID", "~", minid}, err);
      if (!r) return false;
      if (r->type != REDIS_REPLY_INTEGER) return unexpected(err, "XTRIM", r.get());
      *removed += r->integer;
    }
    return true;
  }

  bool ping(std::string* err) override {
    if (!connect(err)) return false;
    if (command({"PING"}, err)) return true;
    // command() keeps the connection on an error reply and drops it when
    // the server could not be reached.
    return ctx_ && err->find("NOPERM") != std::string::npos;
  }

  std::string describe() const override { return redact_url(url_); }

 private:
  bool connect(std::string* err) {
    if (ctx_) return true;
    if (!u_.sentinels.empty() &&
        !detail::ask_sentinels(&u_.sentinels, u_.master, opts_.timeout_ms, &primary_, err))
      return false;
    const std::string& host = u_.sentinels.empty() ? u_.host : primary_.host;
    int port = u_.sentinels.empty() ? u_.port : primary_.port;
    timeval tv = timeout(opts_.timeout_ms);
    ctx_ = redisConnectWithTimeout(host.c_str(), port, tv);
    if (!ctx_ || ctx_->err) {
      *err = "connect " + host + ":" + std::to_string(port) + ": " +
             (ctx_ ? ctx_->errstr : "out of memory");
      drop();
      return false;
    }
    redisSetTimeout(ctx_, tv);
    if (!u_.password.empty()) {
      Reply r = u_.user.empty() ? command({"AUTH", u_.password}, err)
                                : command({"AUTH", u_.user, u_.password}, err);
      if (!r) return false;
      if (r->type == REDIS_REPLY_ERROR) {
        *err = std::string("AUTH refused: ") + r->str;
        drop();
        return false;
      }
    }
    if (u_.db != 0) {
      Reply r = command({"SELECT", std::to_string(u_.db)}, err);
      if (!r || r->type == REDIS_REPLY_ERROR) {
        if (r) *err = std::string("SELECT: ") + r->str;
        drop();
        return false;
      }
    }
    return u_.sentinels.empty() || is_primary(err);
  }

  // What a sentinel named may still be a replica (its promotion under way)
  // or a demoted primary (sentinels not yet told): ROLE says. A user that
  // may not run ROLE (the agent's) goes on; a READONLY reply then sends it
  // back to the sentinels.
  bool is_primary(std::string* err) {
    std::string role_err;
    Reply r = command({"ROLE"}, &role_err);
    if (!ctx_) {
      *err = role_err;
      return false;
    }
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements == 0 ||
        r->element[0]->type != REDIS_REPLY_STRING ||
        std::string_view(r->element[0]->str, r->element[0]->len) == "master")
      return true;
    *err = describe_primary() + " is a " + std::string(r->element[0]->str, r->element[0]->len) +
           ", not the primary (a failover under way?)";
    drop();
    return false;
  }

  // With min_replicas: the events just added are on that many replicas
  // (WAIT), else false, so the caller keeps them and sends them again.
  bool replicated(std::string* err) {
    if (opts_.min_replicas <= 0) return true;
    // WAIT blocks up to its own timeout: the socket's must be longer.
    redisSetTimeout(ctx_, timeout(opts_.timeout_ms + opts_.replica_timeout_ms));
    Reply r = command(
        {"WAIT", std::to_string(opts_.min_replicas), std::to_string(opts_.replica_timeout_ms)},
        err);
    if (ctx_) redisSetTimeout(ctx_, timeout(opts_.timeout_ms));
    if (!r) return false;
    if (r->type != REDIS_REPLY_INTEGER) return unexpected(err, "WAIT", r.get());
    if (r->integer >= opts_.min_replicas) return true;
    *err = "WAIT: " + std::to_string(r->integer) + " of " + std::to_string(opts_.min_replicas) +
           " replica(s) acknowledged within " + std::to_string(opts_.replica_timeout_ms) + " ms";
    return false;
  }

  static timeval timeout(int ms) { return timeval{ms / 1000, (ms % 1000) * 1000}; }

  static bool is_readonly(const redisReply* r) {
    return r->type == REDIS_REPLY_ERROR &&
           std::string_view(r->str, r->len).find("READONLY") != std::string_view::npos;
  }

  std::string describe_primary() const {
    return u_.sentinels.empty() ? u_.host + ":" + std::to_string(u_.port)
                                : primary_.host + ":" + std::to_string(primary_.port);
  }

  // Null on a connection error (the context is dropped); an error reply is
  // returned as such for the caller to judge.
  Reply command(const std::vector<std::string>& args, std::string* err) {
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (const auto& a : args) {
      argv.push_back(a.c_str());
      lens.push_back(a.size());
    }
    void* raw = redisCommandArgv(ctx_, static_cast<int>(args.size()), argv.data(), lens.data());
    if (!raw) {
      fail(err);
      return nullptr;
    }
    Reply r(static_cast<redisReply*>(raw));
    if (r->type == REDIS_REPLY_ERROR) {
      *err = args[0] + ": " + std::string(r->str, r->len);
      // A demoted primary: the next call asks the sentinels again.
      if (is_readonly(r.get())) {
        drop();
        return nullptr;
      }
      // NOAUTH / NOPERM / WRONGPASS: the caller sees the error text.
      if (args[0] != "AUTH") return nullptr;
    }
    return r;
  }

  bool fail(std::string* err) {
    *err = "redis " + describe_primary() + ": " +
           (ctx_ && ctx_->errstr[0] ? ctx_->errstr : "connection lost");
    drop();
    return false;
  }

  bool unexpected(std::string* err, const char* what, redisReply* r = nullptr) {
    *err = std::string("unexpected reply to ") + what;
    if (r && r->type == REDIS_REPLY_ERROR) *err += std::string(": ") + r->str;
    return false;
  }

  void drop() {
    if (ctx_) redisFree(ctx_);
    ctx_ = nullptr;
  }

  Url u_;
  detail::HostPort primary_;  // the sentinels' last answer
  std::string url_;
  Options opts_;
  redisContext* ctx_ = nullptr;
};

}  // namespace

std::unique_ptr<EventBus> make_redis_bus(const std::string& url, Options opts, std::string* err) {
  Url u;
  if (!parse_url(url, &u, err)) return nullptr;
  if (!opts.password.empty()) {
    // The password comes apart from the URL: "redis://USER@host" names the
    // user then (not redis-cli's password-only form).
    if (u.user.empty() && !u.password.empty()) u.user = u.password;
    u.password = opts.password;
  }
  return std::make_unique<RedisBus>(std::move(u), url, opts);
}

}  // namespace reflex::bus
