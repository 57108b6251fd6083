// The result of a diagnosis (interfaces.md §5) and its renderings: JSON (the contract),
// text (for a person) and Graphviz dot. Produced by the engine (reflex/engine.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reflex/event.h"
#include "reflex/kb.h"

namespace reflex {

class Topology;

// One event as the diagnosis cites it.
struct EventRef {
  std::string event;     // signature or latent name
  std::string device;    // interfaces.md §2 id
  EventTime time;        // ts = time.wall; raw dmesg without boot time has only time.mono
  std::string evidence;  // "hosts/node-0017/kern.log:812"; "" for a hypothesised latent
  std::string line;
  uint64_t count = 1;   // storms folded into one event
  bool latent = false;  // hypothesised, no log line of its own
};

// One link of a chain: the event, and the rule + topology relation that tie it
// to the previous link (empty for the first link, the root).
struct ChainLink {
  EventRef ev;
  std::string rule;  // Rule.loc.str(), e.g. "kb/pcie.rfx:41"
  std::string rule_name;
  std::string relation;  // "effect below cause", "any", ...
  double strength = 1.0;
  bool order_unknown = false;  // the two events' clocks could not be compared
};

struct RootCause {
  std::string device;
  // The device's host (the topology's, or the host part of a placeholder id);
  // "" for job, rank and cluster-level devices.
  std::string host;
  std::string fault_class;  // standard class (interfaces.md §6)
  std::string subclass;     // the KB's finer class, "" when the class is standard
  std::string event;
  double score = 0;
  std::string action;  // placeholders expanded
  std::string remediation;
  std::string component;    // optional finer part
  std::string description;  // placeholders expanded
  Severity severity = Severity::info;
  std::string nature;  // the KB's: hardware, driver, firmware, application, software, environment
  // high | medium | low: the margin over the next candidate, capped for a
  // hypothesis (no log line) and for evidence no rule ties to the symptom.
  std::string confidence;
  std::string check;  // the KB's `check`, placeholders expanded; "" when none
  bool latent = false;
  // "" when the input holds the root's evidence; "named_by_peer" for a host
  // known only from its peers' lines (no log of its own in the input):
  // confidence low, never evicted.
  std::string basis;
  // The evidence is a device's (a GPU, a NIC) but the line did not name
  // which: the host stands in, and confidence is at most medium.
  bool device_unnamed = false;
  std::vector<ChainLink> chain;  // root first, trigger (or the symptom reached) last
  // The other kinds of fault evidence on the root's device that `why` counts:
  // one entry per kind (its first event; `count` = all of that kind), oldest first.
  std::vector<EventRef> device_evidence;
  // How many of the incident's job-level symptoms (`symptoms`) it explains:
  // 0 when the incident has none (trigger null).
  int explains = 0;
  std::string why;  // why it ranks where it does (text output)
};

struct Diagnosis {
  std::optional<EventRef> trigger;     // null: fault evidence but no job-level symptom
  std::vector<RootCause> root_causes;  // best first, at most 5
  std::vector<EventRef> unexplained;   // symptoms nothing explains
  std::vector<std::string> notes;
  std::string incident;  // stable id
  int revision = 1;
  std::vector<std::string> eviction_set;
  // When the first two candidates are close: what would tell them apart.
  std::string next_check;
  std::string job;   // "job/<id>" of the incident, "" when none
  int symptoms = 0;  // job-level symptom events in the incident
};

// JSON per interfaces.md §5. `indent` < 0 = one line (JSONL). Invalid UTF-8 in log lines
// is replaced, never thrown.
std::string diagnosis_to_json(const Diagnosis& d, int indent = 2);
// Several incidents of one batch (the principal incident first): the first
// incident's document, plus an "incidents" array with every incident when
// there is more than one.
std::string diagnoses_to_json(const std::vector<Diagnosis>& ds, int indent = 2);
std::string diagnosis_to_text(const Diagnosis& d);
std::string diagnoses_to_text(const std::vector<Diagnosis>& ds);
// JSON Lines: one incident's document (interfaces.md §5) a line, the principal
// first; with several, each carries "principal".
std::string diagnoses_to_jsonl(const std::vector<Diagnosis>& ds);
std::string diagnoses_to_dot(const std::vector<Diagnosis>& ds);
// A self-contained SVG (no scripts, no external fonts): per incident, the
// devices as lanes grouped by host on a time axis, the evidence chain as
// arrows, the root's PCIe subtree from `topo` (may be null) and a legend.
// Every text from a log is escaped.
std::string diagnoses_to_svg(const std::vector<Diagnosis>& ds, const Topology* topo);

// "2026-03-05T10:41:12.000000Z", or "" when the time has no wall clock.
std::string format_event_time(const EventTime& t);

}  // namespace reflex
