// `reflex diagnose --kb KB [--topology FILE] [--format json|text|dot]
//                  [--events FILE|-] [--settle DUR] [--skew DUR] [--host H] INPUT...`
// Batch diagnosis of an incident bundle (interfaces.md §3, §5, §7) — a directory, a tar
// archive of one, or plain log files and `-` (stdin) as SREs have them — or of
// the JSONL that `reflex events` printed (so matching can run beside each
// host's log shipper and only events travel). Exit 0 even with no root cause;
// 2 for bad input.
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

}  // namespace

int run_diagnose(int argc, char** argv) {
  CLI::App app{"Diagnose an incident bundle (or recognized events) and print the root causes",
               "reflex diagnose"};
  std::string kb_path, topo_path, format = "json", events_path, settle, skew, host;
  std::vector<std::string> inputs;
  bool strict = false;
  unsigned threads = 1;
  add_kb_option(app, &kb_path);
  app.add_option("--topology", topo_path, "topology.json (default: BUNDLE/topology.json)");
  app.add_option("--format", format, "json (default), text or dot")
      ->check(CLI::IsMember({"json", "text", "dot"}));
  app.add_option("--events", events_path,
                 "read `reflex events` JSONL from FILE (or - for stdin) instead of a bundle");
  app.add_option("--settle", settle, "late-evidence window after a symptom (default 60s)");
  app.add_option("--skew", skew, "tolerance between two different clocks (default 2s)");
  add_strict_transport_flag(app, &strict);
  app.add_option("--threads", threads, "read a bundle's files with N threads (same output)")
      ->check(CLI::Range(1u, 256u));
  add_input_options(app, &host, &inputs);
  if (auto rc = parse_or_exit(app, argc, argv, "reflex diagnose")) return *rc;
  EngineOptions opts;
  opts.ingest.strict_transport = strict;
  opts.ingest.threads = threads;
  if (!parse_dur(settle, "--settle", &opts.settle_s) ||
      !parse_dur(skew, "--skew", &opts.clock_skew_s))
    return 2;
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
  std::error_code ec;
  InputSet in_set;
  std::string bundle;
  if (!inputs.empty()) {
    std::string ierr;
    if (!in_set.prepare(inputs, host, &ierr)) {
      say(ierr);
      return 2;
    }
    bundle = in_set.bundle_dir();
  }

  std::string err;
  std::optional<KnowledgeBase> kbv = load_kb(kb_path, &err);
  if (!kbv) {
    std::fprintf(stderr, "%s%s", err.c_str(), err.empty() || err.back() != '\n' ? "\n" : "");
    say("cannot load knowledge base " + kb_path);
    return 2;
  }
  if (!validate_kb_for_engine(*kbv, &err)) {
    say(kb_path + ": " + err);
    return 2;
  }
  auto kb = std::make_shared<const KnowledgeBase>(std::move(*kbv));

  std::vector<std::string> extra_notes;
  std::shared_ptr<const Topology> topo;
  if (topo_path.empty() && !bundle.empty() && fs::exists(fs::path(bundle) / "topology.json", ec))
    topo_path = (fs::path(bundle) / "topology.json").string();
  if (!topo_path.empty()) {
    TopologyError terr;
    auto t = Topology::load_file(topo_path, &terr);
    if (!t) {
      std::fprintf(stderr, "%s\n", terr.str().c_str());
      return 2;
    }
    topo = std::move(t);
  } else {
    topo = Topology::empty();
    extra_notes.push_back(
        "no topology (no --topology, no BUNDLE/topology.json): every device is "
        "a placeholder and relations hold by host only");
    say("note: " + extra_notes.back());
  }
  for (const std::string& n : topo->notes()) extra_notes.push_back("topology: " + n);
  for (const std::string& n : in_set.notes()) extra_notes.push_back("input: " + n);

  std::vector<Diagnosis> ds;
  if (!events_path.empty()) {
    std::ifstream file;
    std::istream* in = &std::cin;
    if (events_path != "-") {
      file.open(events_path, std::ios::binary);
      if (!file) {
        say(events_path + ": cannot open");
        return 2;
      }
      in = &file;
    }
    std::vector<Event> events;
    std::string line;
    uint64_t n = 0, bad = 0;
    while (std::getline(*in, line)) {
      ++n;
      if (line.empty() || line.find_first_not_of(" \t\r") == std::string::npos) continue;
      Event ev;
      if (!event_from_json(line, *kb, *topo, &ev, &err)) {
        if (++bad <= 5) say(events_path + ":" + std::to_string(n) + ": skipped: " + err);
        continue;
      }
      ev.seq = n;
      events.push_back(std::move(ev));
    }
    if (bad > 0) {
      say(std::to_string(bad) + " bad event line(s) skipped");
      extra_notes.push_back(std::to_string(bad) + " unreadable event line(s) were skipped");
    }
    ds = diagnose_events(*kb, *topo, std::move(events), opts);
  } else {
    Engine eng(kb, topo, opts);
    // A 12,500-host bundle takes tens of seconds: on a terminal, say what is
    // happening (stages with sizes and times); never when stderr is a file.
    const bool progress = isatty(STDERR_FILENO) != 0;
    const auto t0 = std::chrono::steady_clock::now();
    auto secs = [&] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    if (progress) {
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
    if (!eng.read_bundle(bundle, &err)) {
      say(bundle + ": " + err);
      return 2;
    }
    if (progress) {
      EngineStats st = eng.stats();
      std::fprintf(stderr,
                   "reflex diagnose: %ju lines read, %ju events in %.1f s; diagnosing ...\n",
                   static_cast<uintmax_t>(st.ingest.lines),
                   static_cast<uintmax_t>(st.ingest.events), secs());
    }
    ds = eng.diagnose_all();
    if (progress)
      std::fprintf(stderr, "reflex diagnose: %zu incident(s) in %.1f s\n", ds.size(), secs());
    for (const std::string& n : eng.stats().ingest.notes) extra_notes.push_back(n);
  }
  for (auto& d : ds)
    for (auto& n : extra_notes) d.notes.push_back(n);
  if (in_set.is_files()) {  // evidence as the user named the files
    for (auto& d : ds) {
      if (d.trigger) d.trigger->evidence = in_set.map_evidence(d.trigger->evidence);
      for (auto& rc : d.root_causes)
        for (auto& l : rc.chain) l.ev.evidence = in_set.map_evidence(l.ev.evidence);
      for (auto& u : d.unexplained) u.evidence = in_set.map_evidence(u.evidence);
      for (auto& n : d.notes) n = in_set.map_text(n);
    }
  }

  std::string out;
  if (format == "text")
    out = diagnoses_to_text(ds);
  else if (format == "dot")
    out = diagnoses_to_dot(ds);
  else
    out = diagnoses_to_json(ds, 2) + "\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  return 0;
}

}  // namespace reflex::cli
