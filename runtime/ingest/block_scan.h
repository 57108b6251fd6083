// Chunk mode's block walk: a block of whole lines is scanned once, and only
// the lines the scan hits are found (memchr around the hit), numbered
// (newlines counted up to them), parsed and processed, with the parser's
// state (the previous timed line's time) kept as if every line had been
// parsed. Other lines cost the scan and the count only. In a storm the
// block walk looks lines up in the line memo first (memo_first.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "ingest_core.h"
#include "line_match.h"
#include "line_memo.h"
#include "matcher.h"

namespace reflex::ingest {

// How a file's lines are read (Ingestor::Impl::file_line): it starts
// probing; text formats whose message is a slice of the raw line go to
// chunk mode, the others stay per line.
enum class FileMode { probing, per_line, chunk };

// Where a block walk stands: lines before `known` are reflected in the
// parser's state; newlines before `counted` are counted and `no` is the
// number of the line starting there.
struct BlockWalk {
  size_t known = 0, counted = 0;
  uint64_t no = 0;
};

// The record's message is a slice of its raw line (or empty).
inline bool msg_in_raw(const LogRecord& r) {
  return r.msg.empty() || (r.msg.data() >= r.raw.data() &&
                           r.msg.data() + r.msg.size() <= r.raw.data() + r.raw.size());
}

class BlockReader {
 public:
  // `mode`: the file's; a block line whose message is not a slice of the
  // line sets it to per_line.
  BlockReader(IngestCore& core, LineProcessor& lines, FileMode& mode);

  // `buf`: whole lines, each ending in '\n', the first numbered first_no.
  // Returns their number (counted past the last candidate line here).
  uint64_t scan_block(std::string_view buf, uint64_t first_no);
  // A new file: nothing known of where its messages start.
  void begin_file();
  // Memo-first blocks allowed (when the matcher and line memo allow them).
  void allow_memo_first(bool on);
  // Lines a memo-first block took from the line memo without a scan.
  uint64_t memo_first_lines() const { return memo_first_lines_; }

 private:
  // ---- the block walk (block_scan.cpp) ----
  // The lines of buf[rb, re) (whole lines) the chunk database hits, each
  // parsed and processed in order.
  void scan_range(std::string_view buf, size_t rb, size_t re, BlockWalk* w);
  // Parses and processes one candidate line [b, e) of buf; hits: its pattern
  // ids from a block scan (superset), or nullptr to scan its message.
  void block_line(std::string_view buf, size_t b, size_t e, BlockWalk* w, const uint32_t* line_hits,
                  uint32_t n_hits, const std::vector<uint32_t>* exact);
  bool parse_block_line(std::string_view buf, size_t b, size_t e, uint64_t no, LogRecord* rec);
  void settle(std::string_view buf, size_t pos, uint64_t no, size_t known);
  bool parses_alone(std::string_view buf, size_t b, size_t e, size_t known);
  bool idle_continuation(const uint32_t* line_hits, uint32_t n_hits, uint64_t no);

  // ---- memo-first blocks, storms' lines found in the line memo (memo_first.cpp) ----
  static constexpr uint64_t kMemoFirstEnter = 4, kMemoFirstStay = 8;
  void memo_first_block(std::string_view buf, BlockWalk* w);
  MemoEntry* memo_for_line(std::string_view buf, size_t b, size_t e);
  MemoEntry* memo_at(std::string_view buf, size_t b, size_t e, const MsgAt& at);
  void note_msg_offset(const LogRecord& r);
  void process_exact(const LogRecord& rec, const std::vector<uint32_t>& exact);

  IngestCore& core_;
  LineProcessor& lines_;
  FileMode& mode_;
  std::vector<Matcher::BlockLine> cand_lines_;
  std::vector<uint32_t> block_hits_;  // pattern ids of cand_lines_
  LogRecord chunk_rec_;
  uint64_t join_open_end_ = 0;  // lines numbered below it may meet a waiting multi-line signature

  bool memo_first_ok_ = false;  // the matcher allows it (shared database)
  bool memo_first_ = false;     // for the current file's next block
  uint64_t memo_first_lines_ = 0;
  // Where messages start in this file's lines: the one that last found a
  // memo line first, and the last other one a parsed candidate line showed.
  MsgAt msg_at_[2];
  std::vector<uint32_t> skip_hits_;
  MsgAt lookup_at_;  // what memo_for_line matched the line with
  KnownMemo found_memo_;
};

}  // namespace reflex::ingest
