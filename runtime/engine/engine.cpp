// The Engine: event intake, incidents with a settle window, revisions, reload.
#include "reflex/engine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <unordered_set>

#include "fold_updates.h"
#include "index.h"
#include "ingest_summary.h"
#include "reflex/artifact.h"
#include "reflex/event_json.h"
#include "reflex/ingest.h"
#include "unclassified.h"

namespace reflex {

using engine::EventIndex;
using engine::Interner;
using engine::KbIndex;
using engine::kNoWall;

bool validate_kb_for_engine(const KnowledgeBase& kb, std::string* error) {
  std::string why;
  if (!engine_version_satisfies(engine_version(), kb.meta.requires_engine, &why)) {
    if (error)
      *error = "knowledge base requires engine " + kb.meta.requires_engine + ", this is " +
               engine_version() + (why.empty() ? "" : ": " + why);
    return false;
  }
  std::set<std::string> sigs, lats;
  for (auto& s : kb.signatures) sigs.insert(s.name);
  for (auto& l : kb.latents) lats.insert(l.name);
  for (auto& r : kb.rules) {
    if (!sigs.count(r.cause) && !lats.count(r.cause)) {
      if (error)
        *error = r.loc.str() + ": rule '" + r.name + "' names unknown cause '" + r.cause + "'";
      return false;
    }
    if (!sigs.count(r.effect)) {
      if (error)
        *error = r.loc.str() + ": rule '" + r.name + "' names unknown effect '" + r.effect + "'";
      return false;
    }
  }
  return true;
}

namespace {

std::string diag_signature(const Diagnosis& d) {
  std::string s;
  for (auto& r : d.root_causes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", r.score);
    s += r.device + "|" + r.event + "|" + buf + "|" + std::to_string(r.chain.size()) + ";";
  }
  s += "#u" + std::to_string(d.unexplained.size()) + "#s" + std::to_string(d.symptoms);
  return s;
}

// Batch order: the principal incident first — the one whose root cause
// accounts for the most job-level symptoms and is not itself explained by
// another incident, i.e. what took the job down — then the rest by trigger time. A stray early
// symptom (an untimed line that inherited a stale time, a peer's retry that could not be tied to
// the fault) must not become the headline of the document just because it came first.
const std::string kNoText;

bool sort_diagnoses(const Diagnosis& a, const Diagnosis& b) {
  auto t = [](const Diagnosis& d) -> int64_t {
    if (d.trigger && d.trigger->time.wall) return *d.trigger->time.wall;
    return std::numeric_limits<int64_t>::max();
  };
  if (t(a) != t(b)) return t(a) < t(b);
  // Same time (often: no time at all): by the trigger's device and line, so
  // the order is the input's, not that of the incident ids' hash, which
  // changes with the directory the input was read from.
  auto where = [](const Diagnosis& d) {
    return d.trigger ? std::tie(d.trigger->device, d.trigger->evidence)
                     : std::tie(kNoText, kNoText);
  };
  if (where(a) != where(b)) return where(a) < where(b);
  return a.incident < b.incident;
}

// True when `d`'s first root appears as an effect (a link after the first) in
// another incident's chains: that incident explains it, so it is not the
// principal one however many symptoms it accounts for.
bool explained_elsewhere(const Diagnosis& d, const std::vector<Diagnosis>& all) {
  if (d.root_causes.empty() || d.root_causes[0].chain.empty()) return false;
  const EventRef& r = d.root_causes[0].chain[0].ev;
  if (r.latent) return false;  // a hypothesis is never another incident's effect
  for (const Diagnosis& o : all) {
    if (&o == &d) continue;
    for (const RootCause& rc : o.root_causes)
      for (size_t k = 1; k < rc.chain.size(); ++k) {
        const EventRef& e = rc.chain[k].ev;
        if (e.event == r.event && e.device == r.device && e.evidence == r.evidence &&
            e.time.wall == r.time.wall)
          return true;
      }
  }
  return false;
}

// The principal incident: its first root explains the most
// job-level symptoms and is itself unexplained; the count of symptoms the
// incident merely holds (a wave that no root explains) does not decide.
struct PrincipalKey {
  bool rooted, unexplained;
  int explains, symptoms;
};

PrincipalKey principal_key(const Diagnosis& d, const std::vector<Diagnosis>& all) {
  const bool rooted = !d.root_causes.empty();
  return {rooted, !explained_elsewhere(d, all), rooted ? d.root_causes[0].explains : 0, d.symptoms};
}

bool principal_before(const PrincipalKey& ka, const Diagnosis& a, const PrincipalKey& kb,
                      const Diagnosis& b) {
  if (ka.rooted != kb.rooted) return ka.rooted;
  if (ka.unexplained != kb.unexplained) return ka.unexplained;
  if (ka.explains != kb.explains) return ka.explains > kb.explains;
  if (ka.symptoms != kb.symptoms) return ka.symptoms > kb.symptoms;
  return sort_diagnoses(a, b);
}

// Batch: every symptom grouped by job (and by time gaps), each group diagnosed.
std::vector<Diagnosis> batch(const KnowledgeBase& kb, const KbIndex& ki, const Topology& topo,
                             EventIndex& ix, const EngineOptions& o) {
  struct S {
    std::string key;
    int64_t t;
    uint32_t ev;
  };
  std::vector<S> syms;
  for (uint32_t i = 0; i < ix.size(); ++i) {
    if (!ki.is_symptom(ix.rec(i).name)) continue;
    const auto& r = ix.rec(i);
    syms.push_back({engine::job_key(ix, i, topo), r.has_wall() ? r.lo : kNoWall, i});
  }
  if (syms.empty()) return engine::diagnose_symptoms(kb, ki, topo, ix, {}, o);
  std::stable_sort(syms.begin(), syms.end(), [](const S& a, const S& b) {
    if (a.key != b.key) return a.key < b.key;
    return a.t < b.t;
  });
  std::vector<Diagnosis> out;
  int64_t gap = static_cast<int64_t>(o.incident_gap_s * 1e6);
  size_t i = 0;
  while (i < syms.size()) {
    size_t j = i + 1;
    while (j < syms.size() && syms[j].key == syms[i].key &&
           (syms[j].t == kNoWall || syms[j - 1].t == kNoWall || syms[j].t - syms[j - 1].t <= gap))
      ++j;
    std::vector<uint32_t> group;
    for (size_t k = i; k < j; ++k) group.push_back(syms[k].ev);
    auto ds = engine::diagnose_symptoms(kb, ki, topo, ix, group, o);
    for (auto& d : ds) out.push_back(std::move(d));
    i = j;
  }
  std::stable_sort(out.begin(), out.end(), sort_diagnoses);
  if (out.size() > 1) {
    std::vector<PrincipalKey> keys;
    for (const Diagnosis& d : out) keys.push_back(principal_key(d, out));
    size_t best = 0;
    for (size_t k = 1; k < out.size(); ++k)
      if (principal_before(keys[k], out[k], keys[best], out[best])) best = k;
    std::rotate(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(best),
                out.begin() + static_cast<std::ptrdiff_t>(best) + 1);
  }
  return out;
}

}  // namespace

std::vector<Diagnosis> diagnose_events(const KnowledgeBase& kb, const Topology& topo,
                                       std::vector<Event> events, const EngineOptions& opts) {
  try {
    Interner in;
    EventIndex ix(&in);
    KbIndex ki(kb, &in);
    // Each event's strings are freed once indexed, the array before the
    // diagnosis: the index's compact copy is all that is read from here on.
    for (auto& e : events) ix.add(Event(std::move(e)));
    std::vector<Event>().swap(events);
    return batch(kb, ki, topo, ix, opts);
  } catch (const std::exception& e) {
    Diagnosis d;
    d.notes.push_back(std::string("internal error: ") + e.what());
    d.incident = "inc-error";
    return {d};
  }
}

bool event_from_json(std::string_view json_line, const KnowledgeBase& kb, const Topology& topo,
                     Event* out, std::string* error) {
  auto e = parse_event_json(json_line, error, &kb, &topo);
  if (e) *out = std::move(*e);
  return e.has_value();
}

struct Engine::Impl {
  mutable std::mutex mu;
  std::shared_ptr<const KnowledgeBase> kb;
  std::shared_ptr<const Topology> topo;
  EngineOptions o;
  Interner in;
  std::string last_input_host;  // feed_line: the host marked last (see mark_input_host)
  std::unique_ptr<EventIndex> ix;
  std::unique_ptr<KbIndex> ki;
  std::unordered_set<uint32_t> relevant;  // names that appear in some rule
  std::unique_ptr<Ingestor> ing;
  IngestStats ingest_done;  // stats of ingestors replaced by reloads
  DiagnosisCallback cb;
  std::function<void(const Event&)> tap;
  std::deque<Diagnosis> queue;
  EngineStats st;
  int64_t watermark = kNoWall;
  size_t compact_floor = 0;  // no retention pass below this size (see maybe_compact)

