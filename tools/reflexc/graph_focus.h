// `reflexc graph --focus EVENT --depth N` and `--family CLASS`: a readable
// part of the causal event graph (the whole shipped KB is too large to draw).
#pragma once

#include <string>
#include <vector>

#include "reflex/kb.h"

namespace reflex::cli {

struct GraphFocus {
  std::vector<std::string> events;    // --focus (repeatable)
  std::vector<std::string> families;  // --family: events of these standard classes
  int depth = 1;                      // rule steps from a focus event, causes and effects
};

// The events of the focus (seeds) and those within `depth` rule steps of
// them, with the rules walked to reach them. Fails (false, *err) when a focus
// event or family names nothing in the KB.
bool focus_graph(const KnowledgeBase& kb, const GraphFocus& f, const std::string& format,
                 std::string* out, std::string* err);

// "CLASS COUNT" per standard class that has events, one a line: the families
// scripts/kb_pictures.sh draws.
std::string graph_families(const KnowledgeBase& kb);

}  // namespace reflex::cli
