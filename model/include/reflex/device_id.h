// Device ids (interfaces.md §2) read without a topology. The shapes:
//   <host>                      host
//   <host>/gpu<N>               gpu            <host>/pcie/<bdf>   pcie_port
//   <host>/nvsw<...>            nvswitch       <host>/<name>       nic (mlx5_0, eth0)
//   <host>/<kind>@<key>         placeholder of a host-local kind (or a rank)
//   fabric/<name>  storage/<name>  job/<job>  job/<job>/rank<N>  job/<job>/rank@<key>
// The prefixes are kDeviceKinds' (reflex/vocabulary.h). Hosts never contain '/'.
#pragma once

#include <string>
#include <string_view>

#include "reflex/kb.h"

namespace reflex {

struct DeviceIdView {
  bool valid = false;
  bool placeholder = false;  // "<host>/<kind>@<key>", "job/<job>/rank@<key>"
  DeviceKind kind = DeviceKind::host;
  std::string_view host;  // "" for cluster-level devices
  std::string_view key;   // placeholder key (bdf, name, number); the bdf of a pcie_port
  std::string_view job;   // a job's or rank's job name
  int rank = -1;          // a concrete rank's number

  // Views into `id`, which must outlive the result.
  static DeviceIdView parse(std::string_view id);
};

// "<host>/<short>@<key>": a device of `kind` on `host` that the topology does not list.
std::string placeholder_id(std::string_view host, DeviceKind kind, std::string_view key);
// "fabric/<name>", "storage/<name>", "job/<name>": a cluster-level id.
std::string cluster_device_id(DeviceKind kind, std::string_view name);

}  // namespace reflex
