// The options every long-running command (agent, watch --redis) shares:
// logging and the metrics endpoint, worded once. The deployment library
// takes them parsed (reflex/deploy/daemon.h), without a CLI parser of its own.
#pragma once

#include <CLI/CLI.hpp>

#include "reflex/deploy/daemon.h"

namespace reflex::cli {

inline void add_daemon_options(CLI::App& app, deploy::DaemonOptions* o) {
  app.add_option("--log-level", o->log_level, "debug, info, warn or error (default info)")
      ->check(CLI::IsMember({"debug", "info", "warn", "error"}));
  app.add_option("--log-format", o->log_format, "text or json (one JSON object a line)")
      ->check(CLI::IsMember({"text", "json"}));
  app.add_option("--metrics", o->metrics,
                 "serve Prometheus metrics on ADDR:PORT (e.g. 127.0.0.1:9464) at /metrics");
}

}  // namespace reflex::cli
