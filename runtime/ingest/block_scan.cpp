// Chunk mode's block walk: a block of whole lines is scanned once, and only
// the lines the scan hits are found, numbered, parsed and processed, with
// the parser's state (the previous timed line's time) kept as if every line
// had been parsed.
#include "block_scan.h"

#include <algorithm>
#include <cstring>

namespace reflex::ingest {

BlockReader::BlockReader(IngestCore& core, LineProcessor& lines, FileMode& mode)
    : core_(core), lines_(lines), mode_(mode) {
  allow_memo_first(true);
}

void BlockReader::allow_memo_first(bool on) {
  memo_first_ok_ =
      on && lines_.line_memo_on() && core_.matcher.shared_database() && core_.matcher.chunk_mode();
  if (!on) memo_first_ = false;
}

void BlockReader::begin_file() {
  memo_first_ = false;
  msg_at_[0] = msg_at_[1] = MsgAt{};
  join_open_end_ = 0;
}

// Parses the line [b, e) of a block; counts it as parsed (it was counted on arrival).
bool BlockReader::parse_block_line(std::string_view buf, size_t b, size_t e, uint64_t no,
                                   LogRecord* rec) {
  const FormatStats& fstats = core_.fstats;
  uint64_t before = fstats.lines, bytes_before = fstats.bytes;
  bool parsed = core_.parser.parse(buf.substr(b, e - b), no, rec);
  core_.counts.parsed_lines += fstats.lines - before;
  core_.counts.parsed_bytes += fstats.bytes - bytes_before;
  return parsed;
}

// The parser keeps the previous timed line's time, and lines between hits
// are not parsed: before the line starting at `pos` (number `no`), walk
// back over the unparsed lines from `known` on to the nearest one with its
// own time (parsing it sets that state; untimed lines leave it alone).
// Every line is parsed at most once this way.
void BlockReader::settle(std::string_view buf, size_t pos, uint64_t no, size_t known) {
  while (pos > known) {
    size_t e = pos - 1;  // the '\n' ending the previous line
    const void* p = memrchr(buf.data() + known, '\n', e - known);
    size_t b = p ? static_cast<size_t>(static_cast<const char*>(p) - buf.data()) + 1 : known;
    --no;
    if (parse_block_line(buf, b, e, no, &chunk_rec_) && !chunk_rec_.time_inherited) break;
    pos = b;
  }
}

// Whether the candidate line [b, e) parses the same without the walk back
// (settle): when it has its own time and the line before it, not yet
// parsed, could not change how it is read (LineParser::parses_alone).
// Most candidate lines of a syslog file are such; the walk parsed a
// second line for each of them.
bool BlockReader::parses_alone(std::string_view buf, size_t b, size_t e, size_t known) {
  if (b <= known) return true;  // nothing unparsed before it
  const void* p = memrchr(buf.data() + known, '\n', b - 1 - known);
  const size_t pb = p ? static_cast<size_t>(static_cast<const char*>(p) - buf.data()) + 1 : known;
  return core_.parser.parses_alone(buf.substr(pb, b - 1 - pb), buf.substr(b, e - b));
}

// A candidate line whose block-scan hits are all continuations (parts >= 1
// of multi-line signatures) when no multi-line signature can be waiting
// for it: no line that could start or advance one (a hit of such a first
// part or of a continuation, or a line whose hits are not known) lies
// within the join window before it in this file. Processing it would
// change nothing; a loose continuation (a table's `+` border) would
// otherwise make every line that has one a candidate.
bool BlockReader::idle_continuation(const uint32_t* line_hits, uint32_t n_hits, uint64_t no) {
  const uint64_t window = core_.matcher.join_window();
  if (window == 0) return false;
  bool may_join = line_hits == nullptr, first_part = false;
  for (uint32_t k = 0; line_hits && k < n_hits; ++k) {
    const PatternInfo& p = core_.matcher.patterns()[line_hits[k]];
    may_join |= p.starts_multiline || p.is_continuation;
    first_part |= !p.first_of.empty();
  }
  if (line_hits && !first_part && no >= join_open_end_) return true;
  if (may_join) join_open_end_ = std::max(join_open_end_, no + window + 1);
  return false;
}

void BlockReader::block_line(std::string_view buf, size_t b, size_t e, BlockWalk* w,
                             const uint32_t* line_hits, uint32_t n_hits,
                             const std::vector<uint32_t>* exact) {
  w->no += count_newlines(buf.substr(w->counted, b - w->counted));
  w->counted = b;
  if (idle_continuation(line_hits, n_hits, w->no)) return;
  if (!parses_alone(buf, b, e, w->known)) settle(buf, b, w->no, w->known);
  if (parse_block_line(buf, b, e, w->no, &chunk_rec_)) {
    if (!msg_in_raw(chunk_rec_)) {
      mode_ = FileMode::per_line;
      lines_.process(chunk_rec_);  // the message is not a slice of the line: scan it
    } else {
      note_msg_offset(chunk_rec_);
      if (exact)
        process_exact(chunk_rec_, *exact);
      else if (!line_hits)
        lines_.process(chunk_rec_);
      else  // reuse the block scan's hits: no second scan of the line
        lines_.process(chunk_rec_, line_hits, n_hits);
    }
  }
  w->known = std::min(buf.size(), e + 1);
}

void BlockReader::scan_range(std::string_view buf, size_t rb, size_t re, BlockWalk* w) {
  core_.matcher.scan_block(buf.substr(rb, re - rb), &cand_lines_, &block_hits_);
  for (const auto& c : cand_lines_) {
    if (c.hit_count == Matcher::kUnknownHits)
      block_line(buf, rb + c.begin, rb + c.end, w, nullptr, 0, nullptr);
    else
      block_line(buf, rb + c.begin, rb + c.end, w, block_hits_.data() + c.hit_begin, c.hit_count,
                 nullptr);
  }
}

uint64_t BlockReader::scan_block(std::string_view buf, uint64_t first_no) {
  BlockWalk w;
  w.no = first_no;
  const uint64_t replays_before = lines_.memo_replays();
  if (memo_first_)
    memo_first_block(buf, &w);
  else
    scan_range(buf, 0, buf.size(), &w);
  const uint64_t n_lines = w.no - first_no + count_newlines(buf.substr(w.counted));
  settle(buf, buf.size(), first_no + n_lines, w.known);
  // A block where most lines were replayed from the line memo is a storm:
  // the next block looks the memo up before scanning (and back when not).
  const uint64_t replays = lines_.memo_replays() - replays_before;
  if (n_lines >= 64)  // a line that spans reads comes alone: no evidence either way
    memo_first_ =
        memo_first_ok_ && replays * (memo_first_ ? kMemoFirstStay : kMemoFirstEnter) >= n_lines;
  return n_lines;
}

}  // namespace reflex::ingest
