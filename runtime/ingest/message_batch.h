// Message batches (per-line files: CSV, JSON, joined CRI lines): their
// messages are not slices of the raw lines, so no block scan of the file
// applies; instead the parsed records wait in a batch whose messages, one
// a line, get one block scan: one Hyperscan call per batch, not per line.
// Records are processed in line order, each with its message's hits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "line_match.h"
#include "matcher.h"
#include "reflex/log_record.h"

namespace reflex::ingest {

class MessageBatch {
 public:
  MessageBatch(const Matcher& matcher, LineProcessor& lines) : matcher_(matcher), lines_(lines) {}

  // Keeps a copy of rec (its message has no '\n'); a full batch is processed.
  void batch_line(const LogRecord& rec);
  // Processes the records waiting, in line order.
  void flush_batch();

 private:
  static constexpr size_t kBatchLines = 1024, kBatchBytes = 1 << 19;
  const Matcher& matcher_;
  LineProcessor& lines_;
  std::vector<LogRecord> msg_batch_;
  size_t batch_n_ = 0;
  std::string batch_msgs_, batch_raw_;  // each message followed by '\n'; the raw lines
  std::vector<uint32_t> batch_msg_at_, batch_raw_at_;
  std::vector<Matcher::BlockLine> cand_lines_;
  std::vector<uint32_t> block_hits_;  // pattern ids of cand_lines_
};

}  // namespace reflex::ingest
