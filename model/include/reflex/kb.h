// The compiled knowledge base: what `reflexc build` writes and the runtime
// loads. This is the one contract between the compiler and the runtime; the
// compiler's AST never leaves the compiler, and the runtime never sees .rfx text.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "reflex/huge_pages.h"

namespace reflex {

// Built-in device kinds; they mirror the topology file (interfaces.md §1-2).
enum class DeviceKind : uint8_t {
  host,
  gpu,
  nic,
  pcie_port,
  nvswitch,
  fabric_switch,
  job,
  rank,
  storage,
};
const char* to_string(DeviceKind k);
std::optional<DeviceKind> device_kind_from_string(const std::string& s);

// How a log line arrived. Kernel signatures fire only on kernel lines.
enum Transport : uint8_t {
  kTransportKernel = 1,
  kTransportSyslog = 2,
  kTransportJournal = 4,
  kTransportApp = 8,
  kTransportAny = 15,
};
const char* transport_name(Transport t);  // "kernel", "syslog", "journal", "app"
std::optional<Transport> transport_from_string(const std::string& s);

enum class FieldType : uint8_t { int_, hex, float_, bdf, ip, string };
const char* to_string(FieldType t);

enum class Severity : uint8_t { info, warning, minor, major, critical };
const char* to_string(Severity s);

enum class SymptomKind : uint8_t { none, crash, hang, launch, slowdown };
const char* to_string(SymptomKind s);

// Topology relations between two devices (docs/language.md §3).
enum class Relation : uint8_t {
  same,
  same_host,
  on,
  below,
  paired,
  nvlink_peer,
  serves,
  attached,
  uplink,
  runs_on,
  uses,
  in,
  same_job,
  mounts,
  any,
};
const char* to_string(Relation r);
std::optional<Relation> relation_from_string(const std::string& s);

struct SourceLoc {
  std::string file;         // path as given to the compiler, e.g. "kb/pcie.rfx"
  int line = 0;             // 1-based
  int col = 0;              // 1-based
  std::string str() const;  // "kb/pcie.rfx:41"
};

struct FieldDecl {
  std::string name;
  FieldType type = FieldType::string;
};

// A boolean condition over an event's fields (docs/language.md §5.1).
struct Condition {
  enum class Op : uint8_t { eq, ne, lt, le, gt, ge, in, not_in, matches, and_, or_, not_ };
  Op op = Op::eq;
  std::string field;                // leaf ops
  std::vector<std::string> values;  // leaf ops: literal values as text (numbers normalised)
  std::vector<Condition> children;  // and_/or_/not_
};

struct Locator {
  DeviceKind kind = DeviceKind::host;
  std::string field;    // capture that names the device
  std::string binding;  // "" = the event's own device; else an extra named device ("peer")
};

struct Aggregation {
  int count_at_least = 0;  // 0 = none
  double within_s = 0;
};

struct Dedup {
  double window_s = 0;  // 0 = none
  std::vector<std::string> by_fields;
};

struct Baseline {
  std::string field;  // "" = none
  double factor = 0;
  int window = 0;      // last N values
  bool below = false;  // fire when the value drops below factor x median (throughput)
};

struct Example {
  std::string line;
  Transport source = kTransportKernel;
  std::map<std::string, std::string> expect;  // field -> expected normalised value
  SourceLoc loc;
};

struct Signature {
  std::string name;
  SourceLoc loc;
  DeviceKind kind = DeviceKind::host;
  uint8_t sources = kTransportAny;    // Transport bitmask
  std::vector<std::string> patterns;  // [0] the first line; [1..] continuation lines (`then`)
  int join_within_lines = 4;
  std::vector<FieldDecl> fields;
  std::optional<Condition> when;
  std::vector<Locator> locators;
  std::string fault_class;  // "" = not a root-cause event (a symptom or a consequence only)
  Severity severity = Severity::info;
  std::string nature;
  std::string description;
  std::string action;
  // `check "..."`: the one look that confirms or rules out this cause
  // (`ibstat` on both ends, `nvidia-smi -q -d ROW_REMAPPER`); named when two
  // candidates are close.
  std::string check;
  std::string remediation;
  SymptomKind symptom = SymptomKind::none;
  Aggregation aggregate;
  Dedup dedup;
  Baseline baseline;
  // `cleared_by EVENT, ... within D`: one of these events on the same device
  // within D after this one heals it (a link that came back up, an NFS server
  // that answered again). A cleared event explains only what happened before
  // the heal and is never blamed on its own.
  std::vector<std::string> cleared_by;
  double clear_within_s = 0;
  std::vector<Example> examples;
  std::vector<Example> near_misses;
  // `suspect`: not an event. A line it matches that no other signature
  // recognised "looks like fault evidence" and is reported as not understood
  // (counted and sampled by ingest), so a new log shape shows the first time.
  bool suspect = false;
  // `background`: healthy hosts print it too (a trickle the fleet always has).
  // As a root cause it is discounted and the report says so; it still stands
  // when nothing else explains the failure.
  bool background = false;
};

// `odd_one_out EVENT.FIELD among REL`: the device whose value of FIELD (in
// its EVENT lines) differs from the value most of its peers under REL share.
struct OddOneOut {
  std::string event;
  std::string field;
  Relation among = Relation::same_job;
};

struct Latent {
  std::string name;
  SourceLoc loc;
  DeviceKind kind = DeviceKind::host;
  std::string fault_class;
  Severity severity = Severity::major;
  std::string nature;
  std::string description;
  std::string action;
  std::string remediation;
  std::string check;
  bool silent = false;  // requires the device's host to have gone quiet while peers log
  // Common mode (`quorum N and P%`): hypothesised only when its effects come
  // from at least `quorum_devices` distinct devices at one time point, and from
  // at least `quorum_share` of the devices the rule places below it. 0 = not declared.
  int quorum_devices = 0;
  double quorum_share = 0;
  bool has_quorum() const { return quorum_devices > 0 || quorum_share > 0; }
  // Placed only on a device these find odd (any of them), with their lines as evidence.
  std::vector<OddOneOut> odd_one_out;
};

struct DeviceRef {
  enum class Side : uint8_t { cause, effect };
  Side side = Side::cause;
  std::string binding;  // "" = the event's device
};

struct RelationConstraint {
  DeviceRef lhs;
  Relation rel = Relation::any;
  DeviceRef rhs;
};

struct Rule {
  std::string name;
  SourceLoc loc;
  std::string cause;                      // signature or latent name
  std::string effect;                     // signature name (a latent cannot be an effect)
  std::vector<RelationConstraint> where;  // conjunction; empty = any
  double min_s = 0;
  double max_s = 0;
  double skew_s = 0;
  // `while cause lasts + DUR`: the effect must begin within DUR of the
  // cause's observed span (first..last); < 0: no such bound.
  double lasting_s = -1;
  double strength = 1.0;
};

struct FaultClass {
  std::string name;
  std::string parent;  // "" = a standard class
  std::string description;
  SourceLoc loc;
};

// `nature NAME "..." [evicts]`: what kind of thing is at fault. Only a root
// whose nature evicts gets an eviction set (docs/language.md, natures).
struct Nature {
  std::string name;
  std::string description;
  bool evicts = false;
  SourceLoc loc;
};

struct TestLog {
  std::string host;
  Transport source = kTransportKernel;
  std::string line;
};

struct TestExpect {
  enum class Kind : uint8_t { root, no_root, event };
  Kind kind = Kind::root;
  std::string device;       // root/event: device id ("" = any)
  std::string fault_class;  // root: optional
  std::string event;        // event: name
  int rank = 1;             // root: 1 = top
  SourceLoc loc;
};

struct KbTest {
  std::string name;
  SourceLoc loc;
  std::string topology_path;  // resolved path, or "" when inline
  std::string topology_json;  // inline JSON text
  std::string bundle_dir;     // resolved path, or ""
  std::vector<TestLog> logs;
  std::vector<TestExpect> expects;
};

struct KbMeta {
  int language_version = 1;
  std::string name;
  std::string version;
  std::string requires_engine;  // e.g. ">= 0.1.0"
};

// Recorded in every artifact; the runtime refuses a mismatch.
struct ArtifactInfo {
  int format_version = 0;
  std::string compiler_version;
  std::string source_hash;  // sha256 of the sources, in path order
};

// The runtime matcher's compiled pattern database, precompiled by `reflexc
// build` so a start does not pay the compile (~0.2 s CPU for the shipped KB).
// Opaque to everything but the matcher, which uses it only when `key` equals
// the key it computes for this KB's patterns, its Hyperscan version and this
// CPU; otherwise (another machine, edited patterns, damage) it compiles.
struct MatcherCache {
  std::string key;
  std::vector<uint8_t, HugePageAllocator<uint8_t>> data;
  bool empty() const { return data.empty(); }
};

struct KnowledgeBase {
  KbMeta meta;
  ArtifactInfo artifact;
  MatcherCache matcher_cache;  // empty unless loaded from an artifact that has one
  std::vector<FaultClass> classes;
  std::vector<Nature> natures;        // declaration order
  std::vector<Signature> signatures;  // abstract signatures are not included
  std::vector<Latent> latents;
  std::vector<Rule> rules;
  std::vector<KbTest> tests;

  // Lookups by name (linear scans are fine off the hot path; the runtime
  // builds its own indexes).
  const Signature* find_signature(const std::string& name) const;
  const Latent* find_latent(const std::string& name) const;
  const FaultClass* find_class(const std::string& name) const;
  const Nature* find_nature(const std::string& name) const;
  // Whether a root of nature `n` is drained: a declared nature says so; a
  // root without a nature, or a KB that declares none, is a device at fault.
  bool nature_evicts(const std::string& n) const;
  // The standard class at the top of `cls`'s parent chain ("" if unknown).
  std::string standard_class(const std::string& cls) const;
};

// 2: natures (and whether each evicts) are recorded; a format-1 artifact
// would drain user-code roots, so it is refused and rebuilt.
constexpr int kArtifactFormatVersion = 4;

}  // namespace reflex