  struct Incident {
    std::string key;
    std::vector<uint32_t> syms;
    int64_t first = kNoWall, last = kNoWall, activity = kNoWall;
    int64_t deadline = kNoWall;
    std::chrono::steady_clock::time_point steady_deadline;
    bool dirty = true, emitted = false;
    // Opened by fault evidence (EngineOptions::fault_incidents): its faults
    // (name|device|evidence) and the incident ids it answered with.
    bool by_fault = false;
    std::set<std::string> faults;
    std::vector<std::string> answered;
  };
  std::vector<Incident> open;
  std::map<std::string, std::pair<int, std::string>> revisions;  // incident id -> (rev, signature)
  std::vector<Diagnosis> out;  // to deliver once the lock is released

  void rebuild_kb_index() {
    ki = std::make_unique<KbIndex>(*kb, &in);
    relevant.clear();
    for (auto& r : kb->rules) {
      relevant.insert(in.id(r.cause));
      relevant.insert(in.id(r.effect));
    }
    if (o.fault_incidents)  // a clear re-answers a fault incident (healed)
      for (auto& s : kb->signatures)
        for (auto& c : s.cleared_by) relevant.insert(in.id(c));
  }

  // Built on the first line, envelope or bundle, not with the engine: an
  // engine fed only decoded events (a diagnoser's shard, feed_event) never
  // needs the pattern database, scratch and parsers it holds (~4 MiB each).
  Ingestor& ingestor() {
    if (!ing) {
      ing = std::make_unique<Ingestor>(*kb, *topo, o.ingest);
      ing->set_sink([this](Event&& e) { on_event(std::move(e)); });
    }
    return *ing;
  }

