// `reflex watch --kb KB --topology FILE [--db FILE [--commit-interval DUR]]
//  [--settle DUR] [--skew DUR]`
// Streaming (interfaces.md §4, §7): event envelopes on stdin, one diagnosis per line
// (JSONL) on stdout for every incident revision. EOF and SIGTERM alike:
// diagnose every open incident, print, exit 0. SIGHUP reloads the topology and
// the knowledge base; a failed reload keeps the old ones and says why.
// --db: group commit (include/reflex/store.h) — every event and open storm
// reaches the file within --commit-interval of its arrival, so a kill -9
// loses at most that much.
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <tuple>

#include "cli_common.h"
#include "commands.h"
#include "reflex/compiler.h"
#include "reflex/engine.h"
#include "reflex/store.h"
#include "reflex/topology.h"
#include "reflex/values.h"
#include "watch_redis.h"

namespace reflex::cli {

namespace {

volatile sig_atomic_t g_stop = 0;
volatile sig_atomic_t g_reload = 0;

void on_signal(int sig) {
  if (sig == SIGHUP)
    g_reload = 1;
  else
    g_stop = 1;
}

void say(const std::string& msg) {
  std::fprintf(stderr, "reflex watch: %s\n", msg.c_str());
}

constexpr size_t kMaxLine = 8u << 20;  // longer envelope lines are dropped (counted)

struct Loaded {
  std::shared_ptr<const KnowledgeBase> kb;
  std::shared_ptr<const Topology> topo;
};

// Loads both or neither; *err says why.
std::optional<Loaded> load(const std::string& kb_path, const std::string& topo_path,
                           std::string* err) {
  auto kbv = load_kb(kb_path, err);
  if (!kbv) return std::nullopt;
  if (!validate_kb_for_engine(*kbv, err)) return std::nullopt;
  TopologyError terr;
  auto t = Topology::load_file(topo_path, &terr);
  if (!t) {
    *err = terr.str();
    return std::nullopt;
  }
  Loaded l;
  l.kb = std::make_shared<const KnowledgeBase>(std::move(*kbv));
  l.topo = std::move(t);
  return l;
}

}  // namespace

int run_watch(int argc, char** argv) {
  // --redis: a diagnoser of the deployment (watch_redis.cpp); stdin mode below is unchanged.
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--redis") == 0 || std::strncmp(argv[i], "--redis=", 8) == 0)
      return run_watch_redis(argc, argv);
  CLI::App app{"Read event envelopes on stdin, print diagnoses as JSONL", "reflex watch"};
  std::string kb_path, topo_path, db_path, settle, skew, commit_interval;
  bool strict = false;
  add_kb_option(app, &kb_path);
  app.add_option("--topology", topo_path, "topology.json")->required();
  app.add_option("--db", db_path, "store events and diagnoses in this SQLite database");
  app.add_option("--commit-interval", commit_interval,
                 "--db: commit at least this often while input arrives (default 1s)");
  app.add_option("--settle", settle, "late-evidence window after a symptom (default 60s)");
  app.add_option("--skew", skew, "tolerance between two different clocks (default 2s)");
  add_strict_transport_flag(app, &strict);
  std::string redis_help;  // listed for --help only: --redis is dispatched above
  app.add_option("--redis", redis_help,
                 "diagnose the shards of a Redis Streams deployment instead of stdin "
                 "(see 'reflex watch --redis URL --help')");
  if (auto rc = parse_or_exit(app, argc, argv, "reflex watch")) return *rc;
  EngineOptions opts;
  opts.ingest.strict_transport = strict;
  StoreOptions sopts;
  // The caller commits (sync_store below), under the engine's lock with its open storms.
  sopts.commit_in_append = false;
  for (auto [text, out, name] :
       {std::tuple{&settle, &opts.settle_s, "--settle"},
        std::tuple{&skew, &opts.clock_skew_s, "--skew"},
        std::tuple{&commit_interval, &sopts.commit_interval_s, "--commit-interval"}}) {
    if (text->empty()) continue;
    auto d = parse_duration_s(*text);
    if (!d || *d < 0) {
      say(std::string("bad ") + name + " '" + *text + "' (expected e.g. 500ms, 30s, 10m)");
      return 2;
    }
    *out = *d;
  }

  std::string err;
  auto loaded = load(kb_path, topo_path, &err);
  if (!loaded) {
    std::fprintf(stderr, "%s%s", err.c_str(), err.empty() || err.back() != '\n' ? "\n" : "");
    say("cannot start: bad --kb or --topology");
    return 2;
  }
  for (const std::string& n : loaded->topo->notes()) say("note: topology: " + n);

  std::unique_ptr<SqliteStore> store;
  if (!db_path.empty()) {
    store = SqliteStore::open(db_path, &err, sopts);
    if (!store) {
      say(db_path + ": " + err);
      return 2;
    }
  }

  Engine eng(loaded->kb, loaded->topo, opts);
  // A failing database (disk full, locked) is retried at every sync: say so
  // at most every 10 s, not at every chunk.
  auto last_db_error = std::chrono::steady_clock::now() - std::chrono::hours(1);
  auto db_error = [&](const std::string& e) {
    auto now = std::chrono::steady_clock::now();
    if (now - last_db_error < std::chrono::seconds(10)) return;
    last_db_error = now;
    say("--db: " + e);
  };
  // Commits when due (or now): under the engine's lock, so that the events the
  // tap staged and the storms still open are of the same instant. Never called
  // from the tap (the lock is held there).
  auto sync_store = [&](bool now) {
    if (!store) return;
    eng.with_open_storms([&](const OpenStorms& os) {
      std::string e2;
      if (!(now ? store->commit(&e2, &os) : store->sync(&e2, &os))) db_error(e2);
    });
  };
  eng.set_callback([&](const Diagnosis& d) {
    std::string line = diagnosis_to_json(d, -1);
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fflush(stdout);
    if (store) {
      StoredDiagnosis sd;
      sd.incident = d.incident;
      sd.revision = d.revision;
      sd.created = std::chrono::duration_cast<std::chrono::microseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
      sd.json = diagnosis_to_json(d, -1);
      std::string e2;
      if (!store->put_diagnosis(sd, &e2)) db_error(e2);
      sync_store(false);  // a staged diagnosis is due at once
    }
  });
  if (store)
    eng.set_event_tap([&](const Event& ev) {
      std::string e2;
      if (!store->append(ev, &e2)) db_error(e2);
    });

  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: poll() returns on a signal
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);

