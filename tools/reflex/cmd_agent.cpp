// `reflex agent`: one per host (docs/deployment.md). Parses the command
// line and loads the knowledge base and topology; following the logs and
// publishing the events is the deployment library's (reflex/deploy/agent.h).
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "daemon_options.h"
#include "reflex/compiler.h"
#include "reflex/deploy/agent.h"
#include "reflex/deploy/daemon.h"
#include "reflex/time.h"
#include "reflex/topology.h"
#include "reflex/values.h"

namespace reflex::cli {

namespace {

using deploy::Level;
using deploy::log;

// The defaults that depend on the machine: this host's name, this year.
void agent_defaults(std::string* host, int* year) {
  if (host->empty()) {
    char h[256] = {0};
    gethostname(h, sizeof h - 1);
    *host = h;
  }
  if (*year == 0) {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    *year = tm.tm_year + 1900;
  }
}

// `reflex agent`'s command line: what the library takes (cfg), and what is
// parsed or loaded here first.
struct AgentOptions {
  std::string kb_path, topo_path, boot_time, poll_s = "250ms";
  bool no_inotify = false;
  deploy::AgentConfig cfg;
  deploy::DaemonOptions dopts;
};

void add_agent_options(CLI::App& app, AgentOptions* o) {
  add_kb_option(app, &o->kb_path);
  app.add_option("--topology", o->topo_path, "topology.json")->required();
  app.add_option("--host", o->cfg.host, "this host's name (default: the system's host name)");
  app.add_option("--follow", o->cfg.follows,
                 "a log file (followed across rename and truncation) or a directory (every "
                 "file in it, new ones too; *.gz rotations finish the file they were "
                 "compressed from); repeatable");
  app.add_option("--follow-hosts", o->cfg.follow_hosts,
                 "a log server's directory of hosts (rsyslog's /var/log/remote/%FROMHOST%/): "
                 "every subdirectory is a host (new ones too), each file in it followed as "
                 "that host's own; repeatable")
      ->allow_extra_args(false);
  app.add_flag("--stdin", o->cfg.use_stdin,
               "also read event envelopes (interfaces.md §4) on stdin");
  app.add_flag("--journal", o->cfg.use_journal,
               "also read the journal (journalctl -f -o json), continuing after the saved cursor");
  app.add_option("--journal-command", o->cfg.journal_command,
                 "the command that prints journal entries as JSON lines (default "
                 "'journalctl -f -o json --no-pager'; --after-cursor is appended)");
  app.add_option("--kmsg", o->cfg.kmsg_path,
                 "also read the kernel's records from /dev/kmsg (or PATH: a file of records in "
                 "its format), continuing after the saved SEQ; times: boot time (/proc/stat, or "
                 "--boot-time) + the record's")
      ->expected(0, 1);
  app.add_option("--redis", o->cfg.redis_url,
                 "publish to Redis Streams: redis://[user[:password]@]host[:port][/db], or "
                 "through Sentinel: redis+sentinel://[user[:password]@]host[:port][,...]/NAME "
                 "(default: print the events on stdout)");
  add_redis_password_option(app, &o->cfg.redis_password_file);
  app.add_option("--signing-key", o->cfg.signing_key_file,
                 "this host's key (`reflex key derive`): every entry is signed, so diagnosers "
                 "with --verify-key take from this agent only events of this host");
  app.add_option("--signing-keys", o->cfg.signing_keys_dir,
                 "a directory of hosts' keys (DIR/<host>.key, `reflex key derive`): each entry "
                 "is signed with the key of its event's host (a log server's agent, "
                 "--follow-hosts)");
  app.add_option("--redis-min-replicas", o->cfg.redis_min_replicas,
                 "a batch counts as delivered (positions advance) only once this many replicas "
                 "hold it (WAIT, 1 s); else it is kept and sent again (default 0; 1 with Sentinel)")
      ->check(CLI::Range(0, 16));
  app.add_option("--state", o->cfg.state_path, "remember read positions in this file");
  app.add_option("--year", o->cfg.year, "year for log formats without one (default: this year)");
  app.add_option("--boot-time", o->boot_time,
                 "ISO-8601 boot time for raw dmesg seconds (a boot_time file beside the log wins)");
  app.add_option("--buffer", o->cfg.buffer_max,
                 "events held in memory while the bus is unreachable; beyond it they go to the "
                 "spool, and reading pauses only when that is full too (default 100000)");
  app.add_option("--spool-dir", o->cfg.spool_dir,
                 "the on-disk spool beyond the memory buffer (default: <--state>.spool; no "
                 "spool without --state or --spool-dir)");
  app.add_option("--spool-max", o->cfg.spool_max,
                 "the spool's size bound, bytes with an optional K/M/G suffix (default 256M; "
                 "0: no spool)");
  app.add_option("--batch", o->cfg.batch, "events per publish round trip (default 500)");
  app.add_option("--maxlen", o->cfg.maxlen,
                 "approximate length kept per event stream (default 1000000)");
  app.add_option("--poll", o->poll_s, "how often followed files are checked (default 250ms)");
  app.add_flag("--no-inotify", o->no_inotify,
               "check followed files every --poll only (default: inotify wakes at an append)");
  app.add_flag("--once", o->cfg.once,
               "exit once every file is read to its end, stdin is at EOF and all is published");
  app.add_option("--kernel-capture", o->cfg.kernel_captures,
                 "a followed file that is a kernel capture: every line of it is a kernel line "
                 "(a glob on the path, or on the name; repeatable). Without it only dmesg*, "
                 "*kern*, messages*, console*, ... are, and a kernel-shaped line elsewhere "
                 "(job output) is refused")
      ->allow_extra_args(false);
  app.add_option("--collector", o->cfg.collectors,
                 "a followed file that is a central collector (a syslog server's file): its "
                 "lines may name other hosts (a glob; repeatable). Without it a line naming "
                 "another host is refused")
      ->allow_extra_args(false);
  add_strict_transport_flag(app, &o->cfg.strict_transport);
  add_daemon_options(app, &o->dopts);
}

}  // namespace

int run_agent(int argc, char** argv) {
  CLI::App app{"Follow this host's logs, recognize events, publish them for the diagnosers",
               "reflex agent"};
  AgentOptions o;
  add_agent_options(app, &o);
  if (auto rc = parse_or_exit(app, argc, argv, "reflex agent")) return *rc;

  deploy::AgentConfig& c = o.cfg;
  std::string err;
  if (!deploy::init_logging("reflex-agent", o.dopts, &err)) {
    std::fprintf(stderr, "reflex agent: %s\n", err.c_str());
    return 2;
  }
  auto poll_d = parse_duration_s(o.poll_s);
  if (!poll_d || *poll_d <= 0 || c.batch == 0 || c.buffer_max == 0) {
    log(Level::error, "bad --poll, --batch or --buffer");
    return 2;
  }
  if (app.count("--kmsg") > 0 && c.kmsg_path.empty()) c.kmsg_path = "/dev/kmsg";
  if (c.follows.empty() && c.follow_hosts.empty() && !c.use_stdin && !c.use_journal &&
      c.kmsg_path.empty()) {
    log(Level::error,
        "nothing to read: give --follow PATH, --follow-hosts DIR, --journal, --kmsg and/or "
        "--stdin");
    return 2;
  }
  agent_defaults(&c.host, &c.year);
  if (!resolve_kb(&o.kb_path, "reflex agent")) return 2;
  auto kb = load_kb(o.kb_path, &err, KbParts{.tests = false, .examples = false});
  if (!kb) {
    std::fprintf(stderr, "%s%s", err.c_str(), err.empty() || err.back() != '\n' ? "\n" : "");
    log(Level::error, "cannot load knowledge base " + o.kb_path);
    return 2;
  }
  TopologyError terr;
  auto topo = Topology::load_file(o.topo_path, &terr);
  if (!topo) {
    log(Level::error, terr.str());
    return 2;
  }
  if (!o.boot_time.empty()) {
    c.boot_time = parse_rfc3339(o.boot_time);
    if (!c.boot_time) {
      log(Level::error, "bad --boot-time '" + o.boot_time + "' (expected ISO-8601)");
      return 2;
    }
  }
  c.poll = std::chrono::milliseconds(static_cast<int>(*poll_d * 1000));
  c.inotify = !o.no_inotify;
  c.metrics = o.dopts.metrics;
  return deploy::run_agent(c, *kb, *topo);
}

}  // namespace reflex::cli