  void finish_ingestor() {
    if (!ing) {  // never built: as a fresh ingestor (generation 0) would have moved it
      storm_generation_base += 1;
      return;
    }
    ing->finish();
    engine::merge_ingest_stats(&ingest_done, ing->stats(), o.ingest.unrecognized_samples);
    // The next ingestor counts its storm generations from 0 again: keep the
    // engine's generation moving forward across the swap (OpenStorms).
    ing->with_open_storms(
        [&](const OpenStorms& os) { storm_generation_base += os.generation() + 1; });
    ing.reset();
  }
  uint64_t storm_generation_base = 0;

  std::chrono::steady_clock::time_point steady_after_settle() const {
    return std::chrono::steady_clock::now() +
           std::chrono::microseconds(static_cast<int64_t>(o.settle_s * 1e6));
  }

  engine::FoldUpdates updates;  // IngestOptions::announce_folds (fold_updates.h)
  void on_event(Event&& ev) {
    uint32_t u = o.ingest.announce_folds ? updates.merge(*ix, in, ev) : engine::kNone;
    if (u == engine::FoldUpdates::kUnchanged) return;
    if (tap && u == engine::kNone) tap(ev);
    uint32_t i = u != engine::kNone ? u : (++st.events, ix->add(std::move(ev)));
    const auto& r = ix->rec(i);
    if (r.has_wall()) watermark = std::max(watermark, u != engine::kNone ? updates.last(i) : r.hi);
    int64_t t = r.has_wall() ? r.lo : watermark;
    int64_t settle = static_cast<int64_t>(o.settle_s * 1e6);
    if (ki->is_symptom(r.name) && u == engine::kNone) {
      ++st.symptoms;
      std::string key = engine::job_key(*ix, i, *topo);
      int64_t gap = static_cast<int64_t>(o.incident_gap_s * 1e6);
      for (auto& inc : open) {
        if (inc.key != key) continue;
        if (t != kNoWall && inc.first != kNoWall && (t < inc.first - gap || t > inc.last + gap))
          continue;
        inc.syms.push_back(i);
        if (t != kNoWall) {
          inc.first = inc.first == kNoWall ? t : std::min(inc.first, t);
          inc.last = inc.last == kNoWall ? t : std::max(inc.last, t);
          inc.activity = std::max(inc.activity, t);
        }
        if (inc.emitted && !inc.dirty) {
          inc.deadline = (watermark == kNoWall ? t : watermark) + settle;
          inc.steady_deadline = steady_after_settle();
        }
        inc.dirty = true;
        return;
      }
      Incident inc;
      inc.key = key;
      inc.syms.push_back(i);
      inc.first = inc.last = inc.activity = t;
      inc.deadline = t == kNoWall ? kNoWall : t + settle;
      inc.steady_deadline = steady_after_settle();
      open.push_back(std::move(inc));
      ++st.incidents_opened;
      return;
    }
    int64_t back = static_cast<int64_t>((ki->max_window_s + o.clock_skew_s) * 1e6);
    int64_t linger = static_cast<int64_t>(o.linger_s * 1e6);
    if (o.fault_incidents) note_fault(i, t, back, linger);
    if (!relevant.count(r.name)) return;
    for (auto& inc : open) {
      if (t != kNoWall && inc.first != kNoWall && (t < inc.first - back || t > inc.last + linger))
        continue;
      if (t != kNoWall) inc.activity = std::max(inc.activity, t);
      if (inc.emitted && !inc.dirty) {
        inc.deadline = (watermark == kNoWall ? t : watermark) + settle;
        inc.steady_deadline = steady_after_settle();
      }
      inc.dirty = true;
    }
  }

