// Private to reflex_topology: the topology file's JSON into TopoData.
#pragma once

#include <string>
#include <string_view>

#include "topology_data.h"

namespace reflex::topo {

// Fills *im from the JSON text; false + *err (file, JSON path, problem) on the
// first error. May throw what nlohmann or allocation throws; the caller catches.
bool load_json(std::string_view text, const std::string& origin, TopoData* im, TopologyError* err);

}  // namespace reflex::topo
