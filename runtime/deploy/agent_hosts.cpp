// The host directories of a log server and their keys (agent_hosts.h).
#include "agent_hosts.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include "agent_reading.h"
#include "reflex/deploy/daemon.h"

namespace reflex::deploy::agent {

namespace fs = std::filesystem;

bool host_name_ok(const std::string& name) {
  if (name.empty() || name.size() > 253 || name[0] == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_';
  });
}

HostTree::HostTree(const std::vector<std::string>& roots) {
  for (const std::string& r : roots) {
    std::string abs = Reading::file_evidence(r);
    while (abs.size() > 1 && abs.back() == '/') abs.pop_back();
    roots_.push_back(abs);
  }
}

std::vector<std::string> HostTree::host_dirs() {
  std::vector<std::string> out;
  for (const std::string& root : roots_) {
    std::error_code ec;
    for (const auto& de : fs::directory_iterator(root, ec)) {
      std::string name = de.path().filename().string();
      struct stat st {};
      if (name.empty() || name[0] == '.' || ::stat(de.path().c_str(), &st) != 0 ||
          !S_ISDIR(st.st_mode))
        continue;
      if (!host_name_ok(name)) {
        if (refused_.size() < 10000 && !refused_[name])
          log(Level::warn, root + "/" + name.substr(0, 80) +
                               ": not a host name (letters, digits, '-', '.', '_'), not followed");
        refused_[name] = true;
        continue;
      }
      out.push_back(root + "/" + name);
    }
    if (ec) log_limited(Level::warn, "hosts:" + root, root + ": " + ec.message());
  }
  std::sort(out.begin(), out.end());
  hosts_ = out.size();
  return out;
}

std::optional<std::string> HostTree::host_of(const std::string& evidence) const {
  for (const std::string& root : roots_) {
    if (evidence.size() <= root.size() + 1 || evidence.compare(0, root.size(), root) != 0 ||
        evidence[root.size()] != '/')
      continue;
    size_t start = root.size() + 1, slash = evidence.find('/', start);
    if (slash == std::string::npos) continue;  // a file in the root itself: no host's
    std::string host = evidence.substr(start, slash - start);
    if (host_name_ok(host)) return host;
  }
  return std::nullopt;
}

const Key* HostKeys::key_of(const std::string& host) {
  auto now = std::chrono::steady_clock::now();
  auto it = keys_.find(host);
  if (it != keys_.end() && (it->second.key || now - it->second.tried < std::chrono::minutes(1)))
    return it->second.key ? &*it->second.key : nullptr;
  if (it == keys_.end()) {
    if (keys_.size() >= 100000) keys_.clear();
    it = keys_.emplace(host, Slot{}).first;
  }
  it->second.tried = now;
  if (!host_name_ok(host)) return nullptr;  // never a path outside the directory
  std::string err;
  it->second.key = read_key_file(dir_ + "/" + host + ".key", &err);
  if (!it->second.key)
    log_limited(Level::warn, "key:" + host,
                "--signing-keys: " + err + " (events of " + host +
                    " go unsigned: diagnosers with --verify-key refuse them)");
  return it->second.key ? &*it->second.key : nullptr;
}

}  // namespace reflex::deploy::agent