  static std::string fault_key(const std::string& name, const std::string& device,
                               const std::string& evidence) {
    return name + "|" + device + "|" + evidence;
  }

  // Fault evidence of major or critical severity (not a fleet's background
  // trickle) that no open incident of its job covers opens an incident.
  void note_fault(uint32_t i, int64_t t, int64_t back, int64_t linger) {
    const Signature* s = ki->signature(ix->rec(i).name);
    if (!s || s->fault_class.empty() || s->background || s->severity < Severity::major) return;
    const Event& ev = ix->ev(i);
    std::string key = engine::job_key(*ix, i, *topo);
    for (auto& inc : open) {
      if (inc.key != key) continue;
      if (t != kNoWall && inc.first != kNoWall && (t < inc.first - back || t > inc.last + linger))
        continue;
      if (inc.by_fault) inc.faults.insert(fault_key(ev.name, ev.device, ev.evidence));
      return;
    }
    Incident inc;
    inc.key = key;
    inc.by_fault = true;
    inc.faults.insert(fault_key(ev.name, ev.device, ev.evidence));
    inc.first = inc.last = inc.activity = t;
    inc.deadline = t == kNoWall ? kNoWall : t + static_cast<int64_t>(o.settle_s * 1e6);
    inc.steady_deadline = steady_after_settle();
    open.push_back(std::move(inc));
    ++st.incidents_opened;
  }

  // A fault incident without symptoms: of the null-trigger answers over the
  // shard's evidence, those naming its faults; then an empty revision for
  // each id it answered with before and does not now (healed, or taken up by
  // a job symptom's incident).
  void fault_answers(Incident& inc, std::vector<Diagnosis>* ds) {
    auto names_fault = [&](const Diagnosis& d) {
      for (const RootCause& rc : d.root_causes)
        for (const ChainLink& l : rc.chain)
          if (inc.faults.count(fault_key(l.ev.event, l.ev.device, l.ev.evidence))) return true;
      return false;
    };
    if (inc.syms.empty())
      ds->erase(std::remove_if(ds->begin(), ds->end(),
                               [&](const Diagnosis& d) { return !names_fault(d); }),
                ds->end());
    std::vector<std::string> now;
    for (const Diagnosis& d : *ds) now.push_back(d.incident);
    for (const std::string& id : inc.answered)
      if (std::find(now.begin(), now.end(), id) == now.end()) {
        Diagnosis c;
        c.incident = id;
        c.notes.push_back(inc.syms.empty()
                              ? "the fault evidence no longer stands (cleared_by): resolved"
                              : "a job-level symptom joined: answered as a job incident");
        ds->push_back(std::move(c));
      }
    inc.answered = std::move(now);
  }

