#include "inherited_times.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "index.h"

namespace reflex::engine {

void InheritedTimes::settle(const EventIndex& ix) {
  if (events_.empty() || settled_at_ == ix.size()) return;
  settled_at_ = ix.size();
  // The lines (and times) of the events with a time of their own, in the
  // files that hold an inherited one.
  std::unordered_map<uint32_t, std::vector<std::pair<uint32_t, int64_t>>> own;
  for (uint32_t i : events_) own.try_emplace(ix.evidence_file(i));
  for (uint32_t i = 0; i < ix.size(); ++i) {
    if (!ix.time_is_own(i)) continue;
    auto it = own.find(ix.evidence_file(i));
    if (it != own.end()) it->second.emplace_back(ix.evidence_line(i), ix.rec(i).lo);
  }
  for (auto& [file, lines] : own) std::sort(lines.begin(), lines.end());
  for (uint32_t i : events_) {
    const auto& lines = own[ix.evidence_file(i)];
    auto next =
        std::upper_bound(lines.begin(), lines.end(),
                         std::make_pair(ix.evidence_line(i), std::numeric_limits<int64_t>::max()));
    const int64_t bound = next != lines.end() ? next->second : ix.max_wall();
    latest_[i] = std::max(ix.rec(i).hi, bound);
  }
}

}  // namespace reflex::engine
