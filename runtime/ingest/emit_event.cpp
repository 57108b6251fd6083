// A matched signature becomes an event: its devices located in the topology
// (placeholders noted), then judged by the storm filter (baseline, dedup
// folds, aggregation) before the sink sees it. A --threads worker records
// the match for the replay instead.
#include "emit_event.h"

#include <utility>

namespace reflex::ingest {

namespace {
constexpr size_t kMaxPlaceholderNotes = 20;
}  // namespace

EventEmitter::EventEmitter(IngestCore& core, OpRecorder& recorder)
    : core_(core), recorder_(recorder) {
  sig_hits_.assign(core_.matcher.signatures().size(), 0);
}

void EventEmitter::note_placeholder(const std::string& id) {
  ++core_.stats.placeholder_devices;
  if (placeholder_seen_.count(id)) return;
  if (placeholder_seen_.size() >= kMaxPlaceholderNotes) {
    ++placeholder_unnoted_;
    return;
  }
  placeholder_seen_.insert(id);
  core_.notes.push_back("device " + id + " is not in the topology; kept as a placeholder");
}

Located EventEmitter::locate_own(uint32_t si, const Signature& sig, const Locator* own,
                                 const FieldValues& fields, const LogRecord& rec) {
  locate_key_.assign(reinterpret_cast<const char*>(&si), sizeof si);
  locate_key_.append(reinterpret_cast<const char*>(&rec.rank_hint), sizeof rec.rank_hint);
  locate_key_ += rec.host_known ? '\x01' : '\x02';
  locate_key_ += rec.host;
  if (own) {
    // As locate_device reads it: the first capture of the field, empty = absent.
    const std::string* v = nullptr;
    for (const auto& [n, val] : fields)
      if (n == own->field) {
        v = &val;
        break;
      }
    if (v && !v->empty()) {
      locate_key_ += '\0';
      locate_key_ += *v;
    }
  }
  auto it = locate_memo_.find(locate_key_);
  if (it != locate_memo_.end()) return it->second;
  Located d = locate_device(core_.topo, sig, sig.kind, own, fields, rec);
  if (locate_memo_.size() >= kLocateMemoEntries) locate_memo_.clear();
  locate_memo_.emplace(locate_key_, d);
  return d;
}

void EventEmitter::emit_event(uint32_t si, const FieldValues& fields, FieldValues* movable,
                              const EventTime& time, Transport transport, const std::string& host,
                              bool host_known, int rank_hint, std::string_view file,
                              uint64_t line_no, std::string_view line) {
  if (recorder_.on()) {  // a --threads worker: the replay builds the event
    recorder_.record_match(si, fields, time, transport, host, host_known, rank_hint, line_no, line);
    return;
  }
  const Topology& topo = core_.topo;
  StormFilter& storms = core_.storms;
  const SigInfo& s = core_.matcher.signatures()[si];
  const Signature& sig = *s.sig;
  ++sig_hits_[si];
  LogRecord& rec = locate_rec_;  // reused: locate_device reads host, host_known, rank_hint
  rec.host = host;
  rec.host_known = host_known;
  rec.rank_hint = rank_hint;
  const Locator* own = nullptr;
  for (const Locator& l : sig.locators)
    if (l.binding.empty()) own = &l;
  Located d = locate_own(si, sig, own, fields, rec);
  const bool judged = StormFilter::has_baseline(sig);
  if (judged) {
    // Placeholder notes as for an event that is built (device, then bindings).
    if (d.placeholder) note_placeholder(d.id);
    for (const Locator& l : sig.locators) {
      if (l.binding.empty()) continue;
      Located b = locate_device(topo, sig, l.kind, &l, fields, rec);
      if (b.placeholder) note_placeholder(b.id);
    }
    if (!storms.baseline_passes(si, sig, fields, d.id)) return;
  } else if (storms.try_fold(si, sig, d.id, fields, time)) {
    // A storm's repeat: the open fold counts it; the notes and the
    // sequence number are those of the event add() would have folded.
    if (d.placeholder) note_placeholder(d.id);
    for (const Locator& l : sig.locators) {
      if (l.binding.empty()) continue;
      Located b = locate_device(topo, sig, l.kind, &l, fields, rec);
      if (b.placeholder) note_placeholder(b.id);
    }
    ++seq_;
    return;
  }
  Event ev;
  ev.name = sig.name;
  ev.kind = sig.kind;
  ev.device = std::move(d.id);
  ev.host = std::move(d.host);
  ev.placeholder_device = d.placeholder;
  if (d.placeholder && !judged) note_placeholder(ev.device);
  for (const Locator& l : sig.locators) {
    if (l.binding.empty()) continue;
    Located b = locate_device(topo, sig, l.kind, &l, fields, rec);
    if (b.id.empty()) continue;  // the line does not name it
    if (b.placeholder && !judged) note_placeholder(b.id);
    ev.bindings.emplace_back(l.binding, std::move(b.id));
  }
  ev.time = time;
  if (movable)
    ev.fields = std::move(*movable);
  else
    ev.fields = fields;
  ev.evidence.reserve(file.size() + 12);
  ev.evidence.append(file.empty() ? std::string_view("stdin") : file);
  ev.evidence += ':';
  ev.evidence += std::to_string(line_no);
  ev.line.assign(line);
  ev.transport = transport;
  ev.seq = ++seq_;
  storms.add(si, sig, std::move(ev), core_.emit_fn, judged);
}

}  // namespace reflex::ingest