  void diagnose_incident(Incident& inc) {
    updates.apply(&ix, &in);
    auto ds = engine::diagnose_symptoms(*kb, *ki, *topo, *ix, inc.syms, o);
    if (inc.by_fault) fault_answers(inc, &ds);
    for (auto& d : ds) {
      std::string sig = diag_signature(d);
      auto it = revisions.find(d.incident);
      if (it != revisions.end() && it->second.second == sig) continue;
      int rev = it == revisions.end() ? 1 : it->second.first + 1;
      revisions[d.incident] = {rev, sig};
      d.revision = rev;
      ++st.diagnoses_emitted;
      if (rev > 1) ++st.revisions;
      out.push_back(std::move(d));
    }
    inc.dirty = false;
    inc.emitted = true;
  }

  void process(bool force) {
    auto now = std::chrono::steady_clock::now();
    for (auto& inc : open) {
      if (!inc.dirty) continue;
      bool due = force ||
                 (inc.deadline != kNoWall && watermark != kNoWall && watermark >= inc.deadline) ||
                 now >= inc.steady_deadline;
      if (due) diagnose_incident(inc);
    }
    int64_t linger = static_cast<int64_t>(o.linger_s * 1e6);
    if (force) {
      open.clear();
    } else {
      open.erase(std::remove_if(open.begin(), open.end(),
                                [&](const Incident& inc) {
                                  return inc.emitted && !inc.dirty && watermark != kNoWall &&
                                         inc.activity != kNoWall &&
                                         watermark > inc.activity + linger;
                                }),
                 open.end());
    }
    st.open_incidents = open.size();
    maybe_compact();
  }

  // Retention: beyond max_events, drop the oldest half of the events that no
  // open or next incident needs (events re-indexed from scratch). What an
  // incident needs is per name (KbIndex::keep_s): the KB's longest window
  // before its first symptom for what a diagnosis may blame, much less for
  // the echoes of earlier incidents and for chatter.
  void maybe_compact() {
    if (ix->size() <= std::max(o.max_events, compact_floor)) return;
    updates.apply(&ix, &in);
    std::vector<int64_t> times;
    times.reserve(ix->size());
    for (uint32_t i = 0; i < ix->size(); ++i)
      if (ix->rec(i).has_wall()) times.push_back(ix->rec(i).lo);
    if (times.empty()) {  // nothing has a wall time to cut by
      compact_floor = ix->size() + o.max_events / 4;
      return;
    }
    std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2),
                     times.end());
    const int64_t median = times[times.size() / 2];
    // From the first symptom of the oldest open incident, or from the newest
    // event (where the next incident will start) when none is open.
    int64_t first_open = watermark;
    for (auto& inc : open)
      if (inc.first != kNoWall)
        first_open = first_open == kNoWall ? inc.first : std::min(first_open, inc.first);
    std::vector<int64_t> cutoff_of(in.size(), kNoWall);  // by name, computed once each
    auto cutoff = [&](uint32_t name) {
      int64_t& c = cutoff_of[name];
      if (c == kNoWall)
        c = first_open == kNoWall
                ? median
                : std::min(median, first_open - static_cast<int64_t>(ki->keep_s(name) * 1e6));
      return c;
    };
    std::vector<uint32_t> remap(ix->size(), engine::kNone);
    auto fresh = std::make_unique<EventIndex>(&in);
    for (uint32_t i = 0; i < ix->size(); ++i) {
      const engine::Rec& r = ix->rec(i);
      if (r.lo != kNoWall && r.lo < cutoff(r.name)) {
        ++st.dropped_events;
        continue;
      }
      remap[i] = fresh->add(ix->ev(i));  // one event rebuilt at a time
    }
    fresh->carry_hosts(*ix);
    ix = std::move(fresh);
    // When open incidents pin most events, wait for more growth before the
    // next (O(events)) pass instead of re-indexing on every event.
    compact_floor = ix->size() > o.max_events / 4 * 3 ? ix->size() + o.max_events / 4 : 0;
    for (auto& inc : open) {
      std::vector<uint32_t> s;
      for (uint32_t x : inc.syms)
        if (remap[x] != engine::kNone) s.push_back(remap[x]);
      inc.syms = std::move(s);
    }
  }

  // Runs `f` under the lock, then hands the diagnoses it produced to the
  // callback (outside the lock) or to the poll queue.
  template <class F>
  void locked(F&& f) {
    std::vector<Diagnosis> ready;
    DiagnosisCallback c;
    {
      std::lock_guard<std::mutex> lk(mu);
      try {
        f();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "reflex engine: internal error: %s\n", e.what());
      } catch (...) {
        std::fprintf(stderr, "reflex engine: internal error\n");
      }
      ready = take_out();
      c = cb;
      if (!c)
        for (auto& d : ready) queue.push_back(std::move(d));
    }
    if (c)
      for (auto& d : ready) {
        try {
          c(d);
        } catch (...) {
          std::fprintf(stderr, "reflex engine: a diagnosis callback threw; ignored\n");
        }
      }
  }

  std::vector<Diagnosis> take_out() {
    std::vector<Diagnosis> v = std::move(out);
    out.clear();
    return v;
  }
};

