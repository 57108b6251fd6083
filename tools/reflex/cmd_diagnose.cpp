// `reflex diagnose [--kb KB] [--topology FILE] [--format json|jsonl|text|dot|svg]
//                  [--events FILE|-] [--settle DUR] [--skew DUR] [--host H] INPUT...`
// Batch diagnosis of an incident bundle (interfaces.md §3, §5, §7) — a directory, a tar
// archive of one, or plain log files and `-` (stdin) as SREs have them — or of
// the JSONL that `reflex events` printed (so matching can run beside each
// host's log shipper and only events travel). Exit 0 even with no root cause
// (with --exit-code: 1 when no incident has one); 2 for bad input.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "inputs.h"
#include "reflex/compiler.h"
#include "reflex/engine.h"
#include "reflex/topology.h"
#include "reflex/values.h"

namespace reflex::cli {

namespace {

namespace fs = std::filesystem;

void say(const std::string& msg) {
  std::fprintf(stderr, "reflex diagnose: %s\n", msg.c_str());
}

bool parse_dur(const std::string& text, const char* opt, double* out) {
  if (text.empty()) return true;
  auto d = parse_duration_s(text);
  if (!d || *d < 0) {
    say(std::string("bad ") + opt + " '" + text + "' (expected e.g. 500ms, 30s, 10m)");
    return false;
  }
  *out = *d;
  return true;
}

// Exit code 2 with a message when the inputs are missing or both read stdin.
std::optional<int> check_inputs(const std::vector<std::string>& inputs,
                                const std::string& events_path) {
  if (inputs.empty() && events_path.empty()) {
    say("missing input: an incident bundle directory, a .tar.gz of one, log files or - (stdin); "
        "or --events FILE");
    return 2;
  }
  if (!inputs.empty() && events_path == "-" &&
      std::find(inputs.begin(), inputs.end(), "-") != inputs.end()) {
    say("standard input cannot be both --events - and a log input");
    return 2;
  }
  return std::nullopt;
}

// The KB, checked for what the engine needs; null (after a message) when not.
std::shared_ptr<const KnowledgeBase> load_engine_kb(const std::string& kb_path) {
  std::string err;
  std::optional<KnowledgeBase> kbv =
      load_kb(kb_path, &err, KbParts{.tests = false, .examples = false});
  if (!kbv) {
    std::fprintf(stderr, "%s%s", err.c_str(), err.empty() || err.back() != '\n' ? "\n" : "");
    say("cannot load knowledge base " + kb_path);
    return nullptr;
  }
  if (!validate_kb_for_engine(*kbv, &err)) {
    say(kb_path + ": " + err);
    return nullptr;
  }
  return std::make_shared<const KnowledgeBase>(std::move(*kbv));
}

// --topology, else BUNDLE/topology.json, else an empty topology (with a note
// saying so); null (after a message) when the file does not load.
std::shared_ptr<const Topology> load_topology(std::string topo_path, const std::string& bundle,
                                              std::vector<std::string>* notes,
                                              const std::string& job) {
  std::error_code ec;
  if (topo_path.empty() && !bundle.empty() && fs::exists(fs::path(bundle) / "topology.json", ec))
    topo_path = (fs::path(bundle) / "topology.json").string();
  if (topo_path.empty()) {
    notes->push_back(
        "no topology (no --topology, no BUNDLE/topology.json): every device is "
        "a placeholder, relations hold by host only, and the input's hosts are taken as one job");
    say("note: " + notes->back());
    auto t = Topology::empty();
    t->assume_one_job(job);
    return t;
  }
  TopologyError terr;
  auto t = Topology::load_file(topo_path, &terr);
  if (!t) {
    std::fprintf(stderr, "%s\n", terr.str().c_str());
    return t;
  }
  std::string err;
  if (!apply_job_option(t.get(), job, &err)) {
    say(err);
    return nullptr;
  }
  t->assume_one_job();
  if (t->one_job() && t->host_count() > 1 && job.empty())
    notes->push_back("the topology declares no job: the input's hosts are taken as one job");
  return t;
}

// Diagnoses the JSONL `reflex events` printed; unreadable lines are counted
// (the first five named) and noted in the diagnosis.
std::optional<std::vector<Diagnosis>> diagnose_event_stream(const std::string& events_path,
                                                            const KnowledgeBase& kb,
                                                            const Topology& topo,
                                                            const EngineOptions& opts,
                                                            std::vector<std::string>* notes) {
  std::ifstream file;
  std::istream* in = &std::cin;
  if (events_path != "-") {
    file.open(events_path, std::ios::binary);
    if (!file) {
      say(events_path + ": cannot open");
      return std::nullopt;
    }
    in = &file;
  }
  std::vector<Event> events;
  std::string line, err;
  uint64_t n = 0, bad = 0;
  while (std::getline(*in, line)) {
    ++n;
    if (line.empty() || line.find_first_not_of(" \t\r") == std::string::npos) continue;
    Event ev;
    if (!event_from_json(line, kb, topo, &ev, &err)) {
      if (++bad <= 5) say(events_path + ":" + std::to_string(n) + ": skipped: " + err);
      continue;
    }
    ev.seq = n;
    events.push_back(std::move(ev));
  }
  if (bad > 0) {
    say(std::to_string(bad) + " bad event line(s) skipped");
    notes->push_back(std::to_string(bad) + " unreadable event line(s) were skipped");
  }
  return diagnose_events(kb, topo, std::move(events), opts);
}

// "reading N files, M MB": what a long read is about to do.
void announce_bundle_size(const std::string& bundle) {
  uintmax_t bytes = 0, files = 0;
  std::error_code walk_ec;
  for (auto it = std::filesystem::recursive_directory_iterator(bundle, walk_ec);
       !walk_ec && it != std::filesystem::recursive_directory_iterator(); it.increment(walk_ec))
    if (it->is_regular_file(walk_ec)) {
      ++files;
      const uintmax_t size = it->file_size(walk_ec);
      if (walk_ec)
        walk_ec.clear();  // unreadable size: count the file, not its bytes
      else
        bytes += size;
    }
  std::fprintf(stderr, "reflex diagnose: reading %ju files, %.1f MB ...\n", files,
               static_cast<double>(bytes) / 1e6);
}

// Reads and diagnoses a bundle directory; the ingest's notes join *notes.
std::optional<std::vector<Diagnosis>> diagnose_bundle(
    const std::string& bundle, const std::shared_ptr<const KnowledgeBase>& kb,
    const std::shared_ptr<const Topology>& topo, const EngineOptions& opts,
    std::vector<std::string>* notes) {
  Engine eng(kb, topo, opts);
  // A 12,500-host bundle takes tens of seconds: on a terminal, say what is
  // happening (stages with sizes and times); never when stderr is a file.
  const bool progress = isatty(STDERR_FILENO) != 0;
  const auto t0 = std::chrono::steady_clock::now();
  auto secs = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  if (progress) announce_bundle_size(bundle);
  std::string err;
  if (!eng.read_bundle(bundle, &err)) {
    say(bundle + ": " + err);
    return std::nullopt;
  }
  if (progress) {
    EngineStats st = eng.stats();
    std::fprintf(stderr, "reflex diagnose: %ju lines read, %ju events in %.1f s; diagnosing ...\n",
                 static_cast<uintmax_t>(st.ingest.lines), static_cast<uintmax_t>(st.ingest.events),
                 secs());
  }
  std::vector<Diagnosis> ds = eng.diagnose_all();
  if (progress)
    std::fprintf(stderr, "reflex diagnose: %zu incident(s) in %.1f s\n", ds.size(), secs());
  for (const std::string& n : eng.stats().ingest.notes) notes->push_back(n);
  return ds;
}

// Every incident carries the run's notes; with plain log files as input,
// evidence and notes name the files as the user did.
void finish_diagnoses(std::vector<Diagnosis>& ds, const std::vector<std::string>& notes,
                      const InputSet& in_set) {
  for (auto& d : ds)
    for (auto& n : notes) d.notes.push_back(n);
  if (!in_set.is_files()) return;
  for (auto& d : ds) {
    if (d.trigger) d.trigger->evidence = in_set.map_evidence(d.trigger->evidence);
    for (auto& rc : d.root_causes)
      for (auto& l : rc.chain) l.ev.evidence = in_set.map_evidence(l.ev.evidence);
    for (auto& u : d.unexplained) u.evidence = in_set.map_evidence(u.evidence);
    for (auto& n : d.notes) n = in_set.map_text(n);
  }
}

void print_diagnoses(const std::vector<Diagnosis>& ds, const std::string& format,
                     const Topology& topo) {
  std::string out;
  if (format == "text")
    out = diagnoses_to_text(ds);
  else if (format == "dot")
    out = diagnoses_to_dot(ds);
  else if (format == "jsonl")
    out = diagnoses_to_jsonl(ds);
  else if (format == "svg")
    out = diagnoses_to_svg(ds, &topo);
  else
    out = diagnoses_to_json(ds, 2) + "\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
}

}  // namespace

int run_diagnose(int argc, char** argv) {
  CLI::App app{"Diagnose an incident bundle (or recognized events) and print the root causes",
               "reflex diagnose"};
  std::string kb_path, topo_path, format = "json", events_path, settle, skew;
  InputOptions in_opts;
  std::vector<std::string> inputs;
  bool strict = false, exit_code = false;
  unsigned threads = 1;
  add_kb_option(app, &kb_path);
  app.add_option("--topology", topo_path, "topology.json (default: BUNDLE/topology.json)");
  app.add_option("--format", format, "json (default), jsonl, text, dot or svg")
      ->check(CLI::IsMember({"json", "jsonl", "text", "dot", "svg"}));
  app.add_option("--events", events_path,
                 "read `reflex events` JSONL from FILE (or - for stdin) instead of a bundle");
  app.add_option("--settle", settle, "late-evidence window after a symptom (default 60s)");
  app.add_option("--skew", skew, "tolerance between two different clocks (default 2s)");
  add_strict_transport_flag(app, &strict);
  app.add_option("--threads", threads, "read a bundle's files with N threads (same output)")
      ->check(CLI::Range(1u, 256u));
  add_exit_code_flag(app, &exit_code, "no incident has a root cause");
  add_input_options(app, &in_opts, &inputs);
  if (auto rc = parse_or_exit(app, argc, argv, "reflex diagnose")) return *rc;
  EngineOptions opts;
  opts.ingest.strict_transport = strict;
  opts.ingest.threads = threads;
  if (!parse_dur(settle, "--settle", &opts.settle_s) ||
      !parse_dur(skew, "--skew", &opts.clock_skew_s))
    return 2;
  if (auto rc = check_inputs(inputs, events_path)) return *rc;
  InputSet in_set;
  std::string bundle;
  if (!inputs.empty()) {
    std::string ierr;
    if (!in_set.prepare(inputs, in_opts, &ierr)) {
      say(ierr);
      return 2;
    }
    bundle = in_set.bundle_dir();
  }
  if (!resolve_kb(&kb_path, "reflex diagnose")) return 2;
  auto kb = load_engine_kb(kb_path);
  if (!kb) return 2;
  std::vector<std::string> notes;
  std::shared_ptr<const Topology> topo = load_topology(topo_path, bundle, &notes, in_opts.job);
  if (!topo) return 2;
  for (const std::string& n : topo->notes()) notes.push_back("topology: " + n);
  for (const std::string& n : in_set.notes()) notes.push_back("input: " + n);
  std::optional<std::vector<Diagnosis>> ds =
      !events_path.empty() ? diagnose_event_stream(events_path, *kb, *topo, opts, &notes)
                           : diagnose_bundle(bundle, kb, topo, opts, &notes);
  if (!ds) return 2;
  finish_diagnoses(*ds, notes, in_set);
  print_diagnoses(*ds, format, *topo);
  const bool found = std::any_of(ds->begin(), ds->end(),
                                 [](const Diagnosis& d) { return !d.root_causes.empty(); });
  return exit_code && !found ? 1 : 0;
}

}  // namespace reflex::cli
