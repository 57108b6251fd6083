// The reasoner's first stage, the backward walk: from the start nodes, each
// node's event is tried as the effect of every rule that names it, and the
// cause events the index holds within the rule's window and `where` become
// nodes and edges of the incident graph. Candidates come from the event index
// by name (and by name+device when a `where` relation pins the cause's
// device); a rule whose cause is a latent is left to the hypotheses stage.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "reasoner_graph.h"

namespace reflex::engine::reasoning {

class CauseWalk {
 public:
  explicit CauseWalk(IncidentGraph& g)
      : g_(g), kb_(g.kb), ki_(g.ki), topo_(g.topo), ix_(g.ix), o_(g.opts), in_(g.ix.interner()) {}

  // Expands every node reachable from these; a node is expanded once per run.
  void walk(const std::vector<uint32_t>& start_nodes);
  // True (with a note) for an event a `cleared_by` event healed: transient.
  bool skip_healed(uint32_t ev);
  // (effect node, rule) for each rule met whose cause is a latent.
  const std::vector<std::pair<uint32_t, const Rule*>>& latent_requests() const {
    return latent_requests_;
  }

 private:
  void expand_node(uint32_t n);
  // The events of `name` on these devices with lo in [lower, upper], nearest first.
  void events_on_devices(uint32_t name, const std::vector<uint32_t>& devs, int64_t lower,
                         int64_t upper, std::vector<uint32_t>* found) const;
  // Whether a window of n events was probed by device (probe(max devices)).
  template <class Probe>
  bool probe_window(size_t n, const Rule& r, Probe&& probe);
  template <class F>
  void candidates(uint32_t effect_ev, const Rule& r, uint32_t cause_name, F&& accept);
  rules::WindowFit window(const Rec& c, const Rec& e, const Rule& r) const {
    return rules::window_fit(c, e, c.clock == e.clock, r, o_.clock_skew_s);
  }
  // When a `cleared_by` event healed event `ev`: its wall time, else kNoWall.
  int64_t healed_at(uint32_t ev);
  // True when the rule's `where` holds between two events: devices by
  // topology id (names only for bindings and devices not in the topology).
  bool where_ok(const Rule& r, uint32_t cause_ev, uint32_t effect_ev) const;
  // The device a reference names, and its topology id when known.
  const std::string* resolve_id(const DeviceRef& ref, uint32_t cause_ev, uint32_t effect_ev,
                                Topology::DeviceId* id) const;

  IncidentGraph& g_;
  const KnowledgeBase& kb_;
  const KbIndex& ki_;
  const Topology& topo_;
  EventIndex& ix_;
  const EngineOptions& o_;
  Interner& in_;

  std::vector<uint32_t> pending_;
  std::vector<uint8_t> expanded_;  // per node
  std::vector<std::pair<uint32_t, const Rule*>> latent_requests_;
  std::unordered_map<uint32_t, int64_t> healed_;
  // Scratch of the device probe (accept() never re-enters candidates()).
  std::vector<Topology::DeviceId> topo_ids_;
  std::vector<uint32_t> probe_devs_, probe_found_;
  // The query topo_ids_ answers: an effect's rules probe its one device
  // under the same relation several times (a rank's GPU for each fault
  // name that runs_on ties to it), and the answer does not change.
  struct RelatedQuery {
    Relation rel;
    Topology::DeviceId id;
    bool lhs;
    DeviceKind kind;
    size_t limit;
  };
  std::optional<RelatedQuery> related_q_;
  // topo_.related_device_ids() into topo_ids_, unless it holds the answer:
  // all of it (at most the limit it was asked with), or more than `limit`.
  void related_ids(Relation rel, Topology::DeviceId id, bool lhs, DeviceKind kind, size_t limit);
  // Small-window probes that found too many related devices, by rule index:
  // the scan finds the same candidates, so a rule whose probes keep missing
  // (e.g. same_job from a rank: the whole job relates) stops trying them.
  std::vector<uint8_t> small_probe_misses_;
  bool small_probe_worth(const Rule& r) const;
  void small_probe_missed(const Rule& r);
  U32Map scan_hint_of_;  // cause name -> scan_hints_ slot
  std::vector<std::pair<size_t, size_t>> scan_hints_;

  // The scanned window of a rule's cause events, as the scan reads them:
  // the ~512 effects of an incident scan the same window, and reading each
  // candidate's record, device id and heal time from one contiguous array
  // misses the cache once per window instead of once per (effect, cause).
  // Filled in scan order (latest first) as far as a scan got.
  struct WinEv {
    rules::EventSpan span;
    int64_t heal;  // healed_at(ev), or kHealUnknown until first needed
    uint32_t clock;
    Topology::DeviceId topo;  // of the event's own device
    int32_t job;              // topo_.same_job_key(topo)
    uint32_t ev;
  };
  static constexpr int64_t kHealUnknown = kNoWall + 1;
  struct Window {
    size_t bi = 0, ei = 0;  // nl->wall[bi, ei) of the cause name
    std::vector<WinEv> evs;
  };
  std::vector<Window> windows_;  // by rule index
  // Per rule index: 1 when every `where` reference is an event's own device
  // (no binding), so the check needs only the two cached topology ids.
  std::vector<uint8_t> plain_where_;
  Window* window_of(const Rule& r, size_t bi, size_t ei);
  // An event's own device: its topology id and same_job key.
  struct DevKey {
    Topology::DeviceId id;
    int32_t job;
  };
  bool where_ok_ids(const Rule& r, uint32_t cause_ev, DevKey cause, uint32_t effect_ev,
                    DevKey effect) const;
  // consider() of candidates() over nl.wall[bi, ei), latest first, through the
  // rule's window (it counts into *scanned and *taken as consider() does).
  template <class F>
  void scan_window(const Rule& r, const NameList& nl, size_t bi, size_t ei, uint32_t effect_ev,
                   const Rec& er, size_t* scanned, size_t* taken, F& accept);
};

}  // namespace reflex::engine::reasoning
