// An agent on a central log server (`reflex agent --follow-hosts DIR`):
// rsyslog, Fluent Bit or an NFS export keeps one directory per host
// (DIR/<host>/<files>); each subdirectory is a host, new ones are picked up,
// and each file in one is followed as that host's own (its app lines are
// that host's, a line naming another host is refused unless the file is a
// declared --collector). With --signing-keys DIR each event is signed with
// the key of the host it belongs to (DIR/<host>.key, as `reflex key derive`
// writes them): the log server speaks for the hosts whose logs it holds,
// and for no other (docs/deployment.md, "Threat model").
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "reflex/deploy/keys.h"

namespace reflex::deploy::agent {

// Whether a directory name may be a host's: a DNS name's letters (letters,
// digits, '-', '.', '_'), at most 253, not starting with '.'. Others (an
// rsyslog template filled from a hostile HOSTNAME field) are skipped.
bool host_name_ok(const std::string& name);

// The host directories under the --follow-hosts roots.
class HostTree {
 public:
  // Roots made absolute as a followed file's evidence name is.
  explicit HostTree(const std::vector<std::string>& roots);
  bool empty() const { return roots_.empty(); }
  const std::vector<std::string>& roots() const { return roots_; }
  // The host directories now (root/<host>), sorted; a name that cannot be a
  // host's is skipped and said once.
  std::vector<std::string> host_dirs();
  // The host a followed file belongs to, from its evidence name (an
  // absolute path): the first component under a root when the file is
  // inside a host directory, else nullopt.
  std::optional<std::string> host_of(const std::string& evidence) const;
  size_t hosts() const { return hosts_; }

 private:
  std::vector<std::string> roots_;
  std::map<std::string, bool> refused_;  // names said once
  size_t hosts_ = 0;
};

// The hosts' keys of --signing-keys DIR, read on first use; a missing or
// unreadable key is said once and looked for again a minute later (a new
// host's key installed while the agent runs).
class HostKeys {
 public:
  explicit HostKeys(std::string dir) : dir_(std::move(dir)) {}
  // The key of `host`, or null (the entry then goes unsigned, counted).
  const Key* key_of(const std::string& host);

 private:
  struct Slot {
    std::optional<Key> key;
    std::chrono::steady_clock::time_point tried;
  };
  std::string dir_;
  std::map<std::string, Slot> keys_;  // bounded: cleared past 100,000 hosts
};

}  // namespace reflex::deploy::agent
