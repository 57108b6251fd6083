// The agent of the deployment (`reflex agent`, one per host;
// docs/deployment.md): follows log files, the journal and the kernel's
// records, runs the same ingest as `reflex events` and publishes the
// recognized events to the bus (Redis Streams, or stdout). The command
// parses the options and loads the knowledge base and topology; this runs
// the rest.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reflex/kb.h"
#include "reflex/topology.h"

namespace reflex::deploy {

struct AgentConfig {
  std::string host;                  // this host's name (evidence names hosts/<host>/...)
  int year = 0;                      // for log formats without one
  std::optional<int64_t> boot_time;  // unix µs, for raw dmesg seconds
  std::vector<std::string> follows;  // files and directories to follow
  // A log server's trees (--follow-hosts): every subdirectory is a host (new
  // ones too), its files followed as that host's.
  std::vector<std::string> follow_hosts;
  // Followed files declared a kernel capture (every line a kernel line) or a
  // central collector (lines may name other hosts): globs on the path, or on
  // the name when the glob holds no '/'. Else the file's name decides.
  std::vector<std::string> kernel_captures, collectors;
  bool use_stdin = false;    // also read event envelopes on stdin
  bool use_journal = false;  // also read the journal through journal_command
  std::string journal_command = "journalctl -f -o json --no-pager";
  std::string kmsg_path;                // also read kernel records from here ("" = not)
  bool strict_transport = false;        // syslog text tagged 'kernel:' is not a kernel line
  bool once = false;                    // exit once everything is read and published
  std::string redis_url;                // "" = print the events on stdout
  std::string redis_password_file;      // the password, from a file (never argv)
  std::string signing_key_file;         // this host's key: entries are signed ("" = not)
  std::string signing_keys_dir;         // DIR/<host>.key: each entry signed as its event's host
  std::string state_path;               // read positions ("" = none)
  std::string spool_dir;                // "" = <state_path>.spool
  std::string spool_max = "256M";       // bytes with an optional K/M/G suffix; "0" = no spool
  size_t buffer_max = 100000;           // events held in memory
  size_t maxlen = 1000000;              // approximate length kept per event stream
  int redis_min_replicas = 0;           // replicas that must hold a batch before it counts
  size_t batch = 500;                   // events per publish round trip
  std::chrono::milliseconds poll{250};  // how often followed files are checked
  // Followed files' directories watched with inotify: an append wakes the
  // agent at once, --poll is then only the fallback. false (or inotify
  // unavailable): files are checked every --poll.
  bool inotify = true;
  std::string metrics;  // ADDR:PORT of the /metrics endpoint, "" = none
};

// Reads and publishes until SIGTERM/SIGINT (or, with once, until everything
// is read and published); logging must be set up (init_logging). The process
// exit code: 2 (after a message) when the bus, the metrics address, the state
// file, the spool, the journal or kmsg cannot be used.
int run_agent(const AgentConfig& cfg, const KnowledgeBase& kb, const Topology& topo);

}  // namespace reflex::deploy