Engine::Engine(std::shared_ptr<const KnowledgeBase> kb, std::shared_ptr<const Topology> topo,
               EngineOptions opts)
    : impl_(std::make_unique<Impl>()) {
  impl_->kb = kb ? std::move(kb) : std::make_shared<KnowledgeBase>();
  impl_->topo = topo ? std::move(topo) : std::shared_ptr<const Topology>(Topology::empty());
  impl_->o = opts;
  impl_->ix = std::make_unique<EventIndex>(&impl_->in);
  impl_->rebuild_kb_index();
}

Engine::~Engine() = default;

void Engine::set_callback(DiagnosisCallback cb) {
  std::lock_guard<std::mutex> lk(impl_->mu);
  impl_->cb = std::move(cb);
}

void Engine::set_event_tap(std::function<void(const Event&)> tap) {
  std::lock_guard<std::mutex> lk(impl_->mu);
  impl_->tap = std::move(tap);
}

std::vector<Diagnosis> Engine::poll() {
  std::lock_guard<std::mutex> lk(impl_->mu);
  std::vector<Diagnosis> v(std::make_move_iterator(impl_->queue.begin()),
                           std::make_move_iterator(impl_->queue.end()));
  impl_->queue.clear();
  return v;
}

void Engine::feed_envelope(std::string_view json_line) {
  impl_->locked([&] {
    impl_->ingestor().feed_envelope(json_line);
    impl_->process(false);
  });
}

void Engine::feed_line(const std::string& host, Transport transport, std::string_view line,
                       std::string_view evidence_file, uint64_t line_no) {
  impl_->locked([&] {
    // A stream's lines come host after host: intern and mark a host once per run.
    if (!host.empty() && host != impl_->last_input_host) {
      impl_->ix->mark_input_host(impl_->in.id(host));
      impl_->last_input_host = host;
    }
    impl_->ingestor().feed_line(host, transport, line, evidence_file, line_no);
    impl_->process(false);
  });
}

void Engine::feed_event(Event ev) {
  impl_->locked([&] {
    impl_->on_event(std::move(ev));
    impl_->process(false);
  });
}

namespace {
// The hosts a bundle holds lines of: hosts/<host>/ with a non-empty regular
// file somewhere below it (a host whose directory is missing or empty is
// known only from other hosts' lines). A listing error leaves the set short:
// a host missing from it is at worst not called silent.
std::vector<std::string> bundle_input_hosts(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator h(fs::path(dir) / "hosts", ec), end; !ec && h != end;
       h.increment(ec)) {
    std::error_code fec;
    if (!h->is_directory(fec)) continue;
    size_t seen = 0;
    for (fs::recursive_directory_iterator f(h->path(), fec), fend; !fec && f != fend && seen < 4096;
         f.increment(fec), ++seen) {
      std::error_code sec;
      if (f->is_regular_file(sec) && f->file_size(sec) > 0 && !sec) {
        out.push_back(h->path().filename().string());
        break;
      }
    }
  }
  return out;
}
}  // namespace

