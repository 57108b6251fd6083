// HMAC-SHA256 signatures of stream entries (event_signing.h): RFC 2104's
// HMAC over the project's SHA-256 (reflex/artifact.h, FIPS 180-4, the
// artifact's hash), random keys from getrandom(2). Not OpenSSL: `reflex`
// links no heavy library it may not need (its archive and HTTP libraries
// are modules loaded on first use), and HMAC is two hashes.
#include "event_signing.h"

#include <sys/random.h>

#include <cctype>

#include "deploy_codec.h"
#include "reflex/artifact.h"
#include "reflex/deploy/daemon.h"

namespace reflex::deploy {

namespace {

constexpr size_t kKeyBytes = 32;

std::optional<std::string> from_hex(std::string_view hex);

// SHA-256 of `data`, 32 bytes.
std::string sha256_raw(const std::string& data) {
  return *from_hex(sha256_hex(data));
}

// RFC 2104 with SHA-256 (64-byte blocks); keys here are 32 bytes.
std::string hmac(std::string_view key, std::string_view msg) {
  std::string k(key);
  if (k.size() > 64) k = sha256_raw(k);
  k.resize(64, '\0');
  std::string inner(64, '\0'), outer(64, '\0');
  for (size_t i = 0; i < 64; ++i) {
    inner[i] = static_cast<char>(k[i] ^ 0x36);
    outer[i] = static_cast<char>(k[i] ^ 0x5c);
  }
  inner.append(msg.data(), msg.size());
  outer += sha256_raw(inner);
  return sha256_raw(outer);
}

// Equal without an early exit: the time does not tell how much matched.
bool same_bytes(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

std::string to_hex(std::string_view bytes) {
  static const char* d = "0123456789abcdef";
  std::string s;
  s.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    s += d[c >> 4];
    s += d[c & 15];
  }
  return s;
}

std::optional<std::string> from_hex(std::string_view hex) {
  if (hex.size() % 2) return std::nullopt;
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    auto v = [](char c) {
      return std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
             : (c >= 'a' && c <= 'f')                    ? c - 'a' + 10
             : (c >= 'A' && c <= 'F')                    ? c - 'A' + 10
                                                         : -1;
    };
    int hi = v(hex[i]), lo = v(hex[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
  }
  return out;
}

// Length-prefixed fields: no choice of shard, id or payload bytes can make
// two different entries sign the same text.
std::string signed_text(std::string_view host, std::string_view shard, std::string_view id,
                        std::string_view payload) {
  std::string t = "reflex entry v1";
  for (std::string_view f : {host, shard, id, payload}) {
    t += '\n';
    t += std::to_string(f.size());
    t += ':';
    t.append(f.data(), f.size());
  }
  return t;
}

}  // namespace

Key new_master_key(std::string* err) {
  char b[kKeyBytes];
  if (getrandom(b, sizeof b, 0) != static_cast<ssize_t>(sizeof b)) {
    *err = "no random bytes from the system (getrandom)";
    return "";
  }
  return std::string(b, sizeof b);
}

Key derive_host_key(const Key& master, std::string_view host) {
  return hmac(master, "reflex host key\n" + std::string(host));
}

std::string hmac_sha256_hex(std::string_view key, std::string_view msg) {
  return to_hex(hmac(key, msg));
}

std::string key_hex(const Key& k) {
  return to_hex(k);
}

std::optional<Key> read_key_file(const std::string& path, std::string* err) {
  std::string hex;
  if (!read_secret_file(path, &hex, err)) return std::nullopt;
  auto key = from_hex(hex);
  if (!key || key->size() != kKeyBytes) {
    *err = path + ": not a key (64 hex digits expected)";
    return std::nullopt;
  }
  return key;
}

std::string sign_entry(const Key& host_key, std::string_view host, std::string_view shard,
                       std::string_view id, std::string_view payload) {
  return to_hex(hmac(host_key, signed_text(host, shard, id, payload)));
}

const char* refusal_name(EntryRefusal r) {
  switch (r) {
    case EntryRefusal::none:
      return "none";
    case EntryRefusal::unsigned_entry:
      return "unsigned";
    case EntryRefusal::bad_signature:
      return "bad_signature";
    case EntryRefusal::other_host:
      return "other_host";
    case EntryRefusal::other_shard:
      return "other_shard";
    case EntryRefusal::other_device:
      return "other_device";
  }
  return "?";
}

const Key& EntryVerifier::key_of(std::string_view host) {
  auto it = keys_.find(std::string(host));
  if (it != keys_.end()) return it->second;
  if (keys_.size() >= 100000) keys_.clear();  // entries naming made-up hosts stay bounded
  return keys_.emplace(std::string(host), derive_host_key(master_, host)).first->second;
}

// Whether `host` may speak for job `job`: it has a rank in it, or the
// topology does not know the job.
bool EntryVerifier::job_admits(const std::string& job, const std::string& host,
                               const Topology& topo) {
  if (jobs_of_ != &topo) {
    job_hosts_.clear();
    for (const std::string& h : topo.host_names())
      for (const std::string& j : topo.jobs_of_host(h)) job_hosts_[j].insert(h);
    jobs_of_ = &topo;
  }
  auto it = job_hosts_.find(job);
  return it == job_hosts_.end() || it->second.contains(host);
}

EntryRefusal EntryVerifier::check(std::string_view signer, std::string_view sig,
                                  std::string_view shard, std::string_view id,
                                  std::string_view payload, const Event& ev, const Topology& topo) {
  if (signer.empty() || sig.empty()) return EntryRefusal::unsigned_entry;
  const std::string want = sign_entry(key_of(signer), signer, shard, id, payload);
  if (!same_bytes(want, sig)) return EntryRefusal::bad_signature;
  // The signature holds: the entry is the signer's. Is the event its own?
  const std::string me = topo.resolve_host(signer).value_or(std::string(signer));
  if (topo.resolve_host(ev.host).value_or(ev.host) != me) return EntryRefusal::other_host;
  if (shard_of(ev, topo) != shard) return EntryRefusal::other_shard;
  // The host a device belongs to (its own, or its rank's); "" for job-,
  // fabric- and storage-level devices.
  const std::string dh = host_of_device(ev.device, topo);
  if (!dh.empty() && topo.resolve_host(dh).value_or(dh) != me) return EntryRefusal::other_device;
  if (ev.device.rfind("job/", 0) == 0 && dh.empty() &&
      !job_admits(ev.device.substr(4, ev.device.find('/', 4) - 4), me, topo))
    return EntryRefusal::other_device;
  return EntryRefusal::none;
}

}  // namespace reflex::deploy
