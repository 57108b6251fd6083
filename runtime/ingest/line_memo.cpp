// The `when` memo's table: which patterns it serves and its lookups (the
// line memo itself is small enough to live in line_memo.h).
#include "line_memo.h"

#include <algorithm>

namespace reflex::ingest {

namespace {
// The fields a condition reads; *regex: it has a `matches` (an RE2 run per evaluation).
void condition_fields(const Condition& c, std::vector<std::string>* out, bool* regex) {
  for (const Condition& k : c.children) condition_fields(k, out, regex);
  if (c.op == Condition::Op::matches) *regex = true;
  if (!c.field.empty() && std::find(out->begin(), out->end(), c.field) == out->end())
    out->push_back(c.field);
}
}  // namespace

void WhenMemo::build(const Matcher& matcher) {
  const auto& pats = matcher.patterns();
  const auto& sigs = matcher.signatures();
  patterns_.resize(pats.size());
  for (size_t p = 0; p < pats.size(); ++p) {
    PatternMemo& m = patterns_[p];
    size_t conditions = 0;
    bool regex = false;
    for (uint32_t si : pats[p].first_of) {
      const Signature& sig = *sigs[si].sig;
      if (sig.suspect || sigs[si].part_pattern.size() > 1 || !sig.when) continue;
      ++conditions;
      condition_fields(*sig.when, &m.fields, &regex);
    }
    // A few comparisons are as cheap to evaluate as a lookup; a regex is not
    // (a throttle-reasons `matches` on every telemetry sample).
    m.on = (conditions >= 4 || (conditions >= 1 && regex)) && m.fields.size() <= 4;
  }
}

const std::vector<uint8_t>* WhenMemo::row(const Matcher& matcher,
                                          const std::vector<uint32_t>& typing_class, uint32_t p,
                                          uint32_t cls, const FieldValues& typed) {
  PatternMemo& m = patterns_[p];
  if (!m.on) return nullptr;
  key_.assign(reinterpret_cast<const char*>(&cls), sizeof cls);
  for (const std::string& f : m.fields) {
    auto it =
        std::find_if(typed.begin(), typed.end(), [&](const auto& kv) { return kv.first == f; });
    if (it == typed.end()) {
      key_ += '\x01';  // absent
    } else {
      key_ += '\x02';
      key_ += it->second;
      key_ += '\0';
    }
  }
  ++m.lookups;
  auto hit = m.rows.find(key_);
  if (hit != m.rows.end()) return &hit->second;
  ++m.misses;
  // Mostly distinct values (a temperature, a counter): the memo does not pay.
  if (m.lookups >= 2048 && m.misses * 2 > m.lookups) {
    m.on = false;
    m.rows.clear();
    return nullptr;
  }
  const auto& pats = matcher.patterns();
  const auto& sigs = matcher.signatures();
  const auto& first = pats[p].first_of;
  std::vector<uint8_t> r(first.size(), 0);
  for (size_t j = 0; j < first.size(); ++j)
    if (typing_class[first[j]] == cls) r[j] = sigs[first[j]].compiled->when_holds(typed);
  if (m.rows.size() >= kRows) {
    scratch_row_ = std::move(r);
    return &scratch_row_;
  }
  return &m.rows.emplace(key_, std::move(r)).first->second;
}

}  // namespace reflex::ingest
