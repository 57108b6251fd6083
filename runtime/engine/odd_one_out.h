// The odd one out (docs/language.md §7.1): a latent declared with
// `odd_one_out EVENT.FIELD among REL` stands only on a device whose value of
// FIELD, in its EVENT lines, differs from the value most of its peers under
// REL share (one host running another NCCL build). The pass finds those
// devices once per diagnosis; rules then place the latent only there.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "index.h"
#include "reflex/kb.h"
#include "reflex/topology.h"

namespace reflex::engine {

struct OddFinding {
  const OddOneOut* form = nullptr;
  std::string place;               // where the latent stands: the odd device, or its host
  std::string device;              // the device whose value differs
  std::string value;               // its differing value (the first, when several)
  std::string majority;            // the value most of its peers share
  size_t agree = 0;                // peers holding `majority`
  size_t peers = 0;                // devices of its group that showed FIELD (itself included)
  std::vector<uint32_t> evidence;  // its lines with a differing value (earliest first, a few)
};

class OddOneOutPass {
 public:
  // Scans the EVENT lines of every `odd_one_out` latent (bounded); cheap when none.
  void compute(const KnowledgeBase& kb, const Topology& topo, EventIndex& ix);
  bool computed() const { return computed_; }
  bool found(const std::string& latent) const { return by_latent_.count(latent) != 0; }
  // The devices where `lat` may stand for effect `e` under rule `r`: its
  // findings whose place satisfies the rule's `where` (empty: none).
  std::vector<std::string> placements(const Latent& lat, const Rule& r, const Event& e,
                                      const Topology& topo) const;
  // The finding that put `lat` on `place` (nullptr: none).
  const OddFinding* finding(const Latent& lat, const std::string& place) const;
  // "odd one out: ..." with the evidence, for the diagnosis notes.
  std::string describe(const Latent& lat, const OddFinding& f, const EventIndex& ix) const;
  bool truncated() const { return truncated_; }
  // Groups whose devices disagree with no majority (nobody named): for the notes.
  const std::vector<std::string>& splits() const { return splits_; }

 private:
  std::map<std::string, std::vector<OddFinding>> by_latent_;
  bool computed_ = false;
  bool truncated_ = false;
  std::vector<std::string> splits_;
};

}  // namespace reflex::engine
