// Memo-first blocks (storms): in a storm most lines repeat a message already
// in the line memo, after a prefix (time, host) that differs. Such a line
// needs no Hyperscan scan: its message's hits are stored with the memo
// entry, and the line would have been a block-scan hit anyway, because one
// of those hits is of a context_free pattern, the message ends the line and
// follows an ASCII non-word byte (a match inside it is a match inside the
// line). The other lines, runs between such lines, are block-scanned in
// place as before. Which lines are parsed, and so every counter, is as with
// a full scan, save a match spanning a line break into or out of a skipped
// line (possible only for a pattern class that holds '\n'); RE2 matches one
// line, so such a hit never confirms.
#include <algorithm>
#include <cstring>
#include <utility>

#include "block_scan.h"

namespace reflex::ingest {

void BlockReader::note_msg_offset(const LogRecord& r) {
  const size_t off = static_cast<size_t>(r.msg.data() - r.raw.data());
  if (off + r.msg.size() != r.raw.size()) return;  // not a suffix of the line
  const MsgAt at{off, r.transport, true};
  if (at == msg_at_[0]) return;
  msg_at_[1] = at;
  if (!msg_at_[0].known) std::swap(msg_at_[0], msg_at_[1]);
}

MemoEntry* BlockReader::memo_at(std::string_view buf, size_t b, size_t e, const MsgAt& at) {
  if (!at.known || e - b < at.off) return nullptr;
  const size_t m = b + at.off;
  if (at.off > 0) {
    const unsigned char c = static_cast<unsigned char>(buf[m - 1]);
    const bool word =
        c == '_' || (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
    if (word || c == '\n' || c >= 0x80) return nullptr;
  }
  const std::string_view msg = buf.substr(m, e - m);
  if (msg.size() > kMemoMsgBytes) return nullptr;
  LineMemo& line_memo = lines_.line_memo();
  MemoEntry* en = line_memo.find(memo_hash(msg, at.transport));
  if (!en) return nullptr;
  if (en->transport != at.transport || en->msg != msg) return nullptr;
  if (en->skip < 0) {  // first use: the message's own hits, and the proof
    core_.matcher.scan(en->msg, &en->msg_hits);
    en->skip = core_.matcher.hit_survives_context(en->msg_hits) ? 1 : 0;
  }
  if (!en->skip) return nullptr;
  found_memo_ = line_memo.known(en, msg);
  return en;
}

// The memo entry whose message ends the line [b, e) after a usual prefix
// of the file and is proven to hit (see above), or nullptr.
MemoEntry* BlockReader::memo_for_line(std::string_view buf, size_t b, size_t e) {
  for (int i = 0; i < 2; ++i) {
    if (MemoEntry* en = memo_at(buf, b, e, msg_at_[i])) {
      if (i == 1) std::swap(msg_at_[0], msg_at_[1]);
      lookup_at_ = msg_at_[0];
      return en;
    }
  }
  return nullptr;
}

void BlockReader::memo_first_block(std::string_view buf, BlockWalk* w) {
  size_t run = 0;  // start of the lines not yet scanned
  for (size_t pos = 0; pos < buf.size();) {
    const void* nl = std::memchr(buf.data() + pos, '\n', buf.size() - pos);
    const size_t e =
        nl ? static_cast<size_t>(static_cast<const char*>(nl) - buf.data()) : buf.size();
    if (MemoEntry* first = memo_for_line(buf, pos, e)) {
      // The run may have changed the memo (an entry added, the table
      // cleared): then look the line up again.
      MemoEntry* en = first;
      if (run < pos) {
        scan_range(buf, run, pos, w);
        en = memo_for_line(buf, pos, e);
      }
      if (en) {
        skip_hits_ = en->msg_hits;  // process may rebuild the memo
        ++memo_first_lines_;
        block_line(buf, pos, e, w, nullptr, 0, &skip_hits_);
      } else {
        scan_range(buf, pos, std::min(buf.size(), e + 1), w);
      }
      run = std::min(buf.size(), e + 1);
    }
    pos = e + 1;
  }
  if (run < buf.size()) scan_range(buf, run, buf.size(), w);
}

// process() of a line whose message's own hits are known (memo-first).
// If its message is not the memo's (another prefix), it is a candidate
// line all the same: scan its message.
void BlockReader::process_exact(const LogRecord& rec, const std::vector<uint32_t>& exact) {
  const size_t off = static_cast<size_t>(rec.msg.data() - rec.raw.data());
  if (off + rec.msg.size() != rec.raw.size() || off != lookup_at_.off ||
      rec.transport != lookup_at_.transport) {
    lines_.process(rec);
    return;
  }
  lines_.process_known(rec, exact, found_memo_);
}

}  // namespace reflex::ingest
