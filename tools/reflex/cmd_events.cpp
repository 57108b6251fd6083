// `reflex events [--kb KB] [--topology FILE] [--stats] [--strict-transport]
//  [--db FILE [--commit-interval DUR]] BUNDLE`
// (interfaces.md §7): what Reflex recognized in an incident bundle, one JSON object a
// line, sorted by time (stable by ingest order). --db stores the events as
// they are recognized (ingest order), group-committed like `watch`'s. Also the hidden helper
// `--export-patterns re2|ere` that prints every signature's first-line
// pattern (benchmarks compare against grep/rg with them).
#include <pthread.h>
#include <sched.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <latch>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "inputs.h"
#include "line_arena.h"
#include "reflex/compiler.h"
#include "reflex/event_json.h"
#include "reflex/ingest.h"
#include "reflex/store.h"
#include "reflex/topology.h"
#include "reflex/values.h"

namespace reflex::cli {

namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

// A message of this command, as a whole stderr line.
std::string note_line(const std::string& msg) {
  return "reflex events: " + msg + "\n";
}

void note(const std::string& msg) {
  std::fputs(note_line(msg).c_str(), stderr);
}

// Where an event's output line sorts, and where it is in Recognized::text.
struct LineKey {
  std::optional<TimeUs> wall;
  std::optional<double> mono;
  uint64_t seq = 0;
  LineArena::Ref text;
};

// Wall-timed events first (by wall time), then events known only by seconds
// since boot (by that), ties in ingest order.
bool event_before(const LineKey& a, const LineKey& b) {
  bool aw = a.wall.has_value(), bw = b.wall.has_value();
  if (aw != bw) return aw;
  if (aw && *a.wall != *b.wall) return *a.wall < *b.wall;
  if (!aw) {
    double am = a.mono.value_or(0), bm = b.mono.value_or(0);
    if (am != bm) return am < bm;
  }
  return a.seq < b.seq;
}

// Paths are shown as the user named the files (in_set.map_*).
ojson stats_json(const IngestStats& s, const InputSet& in_set) {
  ojson j;
  j["lines"] = s.lines;
  j["bytes"] = s.bytes;
  j["matched_lines"] = s.matched_lines;
  j["events"] = s.events;
  j["skipped_invalid_json"] = s.skipped_invalid_json;
  j["skipped_no_msg"] = s.skipped_no_msg;
  j["invalid_utf8"] = s.invalid_utf8;
  j["nul_bytes"] = s.nul_bytes;
  j["truncated_long_lines"] = s.truncated_long_lines;
  j["unknown_hosts"] = s.unknown_hosts;
  j["placeholder_devices"] = s.placeholder_devices;
  j["no_timestamp"] = s.no_timestamp;
  j["implausible_time"] = s.implausible_time;
  j["folded_by_dedup"] = s.folded_by_dedup;
  j["below_aggregate"] = s.below_aggregate;
  j["below_baseline"] = s.below_baseline;
  j["incomplete_multiline"] = s.incomplete_multiline;
  j["prefilter_rejects"] = s.prefilter_rejects;
  j["rejected_by_when"] = s.rejected_by_when;
  j["transport_mismatch"] = s.transport_mismatch;
  j["skipped_files"] = s.skipped_files;
  j["precompiled_patterns"] = s.precompiled_patterns;
  j["per_signature_hits"] = s.per_signature_hits;
  ojson transport_refused = ojson::object();
  for (const auto& [file, n] : s.transport_refused_by_file)
    transport_refused[in_set.map_text(file)] = n;
  j["transport_refused_by_file"] = transport_refused;
  ojson refused = ojson::object();
  for (const auto& [file, r] : s.refused_claims_by_file)
    refused[in_set.map_text(file)] = {{"count", r.count},
                                      {"why", r.why},
                                      {"first", in_set.map_evidence(r.evidence)},
                                      {"would_be", r.would_be},
                                      {"line", r.line}};
  j["refused_claims_by_file"] = refused;
  j["unrecognized_lines"] = s.unrecognized_lines;
  j["unrecognized_by_suspect"] = s.unrecognized_by_suspect;
  ojson samples = ojson::array();
  for (const auto& u : s.unrecognized_samples)
    samples.push_back(
        {{"suspect", u.suspect}, {"evidence", in_set.map_evidence(u.evidence)}, {"line", u.line}});
  j["unrecognized_samples"] = samples;
  return j;
}

// --export-patterns: every signature's first-line pattern in the dialect asked.
void print_patterns(const KnowledgeBase& kb, const std::string& export_fmt) {
  PatternDialect d = export_fmt == "ere"       ? PatternDialect::posix_ere
                     : export_fmt == "unnamed" ? PatternDialect::unnamed
                                               : PatternDialect::re2;
  for (const std::string& p : export_patterns(kb, d)) std::printf("%s\n", p.c_str());
}

// --topology, else BUNDLE/topology.json, else an empty topology (said so);
// null (after a message) when the file does not load. Messages go to *said.
std::unique_ptr<Topology> events_topology(std::string topo_path, const InputSet& in_set,
                                          const std::string& job, std::vector<std::string>* said) {
  const std::string& bundle = in_set.bundle_dir();
  std::error_code ec;
  if (topo_path.empty() && fs::exists(fs::path(bundle) / "topology.json", ec))
    topo_path = (fs::path(bundle) / "topology.json").string();
  if (topo_path.empty()) {
    // Log files given by path are gathered in a temporary bundle: its name says nothing.
    said->push_back(note_line(in_set.is_files()
                                  ? "no topology (no --topology): every device is a placeholder"
                                  : "no topology (no --topology, no " + bundle +
                                        "/topology.json): every device is a placeholder"));
    auto topo = Topology::empty();
    if (!job.empty()) topo->assume_one_job(job);
    return topo;
  }
  TopologyError terr;
  auto topo = Topology::load_file(topo_path, &terr);
  if (!topo) said->push_back(terr.str() + "\n");
  std::string err;
  if (topo && !apply_job_option(topo.get(), job, &err)) {
    said->push_back(note_line(err));
    return nullptr;
  }
  return topo;
}

// A thread for fn on a CPU other than this one's, when there is another:
// left to the scheduler, a new thread started on this (busy) CPU about one
// time in ten and waited a tick, ~3 ms, for the idle one.
std::thread start_on_another_cpu(std::function<void()> fn) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  const int here = sched_getcpu();
  if (here >= 0 && here < CPU_SETSIZE && sched_getaffinity(0, sizeof allowed, &allowed) == 0 &&
      CPU_COUNT(&allowed) > 1)
    CPU_CLR(here, &allowed);
  else
    CPU_ZERO(&allowed);
  // Placed from here, not by the thread (it may not run before the tick),
  // and before it can end: the handle of an ended thread names the caller.
  auto placed = std::make_shared<std::latch>(1);
  std::thread t([fn = std::move(fn), placed] {
    placed->wait();
    fn();
  });
  if (CPU_COUNT(&allowed) > 0) pthread_setaffinity_np(t.native_handle(), sizeof allowed, &allowed);
  placed->count_down();
  return t;
}

