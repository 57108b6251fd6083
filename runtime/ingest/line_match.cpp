// One line's matching: storm windows advanced by its time, multi-line joins
// moved on, then its first-line patterns confirmed, typed and judged
// (`when`) for every signature sharing them; a storm's repeated messages
// replay the line memo's outcome instead.
#include "line_match.h"

#include <map>
#include <string>
#include <utility>

namespace reflex::ingest {

LineProcessor::LineProcessor(IngestCore& core, MultilineJoins& joins, EventEmitter& events,
                             OpRecorder& recorder)
    : core_(core), joins_(joins), events_(events), recorder_(recorder) {
  const Matcher& matcher = core_.matcher;
  matcher.reserve_hits(&hits_);
  matcher.reserve_hits(&exact_hits_);
  std::map<std::string, uint32_t> classes;
  for (const SigInfo& si : matcher.signatures()) {
    std::map<std::string, int> types;  // as CompiledSignature builds them: last wins
    for (const FieldDecl& f : si.sig->fields) types[f.name] = static_cast<int>(f.type);
    std::string key;
    for (const auto& [name, type] : types) {
      key += name;
      key += '\0';
      key += std::to_string(type);
      key += '\0';
    }
    typing_class_.push_back(
        classes.emplace(std::move(key), static_cast<uint32_t>(classes.size())).first->second);
  }
  when_memo_.build(matcher);
}

void LineProcessor::process(const LogRecord& rec, const uint32_t* raw, size_t n_raw,
                            bool superset) {
  if (rec.refusal != Refusal::none) {  // never evidence: not even its time counts
    refuse_claim(rec);
    return;
  }
  if (rec.time.wall) {  // closes dedup folds
    if (recorder_.on())
      recorder_.record_advance(*rec.time.wall);
    else
      core_.storms.advance(*rec.time.wall, core_.emit_fn);
  }
  if (raw) {
    hits_.assign(raw, raw + n_raw);
    hits_superset_ = superset;
    exact_known_ = false;
  } else {
    core_.matcher.scan(rec.msg, &hits_);
    hits_superset_ = false;
  }
  if (joins_.waiting()) joins_.advance_pending(rec, hits_);
  if (hits_.empty()) return;
  // What follows is a pure function of (transport, message): a storm
  // repeats a few messages, so their outcome is looked up, not recomputed.
  const bool memo = line_memo_on_ && rec.msg.size() <= kMemoMsgBytes;
  if (!memo) {
    match_line(rec);
    return;
  }
  // One hash of the message serves the seen-filter and the memo.
  // A memo-first line brings the entry its message was already checked
  // against (the same bytes of the same line): no second hash or compare.
  const MemoEntry* known = line_memo_.still_known(known_memo_, rec);
  const uint64_t h = known ? known->hash : memo_hash(rec.msg, rec.transport);
  if (line_memo_.first_sight(h)) {  // unique lines pay one hash
    match_line(rec);
    return;
  }
  if (known) {
    ++memo_replays_;
    replay_outcome(known->outcome, rec);
    return;
  }
  if (const MemoEntry* e = line_memo_.find(h)) {
    if (e->transport == rec.transport && e->msg == rec.msg) {
      ++memo_replays_;
      replay_outcome(e->outcome, rec);
    } else {
      match_line(rec);  // a 64-bit hash collision: not memoised
    }
    return;
  }
  outcome_.clear();
  recording_ = &outcome_;
  match_line(rec);
  recording_ = nullptr;
  line_memo_.store(h, rec.transport, rec.msg, std::move(outcome_));
  outcome_ = Outcome{};
}

void LineProcessor::process_known(const LogRecord& rec, const std::vector<uint32_t>& exact,
                                  const KnownMemo& known) {
  known_memo_ = known;
  process(rec, exact.data(), exact.size(), /*superset=*/false);
  known_memo_ = KnownMemo{};
}

void LineProcessor::match_line(const LogRecord& rec) {
  const Matcher& matcher = core_.matcher;
  IngestStats& stats = core_.stats;
  const auto& pats = matcher.patterns();
  const auto& sigs = matcher.signatures();
  Outcome* out = recording_;
  bool matched = false, recognised = false, refused = false;
  uint32_t suspect = UINT32_MAX;
  for (uint32_t p : hits_) {
    const PatternInfo& pi = pats[p];
    if (pi.first_of.empty()) continue;
    if (!(pi.first_sources & rec.transport)) {
      if (hit_in_msg(p, rec)) {
        ++stats.transport_mismatch;
        if (out) ++out->transport_mismatch;
        refused = true;
      }
      continue;
    }
    caps_.clear();
    uint32_t typed_class = UINT32_MAX;
    bool typed_ok = false;
    if (!matcher.confirm(p, rec.msg, &caps_)) {
      if ((pi.prefilter || !pi.anchor_dropped) && hit_in_msg(p, rec)) {
        ++stats.prefilter_rejects;
        if (out) ++out->prefilter_rejects;
      }
      continue;
    }
    const std::vector<uint8_t>* row = nullptr;
    for (size_t slot = 0; slot < pi.first_of.size(); ++slot) {
      const uint32_t si = pi.first_of[slot];
      const SigInfo& s = sigs[si];
      if (s.sig->suspect) {  // judged after the line's real signatures
        if (suspect == UINT32_MAX) suspect = si;
        continue;
      }
      if (!(s.sig->sources & rec.transport)) {
        ++stats.transport_mismatch;
        if (out) ++out->transport_mismatch;
        refused = true;
        continue;
      }
      recognised = true;
      if (s.part_pattern.size() > 1) {
        if (out) out->acts.push_back({si, true, caps_});
        joins_.start_pending(si, caps_, rec);
        matched = true;
        continue;
      }
      // Signatures sharing this pattern with the same field declarations
      // share one typed copy of the captures; only `when` differs.
      if (typing_class_[si] != typed_class) {
        tmp_ = caps_;
        typed_ok = s.compiled->type_fields(&tmp_);
        typed_class = typing_class_[si];
        row = typed_ok ? when_memo_.row(matcher, typing_class_, p, typed_class, tmp_) : nullptr;
      }
      if (!typed_ok || !(row ? (*row)[slot] != 0 : s.compiled->when_holds(tmp_))) {
        ++stats.rejected_by_when;
        if (out) ++out->rejected_by_when;
        continue;
      }
      matched = true;
      if (out) out->acts.push_back({si, false, tmp_});
      // tmp_ serves the next signature: emit_event copies it if it builds an event
      events_.emit_event(si, tmp_, nullptr, rec.time, rec.transport, rec.host, rec.host_known,
                         rec.rank_hint, rec.file, rec.line_no, rec.raw);
    }
  }
  if (out) {
    out->matched = matched;
    out->recognised = recognised;
    out->refused = refused;
    out->suspect = suspect;
  }
  finish_line(rec, matched, recognised, refused, suspect);
}

// A line whose source cannot make its claim (Refusal): if a signature would
// have taken it, it is counted per file and the file's first is kept, so
// the report shows the claim that was not believed.
void LineProcessor::refuse_claim(const LogRecord& rec) {
  const Matcher& matcher = core_.matcher;
  matcher.scan(rec.msg, &hits_);
  const std::string* would_be = nullptr;
  for (uint32_t p : hits_) {
    const PatternInfo& pi = matcher.patterns()[p];
    if (pi.first_of.empty() || !(pi.first_sources & rec.transport)) continue;
    caps_.clear();
    if (!matcher.confirm(p, rec.msg, &caps_)) continue;
    for (uint32_t si : pi.first_of) {
      const SigInfo& s = matcher.signatures()[si];
      if (s.sig->suspect || !(s.sig->sources & rec.transport)) continue;
      tmp_ = caps_;
      if (!s.compiled->type_fields(&tmp_) || !s.compiled->when_holds(tmp_)) continue;
      would_be = &s.sig->name;
      break;
    }
    if (would_be) break;
  }
  if (!would_be) return;
  RefusedClaim& r = core_.stats.refused_claims_by_file[std::string(rec.file)];
  if (r.count++ == 0) {
    r.why = rec.refusal == Refusal::kernel_claim
                ? "a kernel line in a file that is not a kernel capture"
                : "names host " + rec.host + " in another host's file";
    r.evidence = std::string(rec.file) + ":" + std::to_string(rec.line_no);
    r.would_be = *would_be;
    r.line = std::string(rec.raw.substr(0, IngestCore::kMaxUnrecognised));
  }
}

void LineProcessor::replay_outcome(const Outcome& o, const LogRecord& rec) {
  core_.stats.transport_mismatch += o.transport_mismatch;
  core_.stats.prefilter_rejects += o.prefilter_rejects;
  core_.stats.rejected_by_when += o.rejected_by_when;
  for (const Outcome::Act& a : o.acts) {
    if (a.pending) {
      joins_.start_pending(a.si, a.fields, rec);
    } else {
      events_.emit_event(a.si, a.fields, nullptr, rec.time, rec.transport, rec.host, rec.host_known,
                         rec.rank_hint, rec.file, rec.line_no, rec.raw);
    }
  }
  finish_line(rec, o.matched, o.recognised, o.refused, o.suspect);
}

void LineProcessor::finish_line(const LogRecord& rec, bool matched, bool recognised, bool refused,
                                uint32_t suspect) {
  IngestStats& stats = core_.stats;
  if (matched) ++stats.matched_lines;
  if (refused && !recognised) ++stats.transport_refused_by_file[std::string(rec.file)];
  if (suspect != UINT32_MAX && !recognised && !refused) {
    if (recorder_.on())
      recorder_.record_unrecognised(suspect, rec);
    else
      core_.note_unrecognised(suspect, rec.file, rec.line_no, rec.raw);
  }
}

}  // namespace reflex::ingest
