// Message batches: the records of per-line files wait until one block scan
// of their messages gives each its hits; then they are processed in order.
#include "message_batch.h"

#include <string_view>

namespace reflex::ingest {

void MessageBatch::batch_line(const LogRecord& rec) {
  if (batch_n_ == msg_batch_.size()) msg_batch_.emplace_back();
  msg_batch_[batch_n_++] = rec;
  batch_msg_at_.push_back(static_cast<uint32_t>(batch_msgs_.size()));
  batch_msgs_.append(rec.msg);
  batch_msgs_ += '\n';
  batch_raw_at_.push_back(static_cast<uint32_t>(batch_raw_.size()));
  batch_raw_.append(rec.raw);
  if (batch_n_ >= kBatchLines || batch_msgs_.size() + batch_raw_.size() >= kBatchBytes)
    flush_batch();
}

void MessageBatch::flush_batch() {
  if (batch_n_ == 0) return;
  matcher_.scan_block(batch_msgs_, &cand_lines_, &block_hits_);
  static const uint32_t kNoHits = 0;
  size_t c = 0;
  for (size_t i = 0; i < batch_n_; ++i) {
    LogRecord& r = msg_batch_[i];
    const uint32_t at = batch_msg_at_[i];
    r.msg = std::string_view(batch_msgs_).substr(at, r.msg.size());
    r.raw = std::string_view(batch_raw_).substr(batch_raw_at_[i], r.raw.size());
    while (c < cand_lines_.size() && cand_lines_[c].begin < at) ++c;
    if (c < cand_lines_.size() && cand_lines_[c].begin == at) {
      const auto& l = cand_lines_[c];
      if (l.hit_count == Matcher::kUnknownHits)
        lines_.process(r);
      else
        lines_.process(r, block_hits_.data() + l.hit_begin, l.hit_count);
    } else {
      lines_.process(r, &kNoHits, 0);  // no pattern can match: time and multi-line state only
    }
  }
  batch_n_ = 0;
  batch_msgs_.clear();
  batch_raw_.clear();
  batch_msg_at_.clear();
  batch_raw_at_.clear();
}

}  // namespace reflex::ingest
