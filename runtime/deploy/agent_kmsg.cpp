// The agent's kernel-record source (agent_kmsg.h).
#include "agent_kmsg.h"

#include <ctime>
#include <optional>
#include <vector>

#include "reflex/kmsg.h"

namespace reflex::deploy::agent {

bool KmsgSource::start(const std::string& path, std::string* err) {
  if (!reader_.open(path, err)) return false;
  std::optional<int64_t> bt = rd_.boot_time ? rd_.boot_time : proc_boot_time_us();
  if (!bt) {
    *err = "no boot time for the records' timestamps (/proc/stat has no btime; give --boot-time)";
    return false;
  }
  identity_ = boot_identity(reader_.device(), *bt);
  evidence_ = "hosts/" + rd_.host + "/kmsg";
  parser_ = rd_.parser(evidence_, bt);
  if (auto r = positions_.resume.find(kKmsgKey); r != positions_.resume.end()) {
    expect_ = true;  // a new boot counts from SEQ 0 again
    next_seq_ = r->second.cursor == identity_ ? r->second.pos.line : 0;
    if (r->second.cursor != identity_)
      log(Level::info, path + ": a new boot since the saved position (" + r->second.cursor +
                           ", now " + identity_ + "): this boot's records from the first");
    positions_.resume.erase(r);
  }
  safe_seq_ = next_seq_;
  log(Level::info, "reading kernel records from " + path + " (" + identity_ + ", from SEQ " +
                       std::to_string(next_seq_) + ")");
  return true;
}

// One record: skipped when delivered before a restart; a SEQ jump is
// records the ring overwrote before they were read (counted, said).
void KmsgSource::feed(const std::string& text) {
  KmsgRecord r;
  std::string err;
  if (!parse_kmsg_record(text, &r, &err)) {
    rd_.metrics.add("reflex_agent_kmsg_bad_records_total");
    log_limited(Level::warn, "kmsg-bad", reader_.path() + ": " + err + "; skipped");
    return;
  }
  rd_.metrics.add("reflex_agent_kmsg_records_total");
  if (expect_ && r.seq < next_seq_) return;
  if (expect_ && r.seq > next_seq_) {
    rd_.metrics.add("reflex_agent_kmsg_gaps_total");
    rd_.metrics.add("reflex_agent_kmsg_lost_records_total", static_cast<double>(r.seq - next_seq_));
    log(Level::warn, reader_.path() + ": records " + std::to_string(next_seq_) + ".." +
                         std::to_string(r.seq - 1) +
                         " were overwritten in the kernel's ring before they were read");
  }
  expect_ = true;
  next_seq_ = r.seq + 1;
  for (const std::string& line : kmsg_dmesg_lines(r)) {
    LogRecord rec;
    if (!parser_->parse(line, r.seq + 1, &rec)) continue;
    // Trusted as the agent read it: facility 0 only the kernel can log with.
    rec.transport = r.from_kernel() ? kTransportKernel : kTransportSyslog;
    rd_.ing.feed_record(rec);
  }
}

bool KmsgSource::read() {
  if (!reader_.is_open()) return false;
  std::vector<std::string> recs;
  uint64_t overwritten = 0;
  bool any = false;
  for (int round = 0; round < 16 && !out_.full(); ++round) {
    reader_.read(512, &recs, &overwritten);
    if (recs.empty()) break;
    any = true;
    for (const std::string& text : recs) feed(text);
  }
  if (overwritten > 0) {
    rd_.metrics.add("reflex_agent_kmsg_overwritten_total", static_cast<double>(overwritten));
    log_limited(Level::warn, "kmsg-epipe",
                reader_.path() +
                    ": the kernel's ring moved past the reader (EPIPE); the SEQ gap says how "
                    "many records were lost");
  }
  if (!any) return false;
  // Checkpoint: the first record of an open fold is read again after a restart.
  auto open = rd_.first_open_line(evidence_);
  safe_seq_ = open ? *open - 1 : next_seq_;
  queue_marker();
  return true;
}

void KmsgSource::queue_marker() {
  Pending m;
  m.marker = true;
  m.key = kKmsgKey;
  m.pos = {0, safe_seq_};
  m.cursor = identity_;
  m.path = reader_.path();
  m.evidence = evidence_;
  m.seen = std::time(nullptr);
  out_.add_marker(std::move(m));
}

void KmsgSource::advance() {
  if (parser_ && safe_seq_ != next_seq_ && !rd_.first_open_line(evidence_)) {
    safe_seq_ = next_seq_;
    queue_marker();
  }
}

void KmsgSource::mark_read() {
  if (parser_) {
    safe_seq_ = next_seq_;
    queue_marker();
  }
}

}  // namespace reflex::deploy::agent