  // Rate-limited warning about skipped envelope lines (the counters are ingest's).
  uint64_t warned_bad = 0, too_long = 0;
  auto last_warn = std::chrono::steady_clock::now() - std::chrono::hours(1);
  auto check_bad = [&](bool force) {
    auto st = eng.stats().ingest;
    uint64_t bad = st.skipped_invalid_json + st.skipped_no_msg + too_long;
    auto now = std::chrono::steady_clock::now();
    if (bad > warned_bad && (force || now - last_warn > std::chrono::seconds(10))) {
      say("skipped " + std::to_string(bad - warned_bad) +
          " bad envelope line(s) (not JSON, no msg, or too long); " + std::to_string(bad) +
          " in total");
      warned_bad = bad;
      last_warn = now;
    }
  };

  std::string buf;
  bool discarding = false;
  char chunk[1 << 16];
  bool eof = false;
  while (!eof && !g_stop) {
    if (g_reload) {
      g_reload = 0;
      std::string rerr;
      auto fresh = load(kb_path, topo_path, &rerr);
      if (!fresh) {
        say("reload failed, keeping the old knowledge base and topology: " + rerr);
      } else if (!eng.reload(fresh->kb, fresh->topo, &rerr)) {
        say("reload failed, keeping the old knowledge base and topology: " + rerr);
      } else {
        say("reloaded " + kb_path + " and " + topo_path);
      }
    }
    struct pollfd pfd {
      0, POLLIN, 0
    };
    // Wake up when the store's next commit is due, even if stdin stays quiet.
    int timeout_ms = 1000;
    if (store)
      if (auto due = store->due_in())
        // 10 ms floor: a commit that keeps failing is not retried in a busy loop.
        timeout_ms = std::clamp(static_cast<int>(std::ceil(*due * 1000)), 10, timeout_ms);
    int pr = ::poll(&pfd, 1, timeout_ms);
    if (pr < 0) {
      if (errno == EINTR) continue;
      say(std::string("poll: ") + std::strerror(errno));
      break;
    }
    if (pr == 0) {
      eng.tick();
      sync_store(false);
      check_bad(false);
      continue;
    }
    ssize_t n = ::read(0, chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      say(std::string("read: ") + std::strerror(errno));
      break;
    }
    if (n == 0) {
      eof = true;
      break;
    }
    size_t start = 0;
    for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
      if (chunk[i] != '\n') continue;
      if (!discarding) {
        buf.append(chunk + start, i - start);
        eng.feed_envelope(buf);
      }
      discarding = false;
      buf.clear();
      start = i + 1;
    }
    if (!discarding) buf.append(chunk + start, static_cast<size_t>(n) - start);
    if (buf.size() > kMaxLine) {
      ++too_long;
      buf.clear();
      discarding = true;
    }
    sync_store(false);
    check_bad(false);
  }
  if (!buf.empty() && !discarding) eng.feed_envelope(buf);
  eng.flush();
  check_bad(true);
  sync_store(true);  // after flush() no storm is open: this writer's `storms` rows go
  return 0;
}

}  // namespace reflex::cli
