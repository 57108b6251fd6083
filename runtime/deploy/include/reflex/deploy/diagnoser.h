// A diagnoser of the deployment (`reflex watch --redis URL`, docs/deployment.md):
// owns shards of a Redis Streams deployment through leases, diagnoses each
// with an engine of its own, publishes the answers (diagnoses stream, stdout,
// Alertmanager). The command parses the options and loads the knowledge base
// and topology; this runs the rest.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "reflex/engine.h"

namespace reflex::deploy {

struct DiagnoserConfig {
  std::string redis_url;  // redis://[user[:password]@]host[:port][/db]
  std::string redis_password_file;  // the password, from a file (never argv)
  std::string verify_key_file;      // the master key: only signed, own events are taken
  std::string owner;      // this diagnoser's name in leases
  EngineOptions engine;
  int ttl_ms = 0;             // shard lease lifetime
  size_t read_batch = 0;      // stream entries per read
  int64_t retention_ms = 0;   // 0: no time-based retention
  std::string alertmanager;   // http://HOST:PORT, "" = alerts off
  double alert_resend_s = 0;  // re-send active alerts this often
  double alert_ttl_s = 0;     // resolve an incident's alerts after this long without an answer
  std::string metrics;        // ADDR:PORT of the /metrics endpoint, "" = none
};

// Runs until SIGTERM/SIGINT (logging must be set up: init_logging); then
// every open incident is answered and the leases are released. The process
// exit code: 2 (after a message) when Redis or the metrics address is bad.
int run_diagnoser(const DiagnoserConfig& cfg, std::shared_ptr<const KnowledgeBase> kb,
                  std::shared_ptr<const Topology> topo);

}  // namespace reflex::deploy