// What `events` reads besides the knowledge base: the inputs, the topology
// and the bundle's listing. With --threads they are made on a second thread
// while the KB decodes (the topology and listing of the bench's 16-host
// bundle: ~1.5 ms of the ~12 ms before its walk starts, on one core until
// then); what they say is kept in `said` and printed after the KB's own
// messages, so the output is that of one thread.
struct EventsInputs {
  InputSet in_set;
  std::vector<std::string> said;   // whole stderr lines, in order
  std::unique_ptr<Topology> topo;  // null: said ends with why (exit 2)
  std::optional<BundleListing> listing;
  void make(const std::vector<std::string>& inputs, const InputOptions& host,
            const std::string& topo_path) {
    try {
      make_or_throw(inputs, host, topo_path);
    } catch (const std::exception& e) {  // on the second thread, say it, as main would
      said.push_back(note_line(e.what()));
      topo.reset();
      listing.reset();
    }
  }
  void make_or_throw(const std::vector<std::string>& inputs, const InputOptions& host,
                     const std::string& topo_path) {
    std::string err;
    if (!in_set.prepare(inputs, host, &err)) {
      said.push_back(note_line(err));
      return;
    }
    for (const std::string& n : in_set.notes()) said.push_back(note_line("note: input: " + n));
    topo = events_topology(topo_path, in_set, host.job, &said);
    if (!topo) return;
    for (const std::string& n : topo->notes()) said.push_back(note_line("note: " + n));
    listing = BundleListing::of(in_set.bundle_dir());
  }
};

