// Rule coverage by observed links (docs/language.md §9.1): a compiled rule is
// "linked" in a test when the test's ingested events contain an observed
// cause and an observed effect that the rule would connect: the `where`
// relations hold in the test's topology and the effect falls inside the rule's
// time window. This covers rules whose effect has no onward path to a
// symptom (clean-up Xids, detail lines) and rules a stronger direct rule
// shadows on the diagnosis chain, which the chain alone can never cover.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "reflex/event.h"
#include "reflex/kb.h"
#include "reflex/topology.h"

namespace reflex::cli {

// Names of the compiled rules of `kb` that link some pair of `events`
// (cause != effect). Latent causes never link (they have no observed event;
// they count only through a diagnosis chain). `clock_skew_s` is the engine's
// tolerance between two different clocks (EngineOptions::clock_skew_s).
std::set<std::string> linked_rules(const KnowledgeBase& kb, const Topology& topo,
                                   const std::vector<Event>& events, double clock_skew_s);

}  // namespace reflex::cli
