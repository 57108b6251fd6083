// What the ingest counted, merged across ingestors (an engine reload starts a
// new one) and said in a diagnosis's notes: what the input held, what was
// refused and what was not understood.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "reflex/ingest_stats.h"

namespace reflex::engine {

// a += b; at most `samples` unrecognized samples are kept.
void merge_ingest_stats(IngestStats* a, const IngestStats& b, size_t samples);

// The notes every diagnosis carries about its input. `no_root`: nothing
// recognised is a root, so the note also says what was read and recognised.
std::vector<std::string> input_notes(const IngestStats& st, bool no_root);

}  // namespace reflex::engine