// Each event's output line is formatted as the event arrives, its data
// still in cache, and the event is then dropped: only its sort key stays.
// Formatting them all at the end, in time order, cost ~2 us an event in
// cache misses (8.5 ms for 7,745 events, a twentieth of a --threads 2 run's
// wall time, on one core after the walk), plus freeing the events.
struct Recognized {
  LineArena text;              // the lines, ingest order, each ending in '\n'
  std::vector<LineKey> lines;  // ingest order, then sorted by time
  IngestStats stats;
};

// Ingests the bundle, storing every event in *store as it is recognized when
// there is one (a store that fails once is dropped, said once; the output goes on).
// With plain log files as input, evidence names the files as the user did.
std::optional<Recognized> recognize(const KnowledgeBase& kb, const Topology& topo,
                                    const IngestOptions& opts, BundleListing listing,
                                    const InputSet& in_set, std::unique_ptr<SqliteStore> store) {
  const std::string bundle = listing.dir;
  auto ingp = std::make_unique<Ingestor>(kb, topo, opts);
  Ingestor& ing = *ingp;
  const EventLineWriter writer(&kb);
  Recognized out;
  auto drop_store = [&](const std::string& e) {
    note("--db: " + e);
    store.reset();
  };
  ing.set_sink([&](Event&& ev) {
    std::string e2;
    if (store && !store->append(ev, &e2)) drop_store(e2);
    LineKey& k = out.lines.emplace_back();
    k.wall = ev.time.wall;
    k.mono = ev.time.mono;
    k.seq = ev.seq;
    if (in_set.is_files()) {
      const std::string evidence = in_set.map_evidence(ev.evidence);
      k.text = out.text.add(writer.line(ev, &evidence));
    } else {
      k.text = out.text.add(writer.line(ev));
    }
  });
  // read_bundle is one call for the whole bundle: its progress hook is where
  // the store commits on time (under the ingestor's lock, with the open storms).
  if (store)
    ing.set_progress([&](const OpenStorms& os) {
      std::string e2;
      if (store && !store->sync(&e2, &os)) drop_store(e2);
    });
  std::string err;
  if (!ing.read_bundle(std::move(listing), &err)) {
    note(bundle + ": " + err);
    return std::nullopt;
  }
  ing.finish();
  ing.with_open_storms([&](const OpenStorms& os) {
    std::string e2;
    if (store && !store->commit(&e2, &os)) drop_store(e2);
  });
  std::stable_sort(out.lines.begin(), out.lines.end(), event_before);
  out.stats = ing.stats_snapshot();
  leave_to_exit(std::move(ingp));
  return out;
}

