// Multi-line joins: a signature with `then` parts waits per stream (file and
// host) for its continuation lines, within join_within_lines each, and
// becomes an event (complete) when its last part matched; a wait that runs
// out or is pushed out counts as incomplete.
#include "multiline.h"

#include <algorithm>
#include <utility>

#include "emit_event.h"
#include "ingest_core.h"

namespace reflex::ingest {

Stream* MultilineJoins::find_stream(const LogRecord& rec, bool create) {
  stream_key_.assign(rec.file);
  stream_key_ += '\0';
  stream_key_ += rec.host;
  auto it = streams_.find(stream_key_);
  if (it != streams_.end()) return &it->second;
  if (!create) return nullptr;
  return &streams_[stream_key_];
}

void MultilineJoins::drop_stream_pending(Stream* st) {
  core_.stats.incomplete_multiline += st->pending.size();
  pending_total_ -= st->pending.size();
  st->pending.clear();
}

void MultilineJoins::complete(Pending&& p) {
  const SigInfo& s = core_.matcher.signatures()[p.sig];
  if (!s.compiled->accept(&p.caps, nullptr)) {
    ++core_.stats.rejected_by_when;
    return;
  }
  events_.emit_event(p.sig, p.caps, &p.caps, p.time, p.transport, p.host, p.host_known, p.rank_hint,
                     p.file, p.line_no, p.lines);
}

void MultilineJoins::advance_pending(const LogRecord& rec, const std::vector<uint32_t>& hits) {
  Stream* st = find_stream(rec, false);
  if (!st || st->pending.empty()) return;
  IngestStats& stats = core_.stats;
  auto& pend = st->pending;
  for (size_t i = 0; i < pend.size();) {
    Pending& p = pend[i];
    const SigInfo& s = core_.matcher.signatures()[p.sig];
    uint32_t pat = s.part_pattern[p.next_part];
    // File input skips lines nobody can match (chunk mode): count by line numbers.
    int limit = std::max(1, s.sig->join_within_lines);
    if (!rec.file.empty() && rec.line_no > p.last_line_no &&
        rec.line_no - p.last_line_no > static_cast<uint64_t>(limit)) {
      pend.erase(pend.begin() + static_cast<long>(i));
      --pending_total_;
      ++stats.incomplete_multiline;
      continue;
    }
    bool ok_part = std::binary_search(hits.begin(), hits.end(), pat) &&
                   s.compiled->match_part(p.next_part, rec.msg, &p.caps);
    if (ok_part) {
      p.lines += '\n';
      p.lines.append(rec.raw);
      ++p.next_part;
      p.remaining = limit;
      p.last_line_no = rec.line_no;
      if (p.next_part == s.part_pattern.size()) {
        Pending done = std::move(p);
        pend.erase(pend.begin() + static_cast<long>(i));
        --pending_total_;
        ++stats.matched_lines;
        complete(std::move(done));
        continue;
      }
    } else if (--p.remaining <= 0) {
      pend.erase(pend.begin() + static_cast<long>(i));
      --pending_total_;
      ++stats.incomplete_multiline;
      continue;
    }
    ++i;
  }
  if (pend.empty()) streams_.erase(stream_key_);
}

void MultilineJoins::start_pending(uint32_t si, const FieldValues& c, const LogRecord& rec) {
  const Signature& sig = *core_.matcher.signatures()[si].sig;
  Stream* st = find_stream(rec, true);
  if (st->pending.size() >= kMaxPendingPerStream) {
    st->pending.erase(st->pending.begin());
    --pending_total_;
    ++core_.stats.incomplete_multiline;
  }
  Pending p;
  p.sig = si;
  p.next_part = 1;
  p.remaining = std::max(1, sig.join_within_lines);
  p.caps = c;
  p.lines.assign(rec.raw);
  p.time = rec.time;
  p.transport = rec.transport;
  p.host = rec.host;
  p.host_known = rec.host_known;
  p.rank_hint = rec.rank_hint;
  p.file.assign(rec.file);
  p.line_no = rec.line_no;
  p.last_line_no = rec.line_no;
  st->pending.push_back(std::move(p));
  ++pending_total_;
}

void MultilineJoins::end_of_file_stream() {
  for (auto& [k, st] : streams_) drop_stream_pending(&st);
  streams_.clear();
}

}  // namespace reflex::ingest
