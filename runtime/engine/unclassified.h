// Unclassified candidates: when nothing recognized is a root cause, a line
// that looks like fault evidence (a KB `suspect` flagged it) but that no
// signature explains is still the best lead an operator has. It becomes a
// root on the device the line names (a PCI address the topology knows, else
// the host that logged it), with low confidence and nothing evicted; the line
// is quoted. Its class is the suspect's (the emitter family's) when the KB
// gives one, else "unclassified".
#pragma once
#include <vector>

#include "reflex/diagnosis.h"
#include "reflex/ingest_stats.h"
#include "reflex/kb.h"
#include "reflex/topology.h"

namespace reflex::engine {

// Adds unclassified roots to `ds` when none of its diagnoses has a root cause
// and the ingest kept unrecognized samples (a diagnosis with a null trigger is
// made when there is none). At most `max_roots` distinct devices.
// Suspects are tried in the KB's declaration order.
void add_unclassified_roots(std::vector<Diagnosis>* ds, const IngestStats& st, const Topology& topo,
                            const KnowledgeBase& kb, size_t max_roots = 3);

}  // namespace reflex::engine
