// The agent's on-disk spool (docs/deployment.md,
// failure behaviour): when
// the in-memory buffer is full (the bus unreachable or slow), the oldest
// events are appended here durably (write + fsync) so the read positions
// behind them may advance; they drain to the bus oldest first once it is back.
//
// Layout: DIR/<12-digit number>.spool segments, appended by one process at a
// time, each a run of records
//   "RSP1" | u32 body length | u32 crc32(body) | body
//   body = u32 len, shard | u32 len, id | payload        (little endian)
// and DIR/head ("<segment> <offset>\n", written by rename) saying how far the
// oldest segment was delivered. A crash between a delivery and the head write
// re-delivers a few records: their ids are deterministic, the diagnoser drops
// them. A damaged record (a crash mid-append, garbage) is skipped, counted and
// said; the records around it are kept.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace reflex::deploy {

struct SpoolRecord {
  std::string shard, id, payload;
};

class Spool {
 public:
  ~Spool();
  // Creates DIR if needed, drops fully delivered segments, counts what is
  // left; damaged segments are rewritten with their intact records.
  bool open(const std::string& dir, uint64_t max_bytes, std::string* err);
  static uint64_t encoded_size(const SpoolRecord& r);
  // Bytes that may still be appended before the spool is full.
  uint64_t room() const { return disk_ < max_ ? max_ - disk_ : 0; }
  // Appends every record durably, or none (false + *err).
  bool append(const std::vector<SpoolRecord>& recs, std::string* err);
  // The oldest up to n undelivered records (fewer when the spool has fewer).
  bool peek(size_t n, std::vector<SpoolRecord>* out, std::string* err);
  // The records of the last peek were delivered: the head moves past them.
  bool consume(std::string* err);

  uint64_t events() const { return events_; }
  uint64_t bytes() const { return disk_ > head_off_ ? disk_ - head_off_ : 0; }  // undelivered
  const std::string& dir() const { return dir_; }
  // Damage found (load or drain), by kind: cut off at a segment's end
  // (a crash mid-append) or garbage inside one.
  uint64_t damaged_truncated = 0, damaged_corrupt = 0, damaged_bytes = 0;
  std::vector<std::string> notes;  // what to log, taken by the caller

 private:
  std::string seg_path(uint64_t seg) const;
  bool write_head(std::string* err);
  bool load_segment(uint64_t seg, uint64_t from, std::string* err);
  bool roll(std::string* err);
  bool fill(std::string* err);
  void drop_segment(uint64_t seg);

  std::string dir_;
  uint64_t max_ = 0, seg_max_ = 0;
  std::vector<uint64_t> segs_;  // oldest first; the last may be the one appended to
  uint64_t head_off_ = 0;       // delivered bytes of segs_.front()
  uint64_t disk_ = 0;           // bytes of every segment on disk
  uint64_t events_ = 0;
  int append_fd_ = -1;  // segs_.back(), created by this process
  uint64_t append_size_ = 0;
  // The oldest segment's bytes from cache_at_, as read for peek().
  std::string cache_;
  uint64_t cache_seg_ = 0, cache_at_ = 0;
  bool cache_valid_ = false;
  uint64_t peeked_bytes_ = 0, peeked_events_ = 0;
};

}  // namespace reflex::deploy
