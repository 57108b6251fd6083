// Events bound to the host that sent them (docs/deployment.md, "Threat
// model"): every agent holds a key of its own, derived from the cluster's
// master key and its host name; it signs each stream entry (shard, id,
// payload) with HMAC-SHA256. The diagnosers hold the master key, derive the
// sender's key from the host the entry names, and take the event only when
// the signature holds and the event is the sender's own: its host, a device
// of its host or of its ranks, in the shard that host belongs to. A host's
// key cannot speak for another host; the master never leaves the
// diagnosers. HMAC rather than per-host Redis ACL users: events of one job
// share one stream (its shard) across hosts, and a stream key cannot be
// split by writer without losing that.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "reflex/deploy/keys.h"
#include "reflex/event.h"
#include "reflex/topology.h"

namespace reflex::deploy {

// HMAC-SHA256 (RFC 2104) of msg under key, hex.
std::string hmac_sha256_hex(std::string_view key, std::string_view msg);

// The signature of one stream entry, hex.
std::string sign_entry(const Key& host_key, std::string_view host, std::string_view shard,
                       std::string_view id, std::string_view payload);

enum class EntryRefusal {
  none,
  unsigned_entry,
  bad_signature,
  other_host,
  other_shard,
  other_device
};
const char* refusal_name(EntryRefusal r);  // the metric label: "unsigned", "bad_signature", ...

// The diagnosers' side: whether an entry is taken. Keeps the hosts' keys
// and, per topology, which hosts each job has.
class EntryVerifier {
 public:
  explicit EntryVerifier(Key master) : master_(std::move(master)) {}
  // Signed by `signer`'s key, and the event is signer's own (see above).
  // `ev` is the decoded payload.
  EntryRefusal check(std::string_view signer, std::string_view sig, std::string_view shard,
                     std::string_view id, std::string_view payload, const Event& ev,
                     const Topology& topo);

 private:
  const Key& key_of(std::string_view host);
  bool job_admits(const std::string& job, const std::string& host, const Topology& topo);

  Key master_;
  std::unordered_map<std::string, Key> keys_;  // bounded: cleared past 100,000 hosts
  const Topology* jobs_of_ = nullptr;          // the topology job_hosts_ was built from
  std::unordered_map<std::string, std::unordered_set<std::string>> job_hosts_;
};

}  // namespace reflex::deploy
