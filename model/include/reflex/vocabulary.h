// The language's built-in vocabularies, each written once as a constexpr
// table: device kinds (their words, aliases, id shapes, host-local flag),
// relations (which kinds each one relates), transports (`from WORD`) and the
// kinds a field of each type can `locate`. The compiler checks rules against
// them, the topology and ingest build and read device ids with them, and the
// tools print them. docs/language.md §3 describes the same tables.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "reflex/kb.h"

namespace reflex {

struct DeviceKindInfo {
  DeviceKind kind;
  std::string_view name;        // the language's word (`on pcie_port`), to_string()
  std::string_view alias;       // also read as the kind of a placeholder id ("" = none)
  std::string_view short_name;  // written in placeholder ids "<host>/<short>@<key>"
  // How a concrete id of the kind starts: after "<host>/" for host-local kinds
  // ("gpu" in "node-1/gpu3"), at the start for cluster-level ones ("fabric/").
  // A NIC has none: any other host-local name is a NIC ("node-1/mlx5_0").
  std::string_view id_prefix;
  bool host_local;  // belongs to one host (same_host, placeholders by host)
};

inline constexpr std::array<DeviceKindInfo, 9> kDeviceKinds = {{
    {DeviceKind::host, "host", "", "host", "", true},
    {DeviceKind::gpu, "gpu", "", "gpu", "gpu", true},
    {DeviceKind::nic, "nic", "", "nic", "", true},
    {DeviceKind::pcie_port, "pcie_port", "pcie", "pcie", "pcie/", true},
    {DeviceKind::nvswitch, "nvswitch", "nvsw", "nvswitch", "nvsw", true},
    {DeviceKind::fabric_switch, "fabric_switch", "", "fabric", "fabric/", false},
    {DeviceKind::job, "job", "", "job", "job/", false},
    {DeviceKind::rank, "rank", "", "rank", "rank", false},  // "job/<job>/rank<N>"
    {DeviceKind::storage, "storage", "", "storage", "storage/", false},
}};

constexpr bool device_kinds_in_enum_order() {
  for (size_t i = 0; i < kDeviceKinds.size(); ++i)
    if (static_cast<size_t>(kDeviceKinds[i].kind) != i) return false;
  return kDeviceKinds.size() == static_cast<size_t>(DeviceKind::storage) + 1;
}
static_assert(device_kinds_in_enum_order(), "kDeviceKinds is indexed by DeviceKind");

constexpr const DeviceKindInfo& kind_info(DeviceKind k) {
  return kDeviceKinds[static_cast<size_t>(k)];
}
constexpr bool host_local(DeviceKind k) {
  return kind_info(k).host_local;
}

// The kind a word names: the language's words, and with `aliases` also the
// aliases (placeholder ids say "pcie@..." and "nvsw@...").
constexpr std::optional<DeviceKind> device_kind_named(std::string_view word, bool aliases) {
  for (const DeviceKindInfo& k : kDeviceKinds)
    if (word == k.name || (aliases && !k.alias.empty() && word == k.alias)) return k.kind;
  return std::nullopt;
}

// A set of device kinds, one bit per kind.
using KindSet = uint16_t;
constexpr KindSet kind_bit(DeviceKind k) {
  return static_cast<KindSet>(1u << static_cast<unsigned>(k));
}
constexpr bool kind_in(KindSet s, DeviceKind k) {
  return (s & kind_bit(k)) != 0;
}
template <class... K>
constexpr KindSet kinds(K... k) {
  return static_cast<KindSet>((0u | ... | kind_bit(k)));
}

namespace vocab_detail {
using DK = DeviceKind;
constexpr KindSet kAll = 0x1ff;
constexpr KindSet kHostLocal = kinds(DK::host, DK::gpu, DK::nic, DK::pcie_port, DK::nvswitch);
constexpr KindSet kOnHost = kinds(DK::gpu, DK::nic, DK::pcie_port, DK::nvswitch, DK::rank);
constexpr KindSet kPcieChild = kinds(DK::gpu, DK::nic, DK::pcie_port);
constexpr KindSet kHostLocalOrRank = kHostLocal | kind_bit(DK::rank);
}  // namespace vocab_detail

struct RelationInfo {
  Relation rel;
  std::string_view name;
  KindSet lhs, rhs;             // `a REL b` needs a's kind in lhs and b's in rhs
  bool same_kind;               // and a's kind == b's kind (`same`)
  bool either_order;            // or (b, a) in (lhs, rhs) (`paired`)
  std::string_view kinds_text;  // the kinds in words, for diagnostics
};

inline constexpr std::array<RelationInfo, 15> kRelations = [] {
  using namespace vocab_detail;
  return std::array<RelationInfo, 15>{{
      {Relation::same, "same", kAll, kAll, true, false, "two devices of the same kind"},
      {Relation::same_host, "same_host", kHostLocal, kHostLocal, false, false,
       "host-local kinds (host, gpu, nic, pcie_port, nvswitch)"},
      {Relation::on, "on", kOnHost, kind_bit(DK::host), false, false,
       "gpu, nic, pcie_port, nvswitch or rank to host"},
      {Relation::below, "below", kPcieChild, kind_bit(DK::pcie_port), false, false,
       "gpu, nic or pcie_port to pcie_port"},
      {Relation::paired, "paired", kind_bit(DK::gpu), kind_bit(DK::nic), false, true,
       "gpu and nic, either order"},
      {Relation::nvlink_peer, "nvlink_peer", kind_bit(DK::gpu), kind_bit(DK::gpu), false, false,
       "gpu to gpu"},
      {Relation::serves, "serves", kind_bit(DK::nvswitch), kind_bit(DK::gpu), false, false,
       "nvswitch to gpu"},
      {Relation::attached, "attached", kind_bit(DK::nic), kind_bit(DK::fabric_switch), false, false,
       "nic to fabric_switch"},
      {Relation::uplink, "uplink", kind_bit(DK::fabric_switch), kind_bit(DK::fabric_switch), false,
       false, "fabric_switch to fabric_switch"},
      {Relation::runs_on, "runs_on", kind_bit(DK::rank), kinds(DK::gpu, DK::host), false, false,
       "rank to gpu or host"},
      {Relation::uses, "uses", kind_bit(DK::rank), kind_bit(DK::nic), false, false, "rank to nic"},
      {Relation::in, "in", kinds(DK::rank, DK::host, DK::gpu), kind_bit(DK::job), false, false,
       "rank, host or gpu to job"},
      {Relation::same_job, "same_job", kHostLocalOrRank, kHostLocalOrRank, false, false,
       "rank, host, gpu, nic, pcie_port, nvswitch"},
      {Relation::mounts, "mounts", kinds(DK::host, DK::rank), kind_bit(DK::storage), false, false,
       "host or rank to storage"},
      {Relation::any, "any", kAll, kAll, false, false, "any kinds"},
  }};
}();

constexpr bool relations_in_enum_order() {
  for (size_t i = 0; i < kRelations.size(); ++i)
    if (static_cast<size_t>(kRelations[i].rel) != i) return false;
  return kRelations.size() == static_cast<size_t>(Relation::any) + 1;
}
static_assert(relations_in_enum_order(), "kRelations is indexed by Relation");

constexpr const RelationInfo& relation_info(Relation r) {
  return kRelations[static_cast<size_t>(r)];
}

// Whether `a REL b` can hold for devices of these kinds (docs/language.md §3).
constexpr bool relation_allows(Relation r, DeviceKind a, DeviceKind b) {
  const RelationInfo& i = relation_info(r);
  if (i.same_kind && a != b) return false;
  if (kind_in(i.lhs, a) && kind_in(i.rhs, b)) return true;
  return i.either_order && kind_in(i.lhs, b) && kind_in(i.rhs, a);
}

// The host-local flags and the relation table agree.
static_assert(relation_allows(Relation::same_host, DeviceKind::nvswitch, DeviceKind::host));
static_assert(!relation_allows(Relation::same_host, DeviceKind::rank, DeviceKind::host));
static_assert([] {
  for (const DeviceKindInfo& k : kDeviceKinds)
    if (kind_in(vocab_detail::kHostLocal, k.kind) != k.host_local) return false;
  return true;
}());

// The transports a line arrives by, in bit order: the words of `from` and of
// an example's source, transport_name() / transport_from_string().
struct TransportInfo {
  Transport transport;
  std::string_view name;
};
inline constexpr std::array<TransportInfo, 4> kTransportWords = {{
    {kTransportKernel, "kernel"},
    {kTransportSyslog, "syslog"},
    {kTransportJournal, "journal"},
    {kTransportApp, "app"},
}};
static_assert([] {
  unsigned all = 0;
  for (const TransportInfo& t : kTransportWords) all |= t.transport;
  return all == kTransportAny;
}());

constexpr std::optional<Transport> transport_named(std::string_view word) {
  for (const TransportInfo& t : kTransportWords)
    if (word == t.name) return t.transport;
  return std::nullopt;
}
// The word of one transport; "any" for a mask of several (or none).
constexpr std::string_view transport_word(Transport t) {
  for (const TransportInfo& i : kTransportWords)
    if (i.transport == t) return i.name;
  return "any";
}

// `locate KIND by FIELD`: the kinds a field of each type can name, indexed by
// FieldType. A BDF names a PCIe function (gpu, nic, pcie_port, nvswitch), an
// int a GPU index or a rank, an IP a NIC or a host, a string any kind with a
// name (not a PCIe port, which only a BDF names, nor a job); hex and float
// values name no device.
inline constexpr std::array<KindSet, 6> kLocateKinds = [] {
  using namespace vocab_detail;
  std::array<KindSet, 6> t{};
  t[static_cast<size_t>(FieldType::int_)] = kinds(DK::gpu, DK::rank);
  t[static_cast<size_t>(FieldType::bdf)] = kinds(DK::gpu, DK::nic, DK::pcie_port, DK::nvswitch);
  t[static_cast<size_t>(FieldType::ip)] = kinds(DK::nic, DK::host);
  t[static_cast<size_t>(FieldType::string)] =
      static_cast<KindSet>(kAll & ~kinds(DK::pcie_port, DK::job));
  return t;
}();
static_assert(static_cast<size_t>(FieldType::string) + 1 == kLocateKinds.size());

constexpr bool locate_allows(FieldType t, DeviceKind k) {
  return kind_in(kLocateKinds[static_cast<size_t>(t)], k);
}

}  // namespace reflex
