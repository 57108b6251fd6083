// Device resolution of an event (docs/language.md §5.2): `locate KIND by FIELD`
// through the Topology, with placeholder ids for devices the topology does not
// know (the event is never dropped).
#pragma once

#include <string>

#include "reflex/kb.h"
#include "reflex/log_record.h"
#include "reflex/signature_match.h"
#include "reflex/topology.h"

namespace reflex::ingest {

struct Located {
  std::string id;
  std::string host;  // "" for cluster-level devices (job, fabric, storage)
  DeviceKind kind = DeviceKind::host;
  bool placeholder = false;
};

// `loc` == nullptr: the signature has no locator for the event's own device.
// Placeholders: "<host>/gpu@<bdf>" (interfaces.md §1), "<host>/pcie/<bdf>" (a port is
// named by its BDF anyway), "<host>/<kind>@<key>" otherwise, "<host>/<kind>@unknown"
// when the line names nothing.
Located locate_device(const Topology& topo, const Signature& sig, DeviceKind kind,
                      const Locator* loc, const FieldValues& fields, const LogRecord& rec);

}  // namespace reflex::ingest