// The lines in time order on stdout, in 64 KiB writes.
void write_events(const Recognized& rec) {
  std::string out;
  out.reserve(1 << 17);
  for (const LineKey& k : rec.lines) {
    out.append(rec.text.view(k.text));
    if (out.size() > (1 << 16)) {
      std::fwrite(out.data(), 1, out.size(), stdout);
      out.clear();
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
}

}  // namespace

int run_events(int argc, char** argv) {
  CLI::App app{"Print what Reflex recognized in an incident bundle, one JSON object a line",
               "reflex events"};
  std::string kb_path, topo_path, export_fmt, db_path, commit_interval;
  InputOptions host;  // --host, --year, --timezone
  std::vector<std::string> inputs;
  bool want_stats = false, strict = false, exit_code = false;
  unsigned threads = 1;
  add_kb_option(app, &kb_path);
  app.add_option("--topology", topo_path, "topology.json (default: BUNDLE/topology.json)");
  app.add_flag("--stats", want_stats, "print ingest counters to stderr as JSON");
  bool all_unrecognized = false;
  app.add_flag("--unrecognized", all_unrecognized,
               "with --stats: keep every line that looks like fault evidence but matches no "
               "signature (up to 100,000), not the first 10");
  add_strict_transport_flag(app, &strict);
  app.add_option("--threads", threads, "read a bundle's files with N threads (same output)")
      ->check(CLI::Range(1u, 256u));
  app.add_option("--db", db_path, "also store the events in this SQLite database");
  app.add_option("--commit-interval", commit_interval,
                 "--db: commit at least this often while events arrive (default 1s)");
  app.add_option("--export-patterns", export_fmt,
                 "print every signature's first-line pattern and exit: re2 (as written), "
                 "unnamed (named groups made plain, for rg -f) or ere (for grep -E -f)")
      ->check(CLI::IsMember({"re2", "unnamed", "ere"}));
  add_exit_code_flag(app, &exit_code, "nothing is recognized");
  add_input_options(app, &host, &inputs);
  if (auto rc = parse_or_exit(app, argc, argv, "reflex events")) return *rc;

  StoreOptions sopts;
  // Commits happen in the ingest progress hook and at the end, with the open storms.
  sopts.commit_in_append = false;
  if (!commit_interval.empty()) {
    auto d = parse_duration_s(commit_interval);
    if (!d || *d < 0) {
      note("bad --commit-interval '" + commit_interval + "' (expected e.g. 500ms, 1s)");
      return 2;
    }
    sopts.commit_interval_s = *d;
  }

  if (!resolve_kb(&kb_path, "reflex events")) return 2;
  std::string err;
  EventsInputs in;
  // Recognition only: the rules, the tests and the signatures' examples are
  // read past, not decoded.
  const KbParts parts{.rules = false, .tests = false, .examples = false};
  std::optional<KnowledgeBase> kb;
  if (threads > 1 && export_fmt.empty()) {
    std::thread ahead = start_on_another_cpu([&] { in.make(inputs, host, topo_path); });
    kb = load_kb(kb_path, &err, parts);
    ahead.join();
  } else {
    kb = load_kb(kb_path, &err, parts);
  }
  if (!kb) {
    std::fprintf(stderr, "%s%s", err.c_str(), err.empty() || err.back() != '\n' ? "\n" : "");
    note("cannot load knowledge base " + kb_path);
    return 2;
  }
  if (!export_fmt.empty()) {
    print_patterns(*kb, export_fmt);
    return 0;
  }
  if (threads <= 1) in.make(inputs, host, topo_path);
  for (const std::string& line : in.said) std::fputs(line.c_str(), stderr);
  if (!in.listing) return 2;
  const InputSet& in_set = in.in_set;
  std::unique_ptr<Topology>& topo = in.topo;
  std::unique_ptr<SqliteStore> store;
  if (!db_path.empty()) {
    store = SqliteStore::open(db_path, &err, sopts);
    if (!store) {
      note(err);
      return 2;
    }
  }
  IngestOptions opts;
  opts.strict_transport = strict;
  opts.threads = threads;
  if (all_unrecognized) {
    opts.unrecognized_samples = 100000;
    opts.unrecognized_per_suspect = 100000;
  }
  std::optional<Recognized> rec =
      recognize(*kb, *topo, opts, std::move(*in.listing), in_set, std::move(store));
  if (!rec) return 2;
  write_events(*rec);
  for (const std::string& n : rec->stats.notes) note("note: " + in_set.map_text(n));
  if (want_stats)
    std::fprintf(stderr, "%s\n",
                 stats_json(rec->stats, in_set)
                     .dump(2, ' ', false, ojson::error_handler_t::replace)
                     .c_str());
  const bool none = rec->lines.empty();
  leave_to_exit(std::make_unique<Recognized>(std::move(*rec)));
  leave_to_exit(std::move(topo));
  leave_to_exit(std::make_unique<KnowledgeBase>(std::move(*kb)));
  return exit_code && none ? 1 : 0;
}

}  // namespace reflex::cli
