#include "storms.h"

#include <algorithm>
#include <cmath>

#include "reflex/values.h"

namespace reflex::ingest {

namespace {
TimeUs seconds_to_us(double s) {
  return static_cast<TimeUs>(std::llround(s * 1e6));
}

// The per-(signature, device) state key, in one place for baseline,
// aggregate and dedup; `by_fields` (dedup's `by`) appends those fields' values.
void state_key_into(std::string* k, uint32_t sig_idx, const std::string& device,
                    const std::vector<std::string>* by_fields = nullptr,
                    const FieldValues* fields = nullptr) {
  k->clear();
  *k += std::to_string(sig_idx);
  *k += '\x1f';
  *k += device;
  if (!by_fields) return;
  for (const std::string& f : *by_fields) {
    *k += '\x1f';
    for (const auto& [n, v] : *fields)
      if (n == f) {
        *k += v;
        break;
      }
  }
}

std::string state_key(uint32_t sig_idx, const std::string& device) {
  std::string k;
  state_key_into(&k, sig_idx, device);
  return k;
}
}  // namespace

bool StormFilter::window_time(const EventTime& time, TimeUs* t) {
  if (time.wall) {
    *t = *time.wall;
    return true;
  }
  if (time.mono) {
    *t = seconds_to_us(*time.mono);
    return true;
  }
  *t = 0;
  return false;
}

bool StormFilter::baseline_passes(uint32_t sig_idx, const Signature& sig, const FieldValues& fields,
                                  const std::string& device) {
  const std::string* raw = nullptr;
  for (const auto& [k, v] : fields)
    if (k == sig.baseline.field) {
      raw = &v;
      break;
    }
  if (pass_baseline(sig_idx, sig, raw, device)) return true;
  ++c_->below_baseline;
  return false;
}

void StormFilter::add(uint32_t sig_idx, const Signature& sig, Event&& ev, const Emit& emit,
                      bool baseline_judged) {
  if (!baseline_judged && has_baseline(sig) &&
      !pass_baseline(sig_idx, sig, ev.field(sig.baseline.field), ev.device)) {
    ++c_->below_baseline;
    return;
  }
  if (sig.aggregate.count_at_least > 1 && !pass_aggregate(sig_idx, sig, &ev)) {
    ++c_->below_aggregate;
    return;
  }
  dedup(sig_idx, sig, std::move(ev), emit);
}

bool StormFilter::pass_baseline(uint32_t sig_idx, const Signature& sig, const std::string* raw,
                                const std::string& device) {
  std::optional<double> v = raw ? parse_float(*raw) : std::nullopt;
  if (!v || !std::isfinite(*v)) return false;
  state_key_into(&key_, sig_idx, device);
  auto it = baseline_.find(key_);
  if (it == baseline_.end()) it = baseline_.emplace(key_, BaseState{}).first;
  BaseState& st = it->second;
  size_t n = static_cast<size_t>(sig.baseline.window);
  if (st.ring.size() != n) {
    st.ring.assign(n, 0.0);
    st.sorted.clear();
    st.sorted.reserve(n);
    st.head = st.size = 0;
  }
  bool fire = false;
  size_t need = (n + 1) / 2;  // judge only with at least half a window of history
  if (st.size >= need) {
    const std::vector<double>& w = st.sorted;  // the window's values, ascending
    size_t m = w.size();
    double median = w[m / 2];
    if (m % 2 == 0) median = (median + w[m / 2 - 1]) / 2;
    fire =
        sig.baseline.below ? *v < sig.baseline.factor * median : *v > sig.baseline.factor * median;
  }
  // The ring holds the last N values, anomalous ones included: a lasting
  // change becomes the new normal after about N/2 lines.
  if (st.size == n) {  // evict the oldest value from the sorted copy
    auto old = std::lower_bound(st.sorted.begin(), st.sorted.end(), st.ring[st.head]);
    if (old != st.sorted.end()) st.sorted.erase(old);
  }
  st.sorted.insert(std::upper_bound(st.sorted.begin(), st.sorted.end(), *v), *v);
  st.ring[st.head] = *v;
  st.head = (st.head + 1) % n;
  if (st.size < n) ++st.size;
  return fire;
}

bool StormFilter::pass_aggregate(uint32_t sig_idx, const Signature& sig, Event* ev) {
  TimeUs t;
  window_time(*ev, &t);
  AggState& st = aggregate_[state_key(sig_idx, ev->device)];
  size_t n = static_cast<size_t>(sig.aggregate.count_at_least);
  if (st.ring.size() != n) st.ring.assign(n, 0);
  st.ring[st.head] = t;
  st.head = (st.head + 1) % n;
  if (st.size < n) ++st.size;
  if (st.size < n) return false;
  // Full ring: the oldest of the last N lines is at head.
  TimeUs oldest = st.ring[st.head];
  TimeUs limit = seconds_to_us(sig.aggregate.within_s);
  if (t - oldest > limit) return false;
  ev->count = n;
  if (ev->time.wall) {
    ev->first = oldest;
    ev->last = t;
  }
  st.size = 0;  // the window restarts after firing
  st.head = 0;
  return true;
}

bool StormFilter::try_fold(uint32_t sig_idx, const Signature& sig, const std::string& device,
                           const FieldValues& fields, const EventTime& time) {
  if (has_baseline(sig) || sig.aggregate.count_at_least > 1) return false;
  const double window = dedup_window(sig);
  if (window <= 0 || dedup_.empty()) return false;
  state_key_into(&key_, sig_idx, device, &sig.dedup.by_fields, &fields);  // as dedup() keys it
  auto it = dedup_.find(key_);
  if (it == dedup_.end()) return false;
  TimeUs t;
  const bool timed = window_time(time, &t);
  Fold& f = it->second;
  const bool same_clock = f.wall == time.wall.has_value();
  const TimeUs lo = std::min(f.first, t), hi = std::max(f.last, t);
  if (!same_clock || !(!timed || !f.timed || hi - lo <= seconds_to_us(window))) return false;
  if (timed && f.timed) {
    f.first = lo;
    f.last = hi;
  }
  f.ev.count += 1;  // a fresh event's count
  ++c_->folded_by_dedup;
  ++generation_;
  return true;
}

void StormFilter::dedup(uint32_t sig_idx, const Signature& sig, Event&& ev, const Emit& emit) {
  double window = dedup_window(sig);
  if (window <= 0) {
    emit(std::move(ev));
    return;
  }
  std::string key;
  state_key_into(&key, sig_idx, ev.device, &sig.dedup.by_fields, &ev.fields);
  TimeUs t;
  bool timed = window_time(ev, &t);
  TimeUs first_t = ev.first.value_or(t), last_t = ev.last.value_or(t);
  TimeUs w = seconds_to_us(window);
  auto it = dedup_.find(key);
  if (it != dedup_.end()) {
    Fold& f = it->second;
    bool same_clock = f.wall == ev.time.wall.has_value();
    TimeUs lo = std::min(f.first, first_t), hi = std::max(f.last, last_t);
    if (same_clock && (!timed || !f.timed || hi - lo <= w)) {
      if (timed && f.timed) {
        f.first = lo;
        f.last = hi;
      }
      f.ev.count += ev.count;
      ++c_->folded_by_dedup;
      ++generation_;
      return;
    }
    // Outside the window: the old fold is complete.
    Fold done = std::move(f);
    dedup_.erase(it);
    if (done.wall) deadlines_.erase({done.first + w, key});
    close_fold(std::move(done), emit);
  }
  Fold nf;
  nf.first = first_t;
  nf.last = last_t;
  nf.timed = timed;
  nf.wall = ev.time.wall.has_value();
  nf.ev = std::move(ev);
  if (announce_) {
    // The first sighting goes out now, as the fold would close with it alone.
    Event now = nf.ev;
    if (nf.wall) {
      now.first = nf.first;
      now.last = nf.last;
    }
    nf.announced = true;
    nf.said_count = now.count;
    nf.said_first = nf.first;
    nf.said_last = nf.last;
    emit(std::move(now));
  }
  if (nf.wall) deadlines_.insert({nf.first + w, key});
  dedup_.emplace(std::move(key), std::move(nf));
  ++generation_;  // also covers the fold closed above
}

void StormFilter::advance(TimeUs now, const Emit& emit) {
  while (!deadlines_.empty() && deadlines_.begin()->first < now) {
    std::string key = deadlines_.begin()->second;
    deadlines_.erase(deadlines_.begin());
    auto it = dedup_.find(key);
    if (it == dedup_.end()) continue;
    Fold done = std::move(it->second);
    dedup_.erase(it);
    ++generation_;
    close_fold(std::move(done), emit);
  }
}

void StormFilter::close_fold(Fold&& done, const Emit& emit) {
  if (done.announced && done.ev.count == done.said_count &&
      (!done.wall || (done.first == done.said_first && done.last == done.said_last)))
    return;
  if (done.wall) {
    done.ev.first = done.first;
    done.ev.last = done.last;
  }
  emit(std::move(done.ev));
}

void StormFilter::flush(const Emit& emit) {
  // Deterministic order: by first time, then ingest order.
  std::vector<Fold> folds;
  folds.reserve(dedup_.size());
  for (auto& [k, f] : dedup_) folds.push_back(std::move(f));
  if (!dedup_.empty()) ++generation_;
  dedup_.clear();
  deadlines_.clear();
  std::sort(folds.begin(), folds.end(),
            [](const Fold& a, const Fold& b) { return a.ev.seq < b.ev.seq; });
  for (Fold& f : folds) close_fold(std::move(f), emit);
}

void StormFilter::for_each(const std::function<void(const Event&)>& fn) const {
  // Ingest order of the first line: deterministic, and the order emission
  // would have used at finish().
  std::vector<const Fold*> folds;
  folds.reserve(dedup_.size());
  for (const auto& [k, f] : dedup_) folds.push_back(&f);
  std::sort(folds.begin(), folds.end(),
            [](const Fold* a, const Fold* b) { return a->ev.seq < b->ev.seq; });
  for (const Fold* f : folds) {
    if (!f->wall) {
      fn(f->ev);
      continue;
    }
    // As emit() would give it, with first/last as they stand now.
    Event ev = f->ev;
    ev.first = f->first;
    ev.last = f->last;
    fn(ev);
  }
}

}  // namespace reflex::ingest
