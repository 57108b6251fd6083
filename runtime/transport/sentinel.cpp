// The Sentinel query of sentinel.h, over short-lived hiredis connections: a
// failover is rare, so one connection per lookup costs nothing worth keeping.
#include "sentinel.h"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <memory>
#include <string_view>

namespace reflex::bus::detail {
namespace {

struct CtxFree {
  void operator()(redisContext* c) const { redisFree(c); }
};
struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};

// One sentinel's answer, or false + *why.
bool ask_one(const HostPort& s, const std::string& name, int timeout_ms, HostPort* out,
             std::string* why) {
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  std::unique_ptr<redisContext, CtxFree> c(redisConnectWithTimeout(s.host.c_str(), s.port, tv));
  if (!c || c->err) {
    *why = c ? c->errstr : "out of memory";
    return false;
  }
  redisSetTimeout(c.get(), tv);
  const char* argv[] = {"SENTINEL", "get-master-addr-by-name", name.c_str()};
  size_t lens[] = {8, 23, name.size()};
  std::unique_ptr<redisReply, ReplyFree> r(
      static_cast<redisReply*>(redisCommandArgv(c.get(), 3, argv, lens)));
  if (!r) {
    *why = c->errstr[0] ? c->errstr : "connection lost";
    return false;
  }
  if (r->type == REDIS_REPLY_ERROR) {
    *why = std::string(r->str, r->len);
    return false;
  }
  if (r->type == REDIS_REPLY_NIL) {
    *why = "no primary named '" + name + "' is monitored there";
    return false;
  }
  if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
      r->element[0]->type != REDIS_REPLY_STRING || r->element[1]->type != REDIS_REPLY_STRING) {
    *why = "unexpected reply to SENTINEL get-master-addr-by-name";
    return false;
  }
  std::string_view port(r->element[1]->str, r->element[1]->len);
  int p = 0;
  auto pr = std::from_chars(port.data(), port.data() + port.size(), p);
  if (pr.ec != std::errc() || pr.ptr != port.data() + port.size() || p <= 0 || p > 65535) {
    *why = "a bad port in its answer";
    return false;
  }
  out->host.assign(r->element[0]->str, r->element[0]->len);
  out->port = p;
  return true;
}

}  // namespace

bool ask_sentinels(std::vector<HostPort>* sentinels, const std::string& name, int timeout_ms,
                   HostPort* primary, std::string* err) {
  std::string whys;
  for (size_t i = 0; i < sentinels->size(); ++i) {
    const HostPort s = (*sentinels)[i];
    std::string why;
    if (ask_one(s, name, timeout_ms, primary, &why)) {
      std::rotate(sentinels->begin(), sentinels->begin() + static_cast<std::ptrdiff_t>(i),
                  sentinels->begin() + static_cast<std::ptrdiff_t>(i) + 1);
      return true;
    }
    whys += (whys.empty() ? "" : "; ") + s.host + ":" + std::to_string(s.port) + ": " + why;
  }
  *err = "no sentinel named the primary '" + name + "' (" + whys + ")";
  return false;
}

}  // namespace reflex::bus::detail