bool Engine::read_bundle(const std::string& dir, std::string* error) {
  bool ok = false;
  impl_->locked([&] {
    ok = impl_->ingestor().read_bundle(dir, error);
    impl_->ing->finish();
    if (ok)
      for (const std::string& h : bundle_input_hosts(dir))
        impl_->ix->mark_input_host(impl_->in.id(h));
  });
  return ok;
}

void Engine::tick() {
  impl_->locked([&] { impl_->process(false); });
}

void Engine::flush() {
  impl_->locked([&] {
    if (impl_->ing) impl_->ing->finish();
    impl_->process(true);
  });
}

std::vector<Diagnosis> Engine::diagnose_all() {
  std::vector<Diagnosis> v;
  std::shared_ptr<const KnowledgeBase> kb;
  impl_->locked([&] {
    if (impl_->ing) impl_->ing->finish();
    v = batch(*impl_->kb, *impl_->ki, *impl_->topo, *impl_->ix, impl_->o);
    kb = impl_->kb;
  });
  IngestStats st = stats().ingest;
  // "Nothing recognized" is said before an unclassified root is added: that
  // root is a lead from the lines no signature read, not a recognition.
  const bool recognized_root =
      std::any_of(v.begin(), v.end(), [](const Diagnosis& d) { return !d.root_causes.empty(); });
  engine::add_unclassified_roots(&v, st, *topology(), *kb);
  for (auto& d : v)
    for (auto& n : engine::input_notes(st, !recognized_root)) d.notes.push_back(n);
  return v;
}

bool Engine::reload(std::shared_ptr<const KnowledgeBase> kb, std::shared_ptr<const Topology> topo,
                    std::string* error) {
  bool ok = false;
  impl_->locked([&] {
    if (kb && !validate_kb_for_engine(*kb, error)) {
      ++impl_->st.failed_reloads;
      return;
    }
    impl_->finish_ingestor();
    if (kb) impl_->kb = std::move(kb);
    if (topo) impl_->topo = std::move(topo);
    impl_->rebuild_kb_index();
    ++impl_->st.reloads;
    ok = true;
  });
  return ok;
}

namespace {
// The ingestor's open storms with the engine's generation (see finish_ingestor).
class ShiftedStorms final : public OpenStorms {
 public:
  ShiftedStorms(const OpenStorms* in, uint64_t base) : in_(in), base_(base) {}
  uint64_t generation() const override { return base_ + (in_ ? in_->generation() : 0); }
  void for_each(const std::function<void(const Event&)>& fn) const override {
    if (in_) in_->for_each(fn);
  }

 private:
  const OpenStorms* in_;
  uint64_t base_;
};
}  // namespace

void Engine::with_open_storms(const std::function<void(const OpenStorms&)>& fn) const {
  std::lock_guard<std::mutex> lk(impl_->mu);
  if (impl_->ing) {
    impl_->ing->with_open_storms(
        [&](const OpenStorms& os) { fn(ShiftedStorms(&os, impl_->storm_generation_base)); });
    return;
  }
  fn(ShiftedStorms(nullptr, impl_->storm_generation_base));
}

EngineStats Engine::stats() const {
  std::lock_guard<std::mutex> lk(impl_->mu);
  EngineStats s = impl_->st;
  s.indexed_events = impl_->ix->size();
  s.ingest = impl_->ingest_done;
  if (impl_->ing)
    engine::merge_ingest_stats(&s.ingest, impl_->ing->stats(),
                               impl_->o.ingest.unrecognized_samples);
  return s;
}

std::shared_ptr<const KnowledgeBase> Engine::kb() const {
  std::lock_guard<std::mutex> lk(impl_->mu);
  return impl_->kb;
}

std::shared_ptr<const Topology> Engine::topology() const {
  std::lock_guard<std::mutex> lk(impl_->mu);
  return impl_->topo;
}

}  // namespace reflex
