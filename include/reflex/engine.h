// The diagnosis engine: recognized events in, diagnoses out.
//
// Batch:   diagnose_events(kb, topo, events)           -> every incident at once.
// Stream:  Engine::feed_* ... tick()/flush()           -> diagnoses by callback or poll().
//
// A job-level symptom (Signature.symptom != none) opens an incident; the
// engine waits `settle_s` of event time (or of real time in tick()) for late
// evidence, walks the KB's causal rules backward from the symptoms through
// the topology, ranks the root candidates and emits a Diagnosis. Later
// evidence re-diagnoses the incident (revision + 1) when the answer changes.
//
// Nothing here throws across the API; failures are bool + error text.
// Engine is thread-safe: every public method may be called from any thread;
// calls are serialised internally. Callbacks run on the calling thread after
// the internal lock is released, so a callback may call back into the Engine.
// The option and statistics types are in reflex/engine_options.h.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "reflex/diagnosis.h"
#include "reflex/engine_options.h"
#include "reflex/event.h"
#include "reflex/ingest_stats.h"
#include "reflex/kb.h"
#include "reflex/topology.h"

namespace reflex {

using DiagnosisCallback = std::function<void(const Diagnosis&)>;

class Engine {
 public:
  // kb and topo are shared so a reload can swap them while old diagnoses finish.
  Engine(std::shared_ptr<const KnowledgeBase> kb, std::shared_ptr<const Topology> topo,
         EngineOptions opts = {});
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Diagnoses go to the callback when one is set, else queue for poll().
  void set_callback(DiagnosisCallback cb);
  std::vector<Diagnosis> poll();
  // Sees every recognized event as it enters the engine (e.g. to store it).
  // Runs under the engine's lock: it must not call back into the Engine.
  void set_event_tap(std::function<void(const Event&)> tap);

  // ---- input (each call may emit diagnoses whose settle window has passed) ----
  void feed_envelope(std::string_view json_line);
  void feed_line(const std::string& host, Transport transport, std::string_view line,
                 std::string_view evidence_file = "", uint64_t line_no = 0);
  // An already recognized event (e.g. a line of `reflex events` output).
  void feed_event(Event ev);
  // Batch: a whole incident bundle (interfaces.md §3). False + *error for an unusable bundle.
  bool read_bundle(const std::string& dir, std::string* error);

  // Real-time progress for streams that go quiet: incidents opened more than
  // settle_s of wall-clock time ago are diagnosed.
  void tick();
  // End of input (EOF, SIGTERM): diagnose every open incident, emit, close them.
  void flush();
  // Batch: every incident in everything fed so far (no settle, no emission).
  // With no symptom at all and fault evidence present, one diagnosis with a null trigger.
  std::vector<Diagnosis> diagnose_all();

  // Atomic swap of the knowledge base and/or topology (nullptr = keep). The KB
  // must be usable (engine version, rule names); otherwise false, *error says
  // why and the old ones stay.
  bool reload(std::shared_ptr<const KnowledgeBase> kb, std::shared_ptr<const Topology> topo,
              std::string* error);

  // Runs fn under the engine's lock with the storm summaries its ingest still
  // holds open (nothing is fed or emitted while it runs), e.g. for a store to
  // commit them with the events the tap gave it. fn must not call back.
  void with_open_storms(const std::function<void(const OpenStorms&)>& fn) const;

  EngineStats stats() const;
  std::shared_ptr<const KnowledgeBase> kb() const;
  std::shared_ptr<const Topology> topology() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Batch convenience: diagnose a complete set of events (any order). Never throws.
std::vector<Diagnosis> diagnose_events(const KnowledgeBase& kb, const Topology& topo,
                                       std::vector<Event> events, const EngineOptions& opts = {});

// Notes on what an input held: lines and events (when no root cause was
// found), lines refused for transport, lines that looked like fault evidence
// but matched no signature (the KB's `suspect` signatures).
std::vector<std::string> input_notes(const IngestStats& stats, bool no_root);

// Checks that the engine can run this KB (rule names resolve, requires engine).
bool validate_kb_for_engine(const KnowledgeBase& kb, std::string* error);
// The knowledge base at `path` (.rfx sources, file or directory, or a built
// artifact), checked with validate_kb_for_engine; nullptr + *error otherwise.
// Defined in libreflex.so, which links the compiler in.
std::shared_ptr<const KnowledgeBase> load_kb_for_engine(const std::string& path,
                                                        std::string* error);

// One line of `reflex events` output (interfaces.md §7) back into an Event; the KB
// supplies what the line leaves out (device kind, transport). False + *error
// on a bad line.
bool event_from_json(std::string_view json_line, const KnowledgeBase& kb, const Topology& topo,
                     Event* out, std::string* error);

}  // namespace reflex
