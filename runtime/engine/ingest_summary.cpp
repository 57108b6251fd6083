// What the ingest counted, merged across ingestors, and what a diagnosis says
// of its input.
#include "ingest_summary.h"

#include <algorithm>
#include <map>
#include <utility>

namespace reflex::engine {

void merge_ingest_stats(IngestStats* out, const IngestStats& b, size_t samples) {
  IngestStats& a = *out;
  a.lines += b.lines;
  a.bytes += b.bytes;
  a.matched_lines += b.matched_lines;
  a.events += b.events;
  a.skipped_invalid_json += b.skipped_invalid_json;
  a.skipped_no_msg += b.skipped_no_msg;
  a.invalid_utf8 += b.invalid_utf8;
  a.nul_bytes += b.nul_bytes;
  a.truncated_long_lines += b.truncated_long_lines;
  a.unknown_hosts += b.unknown_hosts;
  a.placeholder_devices += b.placeholder_devices;
  a.no_timestamp += b.no_timestamp;
  a.implausible_time += b.implausible_time;
  a.folded_by_dedup += b.folded_by_dedup;
  a.below_aggregate += b.below_aggregate;
  for (auto& [k, v] : b.per_signature_hits) a.per_signature_hits[k] += v;
  a.transport_mismatch += b.transport_mismatch;
  for (auto& [k, v] : b.transport_refused_by_file) a.transport_refused_by_file[k] += v;
  for (auto& [file, r] : b.refused_claims_by_file) {
    auto [it, fresh] = a.refused_claims_by_file.try_emplace(file, r);
    if (!fresh) it->second.count += r.count;
  }
  a.unrecognized_lines += b.unrecognized_lines;
  for (auto& [k, v] : b.unrecognized_by_suspect) a.unrecognized_by_suspect[k] += v;
  for (auto& u : b.unrecognized_samples)
    if (a.unrecognized_samples.size() < samples) a.unrecognized_samples.push_back(u);
  for (auto& n : b.notes)
    if (std::find(a.notes.begin(), a.notes.end(), n) == a.notes.end()) a.notes.push_back(n);
}

namespace {

std::string top_counts(const std::map<std::string, uint64_t>& m, size_t k) {
  std::vector<std::pair<std::string, uint64_t>> v(m.begin(), m.end());
  std::stable_sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.second > b.second; });
  std::string s;
  for (size_t i = 0; i < v.size() && i < k; ++i)
    s += (i ? ", " : "") + v[i].first + " x" + std::to_string(v[i].second);
  if (v.size() > k) s += ", ...";
  return s;
}

}  // namespace

// What the input held, what was refused and what was not understood: a
// report that names no root cause still says what it saw.
std::vector<std::string> input_notes(const IngestStats& st, bool no_root) {
  std::vector<std::string> n;
  if (no_root)
    n.push_back("input: " + std::to_string(st.lines) + " line(s) read, " +
                std::to_string(st.events) + " event(s) recognised" +
                (st.per_signature_hits.empty()
                     ? std::string()
                     : " (" + top_counts(st.per_signature_hits, 6) + ")"));
  uint64_t refused = 0;
  for (auto& [f, c] : st.transport_refused_by_file) refused += c;
  if (refused)
    n.push_back("refused for transport: " + std::to_string(refused) +
                " line(s) match signatures only through another transport (a kernel message "
                "that did not arrive as a kernel line): " +
                top_counts(st.transport_refused_by_file, 4) +
                "; give kernel captures a kernel file name (dmesg*, kern.log*) or pass them as "
                "kernel envelopes");
  if (!st.refused_claims_by_file.empty()) {
    // Each file's first refused line, quoted: a claim that was not believed
    // is shown, never dropped in silence.
    uint64_t total = 0;
    for (auto& [f, r] : st.refused_claims_by_file) total += r.count;
    std::string s = "refused as evidence: " + std::to_string(total) +
                    " line(s) claim what their source cannot say";
    size_t shown = 0;
    for (auto& [f, r] : st.refused_claims_by_file) {
      if (shown++ == 4) {
        s += "; ...";
        break;
      }
      s += "; " + r.evidence + " (" + r.why + "; would be " + r.would_be +
           (r.count > 1 ? "; " + std::to_string(r.count) + " line(s) in the file" : "") +
           "): " + r.line;
    }
    n.push_back(s +
                "; a kernel capture or a central collector is declared with "
                "--kernel-capture / --collector (--kernel-capture - for standard input) or the "
                "bundle's sources.json");
  }
  if (st.unrecognized_lines) {
    std::string s = "not understood: " + std::to_string(st.unrecognized_lines) +
                    " line(s) look like fault evidence but match no signature (" +
                    top_counts(st.unrecognized_by_suspect, 5) + ")";
    for (size_t i = 0; i < st.unrecognized_samples.size() && i < 3; ++i)
      s += "; " + st.unrecognized_samples[i].evidence + ": " + st.unrecognized_samples[i].line;
    n.push_back(s);
  }
  return n;
}

}  // namespace reflex::engine
