// The shared state's setup (the matcher compiled or shared, the sink's
// counting) and the unrecognised lines' counters, which both a one-thread
// walk and the --threads replay keep.
#include "ingest_core.h"

#include <utility>

namespace reflex::ingest {

IngestCore::IngestCore(const KnowledgeBase& k, const Topology& t, IngestOptions o,
                       const Matcher* origin)
    : kb(k),
      topo(t),
      opts(o),
      parser(t, FormatOptions{o.strict_transport, o.max_line_bytes}, &fstats),
      storms(o.default_dedup_s, &storm_counters) {
  storms.set_announce(o.announce_folds);
  std::string err;
  if (origin ? !matcher.share(*origin, &err) : !matcher.build(kb, &err, &notes)) {
    ok = false;
    notes.push_back("knowledge base not usable for matching: " + err);
  }
  stats.precompiled_patterns = matcher.from_cache();
  emit_fn = [this](Event&& ev) {
    ++stats.events;
    if (sink) sink(std::move(ev));
  };
}

void IngestCore::count_unrecognised(uint32_t si, uint64_t n) {
  stats.unrecognized_lines += n;
  stats.unrecognized_by_suspect[matcher.signatures()[si].sig->name] += n;
}

void IngestCore::note_unrecognised(uint32_t si, std::string_view file, uint64_t line_no,
                                   std::string_view raw) {
  ++stats.unrecognized_lines;
  const std::string& name = matcher.signatures()[si].sig->name;
  uint64_t& n = stats.unrecognized_by_suspect[name];
  ++n;
  if (n <= opts.unrecognized_per_suspect &&
      stats.unrecognized_samples.size() < opts.unrecognized_samples) {
    UnrecognizedLine u;
    u.suspect = name;
    u.evidence = std::string(file) + ":" + std::to_string(line_no);
    u.line = std::string(raw.substr(0, kMaxUnrecognised));
    stats.unrecognized_samples.push_back(std::move(u));
  }
}

}  // namespace reflex::ingest
