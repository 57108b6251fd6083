// The Ingestor facade: LineParser/parse_envelope -> Matcher -> multi-line
// joins -> device location -> StormFilter -> sink.
//
// Hot path (a line that matches nothing): in chunk mode (bundle files) its
// bytes go through one Hyperscan block scan and one newline count, nothing
// else - it is never split out, parsed or matched; per line (feed_record,
// envelopes, files of non-text formats) one format parse and one scan of the
// message. No heap allocation either way (tests/ingest checks both with a
// counting allocator). Lines the block scan hits reuse its pattern ids.
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>

#include "locate.h"
#include "matcher.h"
#include "reflex/ingest.h"
#include "reflex/log_format.h"
#include "storms.h"

namespace reflex {

namespace {
constexpr size_t kMaxPendingPerStream = 16;  // interleaved multi-line messages per stream
constexpr size_t kMaxPlaceholderNotes = 20;

struct Pending {
  uint32_t sig = 0;
  uint32_t next_part = 1;
  int remaining = 0;
  FieldValues caps;
  std::string lines;  // raw lines joined with '\n'
  EventTime time;
  Transport transport = kTransportApp;
  std::string host;
  bool host_known = true;
  int rank_hint = -1;
  std::string file;
  uint64_t line_no = 0;
  uint64_t last_line_no = 0;  // line of the last part matched (file input)
};

struct Stream {
  std::vector<Pending> pending;
};
}  // namespace

struct Ingestor::Impl {
  const KnowledgeBase& kb;
  const Topology& topo;
  IngestOptions opts;
  ingest::Matcher matcher;
  bool ok = true;
  FormatStats fstats;
  LineParser parser;
  IngestStats stats;  // own counters; format counters are merged on read
  mutable IngestStats view;
  ingest::StormCounters storm_counters;
  ingest::StormFilter storms;
  EventSink sink;
  mutable std::mutex mu;
  uint64_t seq = 0;
  std::vector<uint64_t> sig_hits;
  std::vector<std::string> notes;
  std::set<std::string> placeholder_seen;
  uint64_t placeholder_unnoted = 0;

  // Reused per line (no allocation once warm).
  std::vector<uint32_t> hits;
  FieldValues caps, tmp;
  // Signatures with identical field declarations (names and types) type
  // captures identically: same class id.
  std::vector<uint32_t> typing_class;
  // Per pattern: the `when` results of its signatures, memoised on the typed
  // values of the fields those conditions read (a storm repeats one Xid: ~50
  // conditions per line become one lookup). A condition is a pure function of
  // the first capture of each field it names, so the memo is exact.
  struct WhenMemo {
    bool on = false;
    std::vector<std::string> fields;  // every field any condition of the pattern reads
    std::unordered_map<std::string, std::vector<uint8_t>> rows;  // key -> result per first_of slot
    uint64_t lookups = 0, misses = 0;
  };
  static constexpr size_t kMemoRows = 4096;
  std::vector<WhenMemo> when_memo;
  std::string memo_key;
  std::string stream_key;
  std::unordered_map<std::string, Stream> streams;
  size_t pending_total = 0;
  // Current file for feed_line (host, evidence file).
  std::string cur_host, cur_file;
  bool have_file = false;
  uint64_t envelopes = 0;
  std::string envelope_storage;
  ingest::StormFilter::Emit emit_fn;
  // set_progress(): called between lines every kProgressLines lines read.
  static constexpr uint64_t kProgressLines = 4096;
  std::function<void(const OpenStorms&)> progress;
  uint64_t since_progress = 0;
  void count_progress(uint64_t lines) {
    if (!progress) return;
    since_progress += lines;
    if (since_progress < kProgressLines) return;
    since_progress = 0;
    flush_batch();  // the open storms as of the last line read
    progress(storms);
  }

  // ---- chunk mode (bundle files, see Matcher::scan_block) ----
  // A file starts in per-line mode; after kProbeLines lines whose message is
  // a slice of the raw line (text formats) it switches to chunk mode. Formats
  // that build the message elsewhere (JSON, CSV, joined CRI lines) stay per line.
  // In chunk mode a block of lines is scanned once; only the lines the scan
  // hits are found (memchr around the hit), numbered (newlines counted up to
  // them), parsed and matched. Other lines cost the scan and the count only.
  enum class FileMode { probing, per_line, chunk };
  static constexpr int kProbeLines = 64;
  static constexpr size_t kChunkBytes = 1 << 20;
  FileMode file_mode = FileMode::probing;
  int probed = 0;
  std::string chunk;  // lines copied one by one (file_line), each ending in '\n'
  uint64_t chunk_first_no = 0, chunk_n = 0;  // number of its first line, lines in it
  std::vector<ingest::Matcher::BlockLine> cand_lines;
  std::vector<uint32_t> block_hits;  // pattern ids of cand_lines
  // process() with a block's hits: they are a superset of the message's (the
  // line's prefix was scanned too), so a pattern counted as a transport
  // mismatch or an RE2 reject is first checked against a scan of the
  // message itself (lazily, once per line): counters stay exact.
  std::vector<uint32_t> exact_hits;
  bool hits_superset = false, exact_known = false;
  uint64_t chunk_lines = 0, chunk_bytes = 0;    // lines/bytes seen in chunk mode
  uint64_t parsed_lines = 0, parsed_bytes = 0;  // of those, counted again by the parser
  LogRecord chunk_rec;
  LogRecord locate_rec;
  LogRecord chunk_rec_line;  // per-line records of a --threads worker
  // false with *declined set: the bundle's files cannot keep n threads busy
  // (nothing was read; the caller walks it with one thread).
  bool read_bundle_threads(BundleListing& listing, unsigned n, bool* declined, std::string* error);

  // ---- --threads (Ingestor::read_bundle with threads > 1) ----
  // A worker Impl reads whole files and records, in line order, what the
  // sequential walk would do to the state shared across files (storm windows
  // advancing, events built, located and folded, unrecognised lines); the
  // main Impl replays that file by file in walk order, so events, their
  // sequence numbers, storms, notes and counters are those of one thread.
  // An op's texts (line, host, clock) are ranges of its batch's arena, not
  // strings of their own: one op per matched line, and a malloc + copy per
  // string (the clock "<host>/kernel" is past the small-string size) made
  // the worker's side of the hand-over ~14% of its CPU on the telemetry mix.
  // Captured fields travel the same way, as (name, value) ranges in the
  // batch: a FieldValues per op was a malloc on the worker and a free on the
  // replay's thread, ~6% of the threaded telemetry run's CPU in malloc/free.
  struct Text {
    uint32_t off = 0, len = 0;
  };
  struct Op {
    enum Kind : uint8_t { advance, match, unrecognised } kind = advance;
    Transport transport = kTransportApp;
    bool host_known = true;
    int rank_hint = -1;
    uint32_t si = 0;
    TimeUs t = 0;  // advance
    std::optional<TimeUs> wall;
    std::optional<double> mono;
    Text clock, host, line;
    uint64_t line_no = 0;
    uint32_t field_first = 0, field_count = 0;  // OpBatch::fields
    uint64_t repeat = 1;  // unrecognised: lines of si counted, none of them a sample
  };
  struct OpBatch {
    std::vector<Op> ops;
    std::string text;  // the arena of the ops' Text ranges
    std::vector<std::pair<Text, Text>> fields;
    Text keep(std::string_view v) {
      Text t{static_cast<uint32_t>(text.size()), static_cast<uint32_t>(v.size())};
      text.append(v);
      return t;
    }
    std::string_view view(Text t) const { return std::string_view(text).substr(t.off, t.len); }
    void keep_fields(const FieldValues& fv, Op* op) {
      op->field_first = static_cast<uint32_t>(fields.size());
      op->field_count = static_cast<uint32_t>(fv.size());
      for (const auto& [name, value] : fv) fields.emplace_back(keep(name), keep(value));
    }
    // Into *out, reusing its strings' storage.
    void view_fields(const Op& op, FieldValues* out) const {
      out->resize(op.field_count);
      for (uint32_t i = 0; i < op.field_count; ++i) {
        const auto& [name, value] = fields[op.field_first + i];
        (*out)[i].first.assign(view(name));
        (*out)[i].second.assign(view(value));
      }
    }
    void clear() {
      ops.clear();
      text.clear();
      fields.clear();
    }
  };
  OpBatch* record = nullptr;
  // Set by a --threads worker: hands *record over and leaves it empty. Called
  // before an op is added to a full batch, so a batch stays near kBatch ops
  // or kBatchText bytes even inside a 1 MB block of lines (checked per block,
  // they grew to 16,384 ops and 4 MB, past L2: the replay read them from
  // memory; the threaded telemetry run is ~3% faster with them small).
  std::function<void()> hand_over;
  Op& add_op() {
    if (hand_over && (record->ops.size() >= ThreadedWalk::kBatch ||
                      record->text.size() >= ThreadedWalk::kBatchText))
      hand_over();
    return record->ops.emplace_back();
  }
  // The replay's reused strings for an op's host and time (no malloc per op).
  std::string replay_host;
  EventTime replay_time;
  FieldValues replay_fields;
  // A worker's unrecognised lines of this file past each suspect's first
  // opts.unrecognized_per_suspect: never samples (the first few of each suspect in
  // walk order), so they travel as one count per suspect, not one op each
  // (a benign mlx5 chatter line in every 13th kernel line made 100,000 ops).
  std::vector<uint64_t> unrec_in_file, unrec_extra;
  void flush_unrecognised_counts() {
    for (uint32_t si = 0; si < unrec_extra.size(); ++si) {
      if (!unrec_extra[si]) continue;
      Op& op = add_op();
      op.kind = Op::unrecognised;
      op.si = si;
      op.repeat = unrec_extra[si];
    }
    unrec_in_file.assign(unrec_in_file.size(), 0);
    unrec_extra.assign(unrec_extra.size(), 0);
  }
  // Advances with no event between them close the same folds, in the same
  // (deadline) order, as one advance to the latest of them.
  void record_advance(TimeUs t) {
    if (!record->ops.empty() && record->ops.back().kind == Op::advance) {
      record->ops.back().t = std::max(record->ops.back().t, t);
      return;
    }
    add_op().t = t;
  }
  void replay(const Op& op, const OpBatch& b, const std::string& file) {
    switch (op.kind) {
      case Op::advance:
        storms.advance(op.t, emit_fn);
        break;
      case Op::match:
        replay_time.wall = op.wall;
        replay_time.mono = op.mono;
        replay_time.clock.assign(b.view(op.clock));
        replay_host.assign(b.view(op.host));
        b.view_fields(op, &replay_fields);
        emit_event(op.si, replay_fields, &replay_fields, replay_time, op.transport, replay_host,
                   op.host_known, op.rank_hint, file, op.line_no, b.view(op.line));
        break;
      case Op::unrecognised:
        if (op.line_no == 0)  // a count (flush_unrecognised_counts)
          count_unrecognised(op.si, op.repeat);
        else
          note_unrecognised(op.si, file, op.line_no, b.view(op.line));
        break;
    }
  }
  // One file's counters, as a worker left them.
  struct FileCounters {
    FormatStats fstats;
    IngestStats stats;
    uint64_t parsed_lines = 0, parsed_bytes = 0, chunk_lines = 0, chunk_bytes = 0;
  };
  FileCounters take_counters() {
    FileCounters c;
    std::swap(c.fstats, fstats);
    std::swap(c.stats, stats);
    c.parsed_lines = std::exchange(parsed_lines, 0);
    c.parsed_bytes = std::exchange(parsed_bytes, 0);
    c.chunk_lines = std::exchange(chunk_lines, 0);
    c.chunk_bytes = std::exchange(chunk_bytes, 0);
    return c;
  }
  // One file of a --threads walk: the worker appends ops, the replay takes them.
  struct FileSlot {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<OpBatch> batches;
    bool done = false;
    std::string error;  // an exception in the worker
    FileCounters counters;
  };
  // What the workers and the replay of one --threads walk share. Workers
  // stay at most `ahead` (kAhead a thread) files past the replay: with 2 a
  // thread, the worker past a host's large CSV waited at the window's edge,
  // ~25 ms of a core in a 0.37 s telemetry run. A batch is handed over at
  // kBatch ops or kBatchText bytes of arena (long lines), whichever first; a
  // slot holds kMaxQueued batches (~512K ops) before its worker waits for
  // the replay (with 32, files of more than 64K ops ahead of it did).
  struct ThreadedWalk {
    static constexpr size_t kAhead = 4, kBatch = 2048, kBatchText = size_t{1} << 20,
                            kMaxQueued = 256, kStreamBytes = size_t{1} << 20;
    // Files of at most this many bytes may be read out of walk order.
    static constexpr uintmax_t kOutOfOrderBytes = uintmax_t{16} << 20;
    BundlePlan plan;
    std::string dir;
    size_t ahead = kAhead;
    std::deque<FileSlot> slots;
    std::mutex window_mu;  // guards what follows, up to spare_mu
    std::condition_variable window_cv;
    size_t replayed = 0;
    std::vector<uintmax_t> bytes;  // each file's size, for largest-first picks
    std::vector<uint8_t> taken;
    size_t lowest_untaken = 0, n_taken = 0;
    // Every file has a worker: the walk's end, where the replay is to keep up.
    std::atomic<bool> all_taken{false};
    // The next file for a worker (SIZE_MAX: none left); *in_order when it is
    // the lowest untaken one, whose worker may wait for the replay.
    size_t pick(bool* in_order);
    // Replayed batches, emptied with their capacity kept, for the workers to
    // fill again (the ops' vectors and arenas are not allocated per batch).
    std::mutex spare_mu;
    std::vector<OpBatch> spare;
    OpBatch fresh_batch();
  };
  void walk_worker(ThreadedWalk& walk);
  void read_walk_file(ThreadedWalk& walk, size_t i, bool in_order, OpBatch* ops);
  std::string replay_in_walk_order(ThreadedWalk& walk);
  // The listing's notes and counters, said before any file's, as the walk's are.
  void merge_listing_notes(BundleListing& listing) {
    FileCounters c;
    c.fstats = std::move(listing.stats);
    merge(c);
  }
  void merge(FileCounters& c) {
    const FormatStats& f = c.fstats;
    fstats.lines += f.lines;
    fstats.bytes += f.bytes;
    fstats.invalid_utf8 += f.invalid_utf8;
    fstats.nul_bytes += f.nul_bytes;
    fstats.truncated_long_lines += f.truncated_long_lines;
    fstats.skipped_invalid_json += f.skipped_invalid_json;
    fstats.skipped_no_msg += f.skipped_no_msg;
    fstats.no_timestamp += f.no_timestamp;
    fstats.implausible_time += f.implausible_time;
    fstats.unknown_hosts += f.unknown_hosts;
    fstats.skipped_files += f.skipped_files;
    fstats.cri_partial_joined += f.cri_partial_joined;
    fstats.prompt_lines += f.prompt_lines;
    fstats.embedded_lines += f.embedded_lines;
    for (std::string& n : c.fstats.notes) add_note(&fstats, std::move(n));
    const IngestStats& s = c.stats;
    stats.matched_lines += s.matched_lines;
    stats.truncated_long_lines += s.truncated_long_lines;
    stats.incomplete_multiline += s.incomplete_multiline;
    stats.prefilter_rejects += s.prefilter_rejects;
    stats.rejected_by_when += s.rejected_by_when;
    stats.transport_mismatch += s.transport_mismatch;
    for (const auto& [file, n] : s.transport_refused_by_file)
      stats.transport_refused_by_file[file] += n;
    parsed_lines += c.parsed_lines;
    parsed_bytes += c.parsed_bytes;
    chunk_lines += c.chunk_lines;
    chunk_bytes += c.chunk_bytes;
  }

  static bool msg_in_raw(const LogRecord& r) {
    return r.msg.empty() || (r.msg.data() >= r.raw.data() &&
                             r.msg.data() + r.msg.size() <= r.raw.data() + r.raw.size());
  }

  // Parses the line [b, e) of a block; counts it as parsed (it was counted on arrival).
  bool parse_block_line(std::string_view buf, size_t b, size_t e, uint64_t no, LogRecord* rec) {
    uint64_t before = fstats.lines, bytes_before = fstats.bytes;
    bool ok = parser.parse(buf.substr(b, e - b), no, rec);
    parsed_lines += fstats.lines - before;
    parsed_bytes += fstats.bytes - bytes_before;
    return ok;
  }

  // The parser keeps the previous timed line's time, and lines between hits
  // are not parsed: before the line starting at `pos` (number `no`), walk
  // back over the unparsed lines from `known` on to the nearest one with its
  // own time (parsing it sets that state; untimed lines leave it alone).
  // Every line is parsed at most once this way.
  void settle(std::string_view buf, size_t pos, uint64_t no, size_t known) {
    while (pos > known) {
      size_t e = pos - 1;  // the '\n' ending the previous line
      const void* p = memrchr(buf.data() + known, '\n', e - known);
      size_t b = p ? static_cast<size_t>(static_cast<const char*>(p) - buf.data()) + 1 : known;
      --no;
      if (parse_block_line(buf, b, e, no, &chunk_rec) && !chunk_rec.time_inherited) break;
      pos = b;
    }
  }

  // Whether the candidate line [b, e) parses the same without the walk back
  // (settle): when it has its own time and the line before it, not yet
  // parsed, could not change how it is read (LineParser::parses_alone).
  // Most candidate lines of a syslog file are such; the walk parsed a
  // second line for each of them.
  bool parses_alone(std::string_view buf, size_t b, size_t e, size_t known) {
    if (b <= known) return true;  // nothing unparsed before it
    const void* p = memrchr(buf.data() + known, '\n', b - 1 - known);
    const size_t pb = p ? static_cast<size_t>(static_cast<const char*>(p) - buf.data()) + 1 : known;
    return parser.parses_alone(buf.substr(pb, b - 1 - pb), buf.substr(b, e - b));
  }

  // Where a block walk stands: lines before `known` are reflected in the
  // parser's state; newlines before `counted` are counted and `no` is the
  // number of the line starting there.
  struct BlockWalk {
    size_t known = 0, counted = 0;
    uint64_t no = 0;
  };

  // A candidate line whose block-scan hits are all continuations (parts >= 1
  // of multi-line signatures) when no multi-line signature can be waiting
  // for it: no line that could start or advance one (a hit of such a first
  // part or of a continuation, or a line whose hits are not known) lies
  // within the join window before it in this file. Processing it would
  // change nothing; a loose continuation (a table's `+` border) would
  // otherwise make every line that has one a candidate.
  bool idle_continuation(const uint32_t* hits, uint32_t n_hits, uint64_t no) {
    const uint64_t window = matcher.join_window();
    if (window == 0) return false;
    bool may_join = hits == nullptr, first_part = false;
    for (uint32_t k = 0; hits && k < n_hits; ++k) {
      const ingest::PatternInfo& p = matcher.patterns()[hits[k]];
      may_join |= p.starts_multiline || p.is_continuation;
      first_part |= !p.first_of.empty();
    }
    if (hits && !first_part && no >= join_open_end) return true;
    if (may_join) join_open_end = std::max(join_open_end, no + window + 1);
    return false;
  }
  uint64_t join_open_end = 0;  // lines numbered below it may meet a waiting multi-line signature

  // Parses and processes one candidate line [b, e) of buf; hits: its pattern
  // ids from a block scan (superset), or nullptr to scan its message.
  void block_line(std::string_view buf, size_t b, size_t e, BlockWalk* w, const uint32_t* hits,
                  uint32_t n_hits, const std::vector<uint32_t>* exact) {
    w->no += count_newlines(buf.substr(w->counted, b - w->counted));
    w->counted = b;
    if (idle_continuation(hits, n_hits, w->no)) return;
    if (!parses_alone(buf, b, e, w->known)) settle(buf, b, w->no, w->known);
    if (parse_block_line(buf, b, e, w->no, &chunk_rec)) {
      if (!msg_in_raw(chunk_rec)) {
        file_mode = FileMode::per_line;
        process(chunk_rec);  // the message is not a slice of the line: scan it
      } else {
        note_msg_offset(chunk_rec);
        if (exact)
          process_exact(chunk_rec, *exact);
        else if (!hits)
          process(chunk_rec);
        else  // reuse the block scan's hits: no second scan of the line
          process(chunk_rec, hits, n_hits);
      }
    }
    w->known = std::min(buf.size(), e + 1);
  }

  // The lines of buf[rb, re) (whole lines) the chunk database hits, each
  // parsed and processed in order.
  void scan_range(std::string_view buf, size_t rb, size_t re, BlockWalk* w) {
    matcher.scan_block(buf.substr(rb, re - rb), &cand_lines, &block_hits);
    for (const auto& c : cand_lines) {
      if (c.hit_count == ingest::Matcher::kUnknownHits)
        block_line(buf, rb + c.begin, rb + c.end, w, nullptr, 0, nullptr);
      else
        block_line(buf, rb + c.begin, rb + c.end, w, block_hits.data() + c.hit_begin, c.hit_count,
                   nullptr);
    }
  }

  // `buf`: whole lines, each ending in '\n', the first numbered first_no.
  // Returns their number (counted past the last candidate line here).
  uint64_t scan_block(std::string_view buf, uint64_t first_no) {
    BlockWalk w;
    w.no = first_no;
    const uint64_t replays_before = memo_replays;
    if (memo_first)
      memo_first_block(buf, &w);
    else
      scan_range(buf, 0, buf.size(), &w);
    const uint64_t n_lines = w.no - first_no + count_newlines(buf.substr(w.counted));
    settle(buf, buf.size(), first_no + n_lines, w.known);
    // A block where most lines were replayed from the line memo is a storm:
    // the next block looks the memo up before scanning (and back when not).
    const uint64_t replays = memo_replays - replays_before;
    if (n_lines >= 64)  // a line that spans reads comes alone: no evidence either way
      memo_first =
          memo_first_ok && replays * (memo_first ? kMemoFirstStay : kMemoFirstEnter) >= n_lines;
    return n_lines;
  }

  void flush_chunk() {
    flush_batch();
    if (chunk_n == 0) return;
    scan_block(chunk, chunk_first_no);
    chunk.clear();
    chunk_n = 0;
  }

  // A block of whole lines from the bundle reader, scanned in place; returns
  // their number.
  uint64_t file_block(std::string_view text, uint64_t first_line_no) {
    flush_chunk();
    if (text.empty()) return 0;
    if (text.size() >= UINT32_MAX - 2) {  // offsets are 32-bit: split (never with 1 MB reads)
      size_t cut = text.rfind('\n', UINT32_MAX / 2);
      if (cut != std::string_view::npos && cut + 1 < text.size()) {
        const uint64_t n1 = file_block(text.substr(0, cut + 1), first_line_no);
        return n1 + file_block(text.substr(cut + 1), first_line_no + n1);
      }
    }
    const uint64_t n_lines = scan_block(text, first_line_no);
    chunk_lines += n_lines;
    chunk_bytes += text.size();
    return n_lines;
  }

  // One line of a file, in whatever mode the file is in.
  void file_line(std::string_view raw, uint64_t line_no, LogRecord* rec) {
    if (file_mode == FileMode::chunk) {
      if (chunk.size() + raw.size() >= UINT32_MAX - 2) flush_chunk();
      if (chunk_n == 0) chunk_first_no = line_no;
      ++chunk_n;
      chunk.append(raw);
      chunk += '\n';
      ++chunk_lines;
      chunk_bytes += raw.size() + 1;
      if (chunk.size() >= kChunkBytes) flush_chunk();
      return;
    }
    if (!parser.parse(raw, line_no, rec)) return;
    if (file_mode == FileMode::probing) {
      if (!msg_in_raw(*rec)) {
        file_mode = FileMode::per_line;
      } else if (++probed >= kProbeLines && matcher.chunk_mode() && opts.chunk_mode) {
        file_mode = FileMode::chunk;
      }
    } else if (file_mode == FileMode::per_line && matcher.chunk_mode() && opts.chunk_mode &&
               rec->msg.find('\n') == std::string_view::npos) {
      batch_line(*rec);
      return;
    }
    flush_batch();
    process(*rec);
  }

  // ---- message batches (per-line files: CSV, JSON, joined CRI lines) ----
  // Their messages are not slices of the raw lines, so no block scan of the
  // file applies; instead the parsed records wait in a batch whose messages,
  // one a line, get one block scan: one Hyperscan call per batch, not per
  // line. Records are processed in line order, each with its message's hits.
  static constexpr size_t kBatchLines = 1024, kBatchBytes = 1 << 19;
  std::vector<LogRecord> msg_batch;
  size_t batch_n = 0;
  std::string batch_msgs, batch_raw;  // each message followed by '\n'; the raw lines
  std::vector<uint32_t> batch_msg_at, batch_raw_at;

  void batch_line(const LogRecord& rec) {
    if (batch_n == msg_batch.size()) msg_batch.emplace_back();
    msg_batch[batch_n++] = rec;
    batch_msg_at.push_back(static_cast<uint32_t>(batch_msgs.size()));
    batch_msgs.append(rec.msg);
    batch_msgs += '\n';
    batch_raw_at.push_back(static_cast<uint32_t>(batch_raw.size()));
    batch_raw.append(rec.raw);
    if (batch_n >= kBatchLines || batch_msgs.size() + batch_raw.size() >= kBatchBytes)
      flush_batch();
  }

  void flush_batch() {
    if (batch_n == 0) return;
    matcher.scan_block(batch_msgs, &cand_lines, &block_hits);
    static const uint32_t kNoHits = 0;
    size_t c = 0;
    for (size_t i = 0; i < batch_n; ++i) {
      LogRecord& r = msg_batch[i];
      const uint32_t at = batch_msg_at[i];
      r.msg = std::string_view(batch_msgs).substr(at, r.msg.size());
      r.raw = std::string_view(batch_raw).substr(batch_raw_at[i], r.raw.size());
      while (c < cand_lines.size() && cand_lines[c].begin < at) ++c;
      if (c < cand_lines.size() && cand_lines[c].begin == at) {
        const auto& l = cand_lines[c];
        if (l.hit_count == ingest::Matcher::kUnknownHits)
          process(r);
        else
          process(r, block_hits.data() + l.hit_begin, l.hit_count);
      } else {
        process(r, &kNoHits, 0);  // no pattern can match: time and multi-line state only
      }
    }
    batch_n = 0;
    batch_msgs.clear();
    batch_raw.clear();
    batch_msg_at.clear();
    batch_raw_at.clear();
  }

  void begin_chunked_file(const FileContext& ctx) {
    flush_chunk();
    end_of_file_stream();
    parser.begin_file(ctx);
    file_mode = FileMode::probing;
    probed = 0;
    memo_first = false;
    msg_at[0] = msg_at[1] = MsgAt{};
    join_open_end = 0;
  }

  // `origin`: a --threads worker's, whose matcher shares origin's compiled
  // patterns (Matcher::share) instead of compiling its own.
  Impl(const KnowledgeBase& k, const Topology& t, IngestOptions o, const Impl* origin = nullptr)
      : kb(k),
        topo(t),
        opts(o),
        parser(t, FormatOptions{o.strict_transport, o.max_line_bytes}, &fstats),
        storms(o.default_dedup_s, &storm_counters) {
    std::string err;
    if (origin ? !matcher.share(origin->matcher, &err) : !matcher.build(kb, &err, &notes)) {
      ok = false;
      notes.push_back("knowledge base not usable for matching: " + err);
    }
    stats.precompiled_patterns = matcher.from_cache();
    matcher.reserve_hits(&hits);
    matcher.reserve_hits(&exact_hits);
    sig_hits.assign(matcher.signatures().size(), 0);
    std::map<std::string, uint32_t> classes;
    for (const ingest::SigInfo& si : matcher.signatures()) {
      std::map<std::string, int> types;  // as CompiledSignature builds them: last wins
      for (const FieldDecl& f : si.sig->fields) types[f.name] = static_cast<int>(f.type);
      std::string key;
      for (const auto& [name, type] : types) {
        key += name;
        key += '\0';
        key += std::to_string(type);
        key += '\0';
      }
      typing_class.push_back(
          classes.emplace(std::move(key), static_cast<uint32_t>(classes.size())).first->second);
    }
    build_when_memo();
    memo_first_ok = line_memo_on && matcher.shared_database() && matcher.chunk_mode();
    emit_fn = [this](Event&& ev) {
      ++stats.events;
      if (sink) sink(std::move(ev));
    };
  }

  // The fields a condition reads; *regex: it has a `matches` (an RE2 run per evaluation).
  static void condition_fields(const Condition& c, std::vector<std::string>* out, bool* regex) {
    for (const Condition& k : c.children) condition_fields(k, out, regex);
    if (c.op == Condition::Op::matches) *regex = true;
    if (!c.field.empty() && std::find(out->begin(), out->end(), c.field) == out->end())
      out->push_back(c.field);
  }

  void build_when_memo() {
    const auto& pats = matcher.patterns();
    const auto& sigs = matcher.signatures();
    when_memo.resize(pats.size());
    for (size_t p = 0; p < pats.size(); ++p) {
      WhenMemo& m = when_memo[p];
      size_t conditions = 0;
      bool regex = false;
      for (uint32_t si : pats[p].first_of) {
        const Signature& sig = *sigs[si].sig;
        if (sig.suspect || sigs[si].part_pattern.size() > 1 || !sig.when) continue;
        ++conditions;
        condition_fields(*sig.when, &m.fields, &regex);
      }
      // A few comparisons are as cheap to evaluate as a lookup; a regex is not
      // (a throttle-reasons `matches` on every telemetry sample).
      m.on = (conditions >= 4 || (conditions >= 1 && regex)) && m.fields.size() <= 4;
    }
  }

  // The `when` results for the first_of slots of pattern p whose typing
  // class is `cls` (typed captures in `typed`); nullptr = evaluate directly.
  const std::vector<uint8_t>* when_row(uint32_t p, uint32_t cls, const FieldValues& typed) {
    WhenMemo& m = when_memo[p];
    if (!m.on) return nullptr;
    memo_key.assign(reinterpret_cast<const char*>(&cls), sizeof cls);
    for (const std::string& f : m.fields) {
      auto it =
          std::find_if(typed.begin(), typed.end(), [&](const auto& kv) { return kv.first == f; });
      if (it == typed.end()) {
        memo_key += '\x01';  // absent
      } else {
        memo_key += '\x02';
        memo_key += it->second;
        memo_key += '\0';
      }
    }
    ++m.lookups;
    auto hit = m.rows.find(memo_key);
    if (hit != m.rows.end()) return &hit->second;
    ++m.misses;
    // Mostly distinct values (a temperature, a counter): the memo does not pay.
    if (m.lookups >= 2048 && m.misses * 2 > m.lookups) {
      m.on = false;
      m.rows.clear();
      return nullptr;
    }
    const auto& pats = matcher.patterns();
    const auto& sigs = matcher.signatures();
    const auto& first = pats[p].first_of;
    std::vector<uint8_t> row(first.size(), 0);
    for (size_t j = 0; j < first.size(); ++j)
      if (typing_class[first[j]] == cls) row[j] = sigs[first[j]].compiled->when_holds(typed);
    if (m.rows.size() >= kMemoRows) {
      scratch_row = std::move(row);
      return &scratch_row;
    }
    return &m.rows.emplace(memo_key, std::move(row)).first->second;
  }
  std::vector<uint8_t> scratch_row;

  void note_placeholder(const std::string& id) {
    ++stats.placeholder_devices;
    if (placeholder_seen.count(id)) return;
    if (placeholder_seen.size() >= kMaxPlaceholderNotes) {
      ++placeholder_unnoted;
      return;
    }
    placeholder_seen.insert(id);
    notes.push_back("device " + id + " is not in the topology; kept as a placeholder");
  }

  // The event's own device: a pure function of the signature, the located
  // field's value and the line's host and rank hint, so a storm's repeats
  // are looked up (normalising a BDF and the topology lookup are skipped).
  static constexpr size_t kLocateMemoEntries = 4096;
  std::unordered_map<std::string, ingest::Located> locate_memo;
  std::string locate_key;
  ingest::Located locate_own(uint32_t si, const Signature& sig, const Locator* own,
                             const FieldValues& fields, const LogRecord& rec) {
    locate_key.assign(reinterpret_cast<const char*>(&si), sizeof si);
    locate_key.append(reinterpret_cast<const char*>(&rec.rank_hint), sizeof rec.rank_hint);
    locate_key += rec.host_known ? '\x01' : '\x02';
    locate_key += rec.host;
    if (own) {
      // As locate_device reads it: the first capture of the field, empty = absent.
      const std::string* v = nullptr;
      for (const auto& [n, val] : fields)
        if (n == own->field) {
          v = &val;
          break;
        }
      if (v && !v->empty()) {
        locate_key += '\0';
        locate_key += *v;
      }
    }
    auto it = locate_memo.find(locate_key);
    if (it != locate_memo.end()) return it->second;
    ingest::Located d = ingest::locate_device(topo, sig, sig.kind, own, fields, rec);
    if (locate_memo.size() >= kLocateMemoEntries) locate_memo.clear();
    locate_memo.emplace(locate_key, d);
    return d;
  }

  // `line` and `fields` are copied only when an event is built (a storm's
  // repeat folded into an open fold copies neither); `movable`, when set, is
  // `fields` and may be moved from.
  void emit_event(uint32_t si, const FieldValues& fields, FieldValues* movable,
                  const EventTime& time, Transport transport, const std::string& host,
                  bool host_known, int rank_hint, std::string_view file, uint64_t line_no,
                  std::string_view line) {
    if (record) {  // a --threads worker: the replay builds the event
      Op& op = add_op();
      op.kind = Op::match;
      op.transport = transport;
      op.host_known = host_known;
      op.rank_hint = rank_hint;
      op.si = si;
      op.wall = time.wall;
      op.mono = time.mono;
      op.clock = record->keep(time.clock);
      op.host = record->keep(host);
      op.line = record->keep(line);
      op.line_no = line_no;
      record->keep_fields(fields, &op);
      return;
    }
    const ingest::SigInfo& s = matcher.signatures()[si];
    const Signature& sig = *s.sig;
    ++sig_hits[si];
    LogRecord& rec = locate_rec;  // reused: locate_device reads host, host_known, rank_hint
    rec.host = host;
    rec.host_known = host_known;
    rec.rank_hint = rank_hint;
    const Locator* own = nullptr;
    for (const Locator& l : sig.locators)
      if (l.binding.empty()) own = &l;
    ingest::Located d = locate_own(si, sig, own, fields, rec);
    const bool judged = ingest::StormFilter::has_baseline(sig);
    if (judged) {
      // Placeholder notes as for an event that is built (device, then bindings).
      if (d.placeholder) note_placeholder(d.id);
      for (const Locator& l : sig.locators) {
        if (l.binding.empty()) continue;
        ingest::Located b = ingest::locate_device(topo, sig, l.kind, &l, fields, rec);
        if (b.placeholder) note_placeholder(b.id);
      }
      if (!storms.baseline_passes(si, sig, fields, d.id)) return;
    } else if (storms.try_fold(si, sig, d.id, fields, time)) {
      // A storm's repeat: the open fold counts it; the notes and the
      // sequence number are those of the event add() would have folded.
      if (d.placeholder) note_placeholder(d.id);
      for (const Locator& l : sig.locators) {
        if (l.binding.empty()) continue;
        ingest::Located b = ingest::locate_device(topo, sig, l.kind, &l, fields, rec);
        if (b.placeholder) note_placeholder(b.id);
      }
      ++seq;
      return;
    }
    Event ev;
    ev.name = sig.name;
    ev.kind = sig.kind;
    ev.device = std::move(d.id);
    ev.host = std::move(d.host);
    ev.placeholder_device = d.placeholder;
    if (d.placeholder && !judged) note_placeholder(ev.device);
    for (const Locator& l : sig.locators) {
      if (l.binding.empty()) continue;
      ingest::Located b = ingest::locate_device(topo, sig, l.kind, &l, fields, rec);
      if (b.id.empty()) continue;  // the line does not name it
      if (b.placeholder && !judged) note_placeholder(b.id);
      ev.bindings.emplace_back(l.binding, std::move(b.id));
    }
    ev.time = time;
    if (movable)
      ev.fields = std::move(*movable);
    else
      ev.fields = fields;
    ev.evidence.reserve(file.size() + 12);
    ev.evidence.append(file.empty() ? std::string_view("stdin") : file);
    ev.evidence += ':';
    ev.evidence += std::to_string(line_no);
    ev.line.assign(line);
    ev.transport = transport;
    ev.seq = ++seq;
    storms.add(si, sig, std::move(ev), emit_fn, judged);
  }

  Stream* find_stream(const LogRecord& rec, bool create) {
    stream_key.assign(rec.file);
    stream_key += '\0';
    stream_key += rec.host;
    auto it = streams.find(stream_key);
    if (it != streams.end()) return &it->second;
    if (!create) return nullptr;
    return &streams[stream_key];
  }

  void drop_stream_pending(Stream* st) {
    stats.incomplete_multiline += st->pending.size();
    pending_total -= st->pending.size();
    st->pending.clear();
  }

  void complete(Pending&& p) {
    const ingest::SigInfo& s = matcher.signatures()[p.sig];
    if (!s.compiled->accept(&p.caps, nullptr)) {
      ++stats.rejected_by_when;
      return;
    }
    emit_event(p.sig, p.caps, &p.caps, p.time, p.transport, p.host, p.host_known, p.rank_hint,
               p.file, p.line_no, p.lines);
  }

  void advance_pending(const LogRecord& rec) {
    Stream* st = find_stream(rec, false);
    if (!st || st->pending.empty()) return;
    auto& pend = st->pending;
    for (size_t i = 0; i < pend.size();) {
      Pending& p = pend[i];
      const ingest::SigInfo& s = matcher.signatures()[p.sig];
      uint32_t pat = s.part_pattern[p.next_part];
      // File input skips lines nobody can match (chunk mode): count by line numbers.
      int limit = std::max(1, s.sig->join_within_lines);
      if (!rec.file.empty() && rec.line_no > p.last_line_no &&
          rec.line_no - p.last_line_no > static_cast<uint64_t>(limit)) {
        pend.erase(pend.begin() + static_cast<long>(i));
        --pending_total;
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
          --pending_total;
          ++stats.matched_lines;
          complete(std::move(done));
          continue;
        }
      } else if (--p.remaining <= 0) {
        pend.erase(pend.begin() + static_cast<long>(i));
        --pending_total;
        ++stats.incomplete_multiline;
        continue;
      }
      ++i;
    }
    if (pend.empty()) streams.erase(stream_key);
  }

  void start_pending(uint32_t si, const FieldValues& c, const LogRecord& rec) {
    const Signature& sig = *matcher.signatures()[si].sig;
    Stream* st = find_stream(rec, true);
    if (st->pending.size() >= kMaxPendingPerStream) {
      st->pending.erase(st->pending.begin());
      --pending_total;
      ++stats.incomplete_multiline;
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
    ++pending_total;
  }

  bool hit_in_msg(uint32_t p, const LogRecord& rec) {
    if (!hits_superset) return true;
    if (!exact_known) {
      matcher.scan(rec.msg, &exact_hits);
      exact_known = true;
    }
    return std::binary_search(exact_hits.begin(), exact_hits.end(), p);
  }

  // raw: the pattern ids a block scan reported for the record's line
  // (ascending); nullptr = scan the message.
  // superset: raw are the line's hits (prefix included), else the message's own.
  void process(const LogRecord& rec, const uint32_t* raw = nullptr, size_t n_raw = 0,
               bool superset = true) {
    if (rec.time.wall) {  // closes dedup folds
      if (record)
        record_advance(*rec.time.wall);
      else
        storms.advance(*rec.time.wall, emit_fn);
    }
    if (raw) {
      hits.assign(raw, raw + n_raw);
      hits_superset = superset;
      exact_known = false;
    } else {
      matcher.scan(rec.msg, &hits);
      hits_superset = false;
    }
    if (pending_total) advance_pending(rec);
    if (hits.empty()) return;
    // What follows is a pure function of (transport, message): a storm
    // repeats a few messages, so their outcome is looked up, not recomputed.
    const bool memo = line_memo_on && rec.msg.size() <= kMemoMsgBytes;
    if (memo) {
      // One hash of the message serves the seen-filter and the memo.
      // A memo-first line brings the entry its message was already checked
      // against (the same bytes of the same line): no second hash or compare.
      const MemoEntry* known = known_memo_for(rec);
      const uint64_t h = known ? known->hash : memo_hash(rec.msg, rec.transport);
      uint64_t& slot = memo_seen[h & (kMemoSeen - 1)];
      const uint64_t tag = h | 1;
      if (slot != tag) {  // first sight (or its slot was taken): unique lines pay one hash
        slot = tag;
        match_line(rec);
        return;
      }
      if (known) {
        ++memo_replays;
        replay_outcome(known->outcome, rec);
        return;
      }
      auto it = line_memo.find(h);
      if (it != line_memo.end()) {
        const MemoEntry& e = it->second;
        if (e.transport == rec.transport && e.msg == rec.msg) {
          ++memo_replays;
          replay_outcome(e.outcome, rec);
        } else {
          match_line(rec);  // a 64-bit hash collision: not memoised
        }
        return;
      }
      outcome.clear();
      recording = &outcome;
      match_line(rec);
      recording = nullptr;
      if (line_memo.size() >= kLineMemoEntries) {
        line_memo.clear();
        ++memo_generation;
      }
      line_memo.emplace(h, MemoEntry{rec.transport, std::string(rec.msg), std::move(outcome), h});
      outcome = Outcome{};
      return;
    }
    match_line(rec);
  }

  // The first-line matching of process(), its effects recorded in
  // *recording when set (line memo).
  struct Outcome {
    uint64_t transport_mismatch = 0, prefilter_rejects = 0, rejected_by_when = 0;
    bool matched = false, recognised = false, refused = false;
    uint32_t suspect = UINT32_MAX;
    struct Act {
      uint32_t si = 0;
      bool pending = false;  // start_pending, else emit_event
      FieldValues fields;
    };
    std::vector<Act> acts;
    void clear() { *this = Outcome{}; }
  };
  static constexpr size_t kMemoMsgBytes = 512, kLineMemoEntries = 4096, kMemoSeen = 1 << 14;
  bool line_memo_on = true;
  struct MemoEntry {
    Transport transport;
    std::string msg;
    Outcome outcome;
    uint64_t hash = 0;  // memo_hash(msg, transport), the map's key
    int8_t skip = -1;   // memo-first: -1 not yet known, 1 the message's hits prove the line's
    std::vector<uint32_t> msg_hits{};  // scan() of msg, once skip is known
  };
  static uint64_t memo_hash(std::string_view msg, Transport t) {
    return std::hash<std::string_view>{}(msg) ^ (static_cast<uint64_t>(t) * 0x9E3779B97F4A7C15ull);
  }
  std::unordered_map<uint64_t, MemoEntry> line_memo;  // by the message's hash
  uint64_t memo_generation = 0;  // bumped when line_memo is cleared (entries freed)
  // The entry memo_for_line found, the bytes of the line it compared equal
  // to it and the memo's generation then (process_exact hands it on).
  struct KnownMemo {
    const MemoEntry* entry = nullptr;
    std::string_view msg;
    uint64_t generation = 0;
  };
  KnownMemo found_memo, known_memo;
  const MemoEntry* known_memo_for(const LogRecord& rec) const {
    const KnownMemo& k = known_memo;
    if (!k.entry || k.generation != memo_generation || k.entry->transport != rec.transport ||
        rec.msg.data() != k.msg.data() || rec.msg.size() != k.msg.size())
      return nullptr;
    return k.entry;
  }
  std::vector<uint64_t> memo_seen = std::vector<uint64_t>(kMemoSeen, 0);
  Outcome outcome;
  Outcome* recording = nullptr;

  // ---- memo-first blocks (storms) ----
  // In a storm most lines repeat a message already in the line memo, after a
  // prefix (time, host) that differs. Such a line needs no Hyperscan scan:
  // its message's hits are stored with the memo entry, and the line would
  // have been a block-scan hit anyway, because one of those hits is of a
  // context_free pattern, the message ends the line and follows an ASCII
  // non-word byte (a match inside it is a match inside the line). The other
  // lines, runs between such lines, are block-scanned in place as before.
  // Which lines are parsed, and so every counter, is as with a full scan,
  // save a match spanning a line break into or out of a skipped line
  // (possible only for a pattern class that holds '\n'); RE2 matches one line,
  // so such a hit never confirms.
  static constexpr uint64_t kMemoFirstEnter = 4, kMemoFirstStay = 8;
  bool memo_first_ok = false;  // the matcher allows it (shared database)
  bool memo_first = false;     // for the current file's next block
  uint64_t memo_replays = 0, memo_first_lines = 0;
  // Where messages start in this file's lines (the prefix is the format's:
  // time, host, tag), with their transport: the one that last found a memo
  // line first, and the last other one a parsed candidate line showed.
  struct MsgAt {
    size_t off = 0;
    Transport transport = kTransportApp;
    bool known = false;
    bool operator==(const MsgAt& o) const {
      return off == o.off && transport == o.transport && known == o.known;
    }
  };
  MsgAt msg_at[2];
  std::vector<uint32_t> skip_hits;
  MsgAt lookup_at;  // what memo_for_line matched the line with

  void note_msg_offset(const LogRecord& r) {
    const size_t off = static_cast<size_t>(r.msg.data() - r.raw.data());
    if (off + r.msg.size() != r.raw.size()) return;  // not a suffix of the line
    const MsgAt at{off, r.transport, true};
    if (at == msg_at[0]) return;
    msg_at[1] = at;
    if (!msg_at[0].known) std::swap(msg_at[0], msg_at[1]);
  }

  MemoEntry* memo_at(std::string_view buf, size_t b, size_t e, const MsgAt& at) {
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
    auto it = line_memo.find(memo_hash(msg, at.transport));
    if (it == line_memo.end()) return nullptr;
    MemoEntry& en = it->second;
    if (en.transport != at.transport || en.msg != msg) return nullptr;
    if (en.skip < 0) {  // first use: the message's own hits, and the proof
      matcher.scan(en.msg, &en.msg_hits);
      en.skip = matcher.hit_survives_context(en.msg_hits) ? 1 : 0;
    }
    if (!en.skip) return nullptr;
    found_memo = KnownMemo{&en, msg, memo_generation};
    return &en;
  }

  // The memo entry whose message ends the line [b, e) after a usual prefix
  // of the file and is proven to hit (see above), or nullptr.
  MemoEntry* memo_for_line(std::string_view buf, size_t b, size_t e) {
    for (int i = 0; i < 2; ++i) {
      if (MemoEntry* en = memo_at(buf, b, e, msg_at[i])) {
        if (i == 1) std::swap(msg_at[0], msg_at[1]);
        lookup_at = msg_at[0];
        return en;
      }
    }
    return nullptr;
  }

  void memo_first_block(std::string_view buf, BlockWalk* w) {
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
          skip_hits = en->msg_hits;  // process may rebuild the memo
          ++memo_first_lines;
          block_line(buf, pos, e, w, nullptr, 0, &skip_hits);
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
  void process_exact(const LogRecord& rec, const std::vector<uint32_t>& exact) {
    const size_t off = static_cast<size_t>(rec.msg.data() - rec.raw.data());
    if (off + rec.msg.size() != rec.raw.size() || off != lookup_at.off ||
        rec.transport != lookup_at.transport) {
      process(rec);
      return;
    }
    known_memo = found_memo;
    process(rec, exact.data(), exact.size(), /*superset=*/false);
    known_memo = KnownMemo{};
  }

  void replay_outcome(const Outcome& o, const LogRecord& rec) {
    stats.transport_mismatch += o.transport_mismatch;
    stats.prefilter_rejects += o.prefilter_rejects;
    stats.rejected_by_when += o.rejected_by_when;
    for (const Outcome::Act& a : o.acts) {
      if (a.pending) {
        start_pending(a.si, a.fields, rec);
      } else {
        emit_event(a.si, a.fields, nullptr, rec.time, rec.transport, rec.host, rec.host_known,
                   rec.rank_hint, rec.file, rec.line_no, rec.raw);
      }
    }
    finish_line(rec, o.matched, o.recognised, o.refused, o.suspect);
  }

  void finish_line(const LogRecord& rec, bool matched, bool recognised, bool refused,
                   uint32_t suspect) {
    if (matched) ++stats.matched_lines;
    if (refused && !recognised) ++stats.transport_refused_by_file[std::string(rec.file)];
    if (suspect != UINT32_MAX && !recognised && !refused) {
      if (record && unrec_in_file.size() != matcher.signatures().size()) {
        unrec_in_file.assign(matcher.signatures().size(), 0);
        unrec_extra.assign(matcher.signatures().size(), 0);
      }
      if (record && ++unrec_in_file[suspect] > opts.unrecognized_per_suspect)
        ++unrec_extra[suspect];
      else if (record) {
        Op& op = add_op();
        op.kind = Op::unrecognised;
        op.transport = rec.transport;
        op.host_known = false;
        op.si = suspect;
        op.wall = rec.time.wall;
        op.mono = rec.time.mono;
        op.line_no = rec.line_no;
        op.line = record->keep(rec.raw.substr(0, kMaxUnrecognised));
      } else
        note_unrecognised(suspect, rec.file, rec.line_no, rec.raw);
    }
  }

  void match_line(const LogRecord& rec) {
    const auto& pats = matcher.patterns();
    const auto& sigs = matcher.signatures();
    Outcome* out = recording;
    bool matched = false, recognised = false, refused = false;
    uint32_t suspect = UINT32_MAX;
    for (uint32_t p : hits) {
      const ingest::PatternInfo& pi = pats[p];
      if (pi.first_of.empty()) continue;
      if (!(pi.first_sources & rec.transport)) {
        if (hit_in_msg(p, rec)) {
          ++stats.transport_mismatch;
          if (out) ++out->transport_mismatch;
          refused = true;
        }
        continue;
      }
      caps.clear();
      uint32_t typed_class = UINT32_MAX;
      bool typed_ok = false;
      if (!matcher.confirm(p, rec.msg, &caps)) {
        if ((pi.prefilter || !pi.anchor_dropped) && hit_in_msg(p, rec)) {
          ++stats.prefilter_rejects;
          if (out) ++out->prefilter_rejects;
        }
        continue;
      }
      const std::vector<uint8_t>* row = nullptr;
      for (size_t slot = 0; slot < pi.first_of.size(); ++slot) {
        const uint32_t si = pi.first_of[slot];
        const ingest::SigInfo& s = sigs[si];
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
          if (out) out->acts.push_back({si, true, caps});
          start_pending(si, caps, rec);
          matched = true;
          continue;
        }
        // Signatures sharing this pattern with the same field declarations
        // share one typed copy of the captures; only `when` differs.
        if (typing_class[si] != typed_class) {
          tmp = caps;
          typed_ok = s.compiled->type_fields(&tmp);
          typed_class = typing_class[si];
          row = typed_ok ? when_row(p, typed_class, tmp) : nullptr;
        }
        if (!typed_ok || !(row ? (*row)[slot] != 0 : s.compiled->when_holds(tmp))) {
          ++stats.rejected_by_when;
          if (out) ++out->rejected_by_when;
          continue;
        }
        matched = true;
        if (out) out->acts.push_back({si, false, tmp});
        // tmp serves the next signature: emit_event copies it if it builds an event
        emit_event(si, tmp, nullptr, rec.time, rec.transport, rec.host, rec.host_known,
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

  // A line that looks like fault evidence (a `suspect` matched) but that no
  // signature recognised: counted per suspect, the first few kept verbatim.
  static constexpr size_t kMaxUnrecognised = 300;
  void count_unrecognised(uint32_t si, uint64_t n) {
    stats.unrecognized_lines += n;
    stats.unrecognized_by_suspect[matcher.signatures()[si].sig->name] += n;
  }
  void note_unrecognised(uint32_t si, std::string_view file, uint64_t line_no,
                         std::string_view raw) {
    ++stats.unrecognized_lines;
    const std::string& name = matcher.signatures()[si].sig->name;
    uint64_t& n = stats.unrecognized_by_suspect[name];
    ++n;
    if (n <= opts.unrecognized_per_suspect &&
        stats.unrecognized_samples.size() < opts.unrecognized_samples) {
      UnrecognizedLine u;
      u.suspect = name;
      u.evidence = std::string(file) + ":" + std::to_string(line_no);
      u.line = std::string(raw.substr(0, kMaxUnrecognised));
      stats.unrecognized_samples.push_back(std::move(u));
    }
  }

  void end_of_file_stream() {
    // Multi-line messages do not continue across files.
    for (auto& [k, st] : streams) drop_stream_pending(&st);
    streams.clear();
  }

  void refresh_view() const {
    view = stats;
    // Chunk mode counts every line on arrival; the parser saw only some of them.
    view.lines = fstats.lines - parsed_lines + chunk_lines;
    view.bytes = fstats.bytes - parsed_bytes + chunk_bytes;
    view.skipped_invalid_json = fstats.skipped_invalid_json;
    view.skipped_no_msg = fstats.skipped_no_msg;
    view.invalid_utf8 = fstats.invalid_utf8;
    view.nul_bytes = fstats.nul_bytes;
    view.truncated_long_lines = fstats.truncated_long_lines + stats.truncated_long_lines;
    view.unknown_hosts = fstats.unknown_hosts;
    view.no_timestamp = fstats.no_timestamp;
    view.implausible_time = fstats.implausible_time;
    view.skipped_files = fstats.skipped_files;
    view.folded_by_dedup = storm_counters.folded_by_dedup;
    view.below_aggregate = storm_counters.below_aggregate;
    view.below_baseline = storm_counters.below_baseline;
    view.per_signature_hits.clear();
    const auto& sigs = matcher.signatures();
    for (size_t i = 0; i < sigs.size(); ++i)
      if (sig_hits[i]) view.per_signature_hits[sigs[i].sig->name] += sig_hits[i];
    view.notes = fstats.notes;
    view.notes.insert(view.notes.end(), notes.begin(), notes.end());
    if (placeholder_unnoted)
      view.notes.push_back(std::to_string(placeholder_unnoted) +
                           " more devices not in the topology (placeholders)");
  }
};

Ingestor::Ingestor(const KnowledgeBase& kb, const Topology& topo, IngestOptions opts)
    : impl_(std::make_unique<Impl>(kb, topo, opts)) {}

Ingestor::~Ingestor() = default;

void Ingestor::set_sink(EventSink sink) {
  std::lock_guard lock(impl_->mu);
  impl_->sink = std::move(sink);
}

bool Ingestor::ok() const {
  return impl_->ok;
}
size_t Ingestor::pattern_count() const {
  return impl_->matcher.patterns().size();
}
void Ingestor::set_memo_first(bool on) {
  std::lock_guard lock(impl_->mu);
  impl_->memo_first_ok =
      on && impl_->line_memo_on && impl_->matcher.shared_database() && impl_->matcher.chunk_mode();
  if (!on) impl_->memo_first = false;
}
uint64_t Ingestor::memo_first_lines() const {
  std::lock_guard lock(impl_->mu);
  return impl_->memo_first_lines;
}

// Workers read files ahead (at most kAhead per thread past the one being
// replayed); a worker on the lowest untaken file waits for the replay when
// its file's queue is full, and files read out of order are at most
// kOutOfOrderBytes, so memory stays bounded by the window, not by the bundle.
// Files are the unit of parallel work, so the gain is at most the bundle's
// size over its largest file's; below kMinFileGain the per-line hand-over to
// the replay costs more than the second core gives back (an Xid storm in one
// host's kern.log: 2.7x the one-thread wall time, `make bench` 2026-12-02).
namespace {
constexpr double kMinFileGain = 1.5;

bool files_keep_threads_busy(const std::vector<uintmax_t>& sizes) {
  uintmax_t total = 0, largest = 0;
  for (uintmax_t size : sizes) {
    total += size;
    largest = std::max(largest, size);
  }
  return largest > 0 && double(total) >= kMinFileGain * double(largest);
}
}  // namespace

BundleListing BundleListing::of(const std::string& dir) {
  BundleListing l;
  l.dir = dir;
  l.ok = plan_bundle(dir, &l.plan, &l.stats, &l.error);
  for (const BundleFile& f : l.plan.files) {
    std::error_code ec;
    const uintmax_t size = f.path.empty() ? 0 : std::filesystem::file_size(f.path, ec);
    l.bytes.push_back(ec ? 0 : size);
  }
  return l;
}

bool Ingestor::Impl::read_bundle_threads(BundleListing& listing, unsigned n, bool* declined,
                                         std::string* error) {
  *declined = !files_keep_threads_busy(listing.bytes);
  if (*declined) return false;
  ThreadedWalk walk;
  walk.plan = std::move(listing.plan);
  walk.bytes = std::move(listing.bytes);
  merge_listing_notes(listing);
  walk.dir = listing.dir;
  walk.ahead = ThreadedWalk::kAhead * n;
  walk.slots.resize(walk.plan.files.size());
  walk.taken.assign(walk.plan.files.size(), 0);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < n; ++t) pool.emplace_back([&] { walk_worker(walk); });
  const std::string failed = replay_in_walk_order(walk);
  for (std::thread& t : pool) t.join();
  if (!failed.empty()) {
    if (error) *error = failed;
    return false;
  }
  return true;
}

Ingestor::Impl::OpBatch Ingestor::Impl::ThreadedWalk::fresh_batch() {
  std::lock_guard lk(spare_mu);
  OpBatch b;
  if (!spare.empty()) {
    b = std::move(spare.back());
    spare.pop_back();
  }
  b.ops.reserve(kBatch);
  return b;
}

// Largest first within the window, so the walk does not end on one worker
// reading a large file while the other has none left (telemetry: the
// workers ended ~12 ms apart). The replay's own file comes first when no
// one has it. Deadlock-free: only an in-order worker (its file was the
// lowest untaken) waits for the replay, and every file below its own was
// taken before it; out-of-order files are small enough to queue whole.
size_t Ingestor::Impl::ThreadedWalk::pick(bool* in_order) {
  std::unique_lock lk(window_mu);
  for (;;) {
    while (lowest_untaken < taken.size() && taken[lowest_untaken]) ++lowest_untaken;
    if (lowest_untaken == taken.size()) return SIZE_MAX;
    if (lowest_untaken < replayed + ahead) break;
    window_cv.wait(lk);
  }
  size_t best = lowest_untaken;
  if (best != replayed) {
    const size_t end = std::min(taken.size(), replayed + ahead);
    for (size_t j = best + 1; j < end; ++j)
      if (!taken[j] && bytes[j] <= kOutOfOrderBytes && bytes[j] > bytes[best]) best = j;
  }
  taken[best] = 1;
  if (++n_taken == taken.size()) all_taken.store(true, std::memory_order_relaxed);
  *in_order = best == lowest_untaken;
  return best;
}

void Ingestor::Impl::walk_worker(ThreadedWalk& walk) {
  Impl w(kb, topo, opts, this);
  OpBatch ops = walk.fresh_batch();
  w.record = &ops;
  for (;;) {
    bool in_order = false;
    const size_t i = walk.pick(&in_order);
    if (i == SIZE_MAX) return;
    w.read_walk_file(walk, i, in_order, &ops);
  }
}

// One file of the walk, read by this worker Impl into the file's slot.
void Ingestor::Impl::read_walk_file(ThreadedWalk& walk, size_t i, bool in_order, OpBatch* ops) {
  FileSlot& slot = walk.slots[i];
  auto push = [&](bool last) {
    OpBatch next_batch = walk.fresh_batch();
    std::unique_lock lk(slot.mu);
    if (!last && in_order)
      slot.cv.wait(lk, [&] { return slot.batches.size() < ThreadedWalk::kMaxQueued; });
    if (!ops->ops.empty()) slot.batches.push_back(std::move(*ops));
    *ops = std::move(next_batch);
    slot.done = last;
    slot.cv.notify_all();
  };
  bool begun = false;
  hand_over = [&] { push(false); };
  // At the walk's end a file's ops go to the replay every kStreamBytes of
  // input, not only at kBatch ops: a mixed-profile file has fewer ops than
  // that, and the replay, given the last file's ops only at its end, went
  // on ~2 ms after the workers (one worker's ops queue up behind the other's
  // file in walk order). Before the end the replay does not wait for them:
  // batches handed over early only wake it more often (~370 more context
  // switches in a mixed run).
  size_t since = 0;
  auto stream = [&](size_t bytes) {
    since += bytes;
    if (since < ThreadedWalk::kStreamBytes) return;
    since = 0;
    if (!ops->ops.empty() && walk.all_taken.load(std::memory_order_relaxed)) push(false);
  };
  try {
    read_bundle_file(
        &walk.plan.files[i],
        [&](const BundleLine& bl) {
          if (!begun) begin_chunked_file(*bl.ctx);
          begun = true;
          file_line(bl.raw, bl.line_no, &chunk_rec_line);
          stream(bl.raw.size() + 1);
        },
        [&](const BundleBlock& b) {
          const uint64_t n = file_block(b.text, b.first_line_no);
          stream(b.text.size());
          return n;
        },
        [&](const FileContext*) { return begun && file_mode == FileMode::chunk; }, &fstats);
    flush_chunk();
    end_of_file_stream();
    flush_unrecognised_counts();
  } catch (const std::exception& e) {
    std::lock_guard lk(slot.mu);
    slot.error = walk.dir + ": " + e.what();
  }
  hand_over = nullptr;
  FileCounters c = take_counters();
  {
    std::lock_guard lk(slot.mu);
    slot.counters = std::move(c);
  }
  push(true);
}

// The main Impl's side: each file's ops in walk order, as they come; the
// first worker error, or "".
std::string Ingestor::Impl::replay_in_walk_order(ThreadedWalk& walk) {
  std::string failed;
  std::vector<OpBatch> taken;
  for (size_t i = 0; i < walk.slots.size(); ++i) {
    FileSlot& slot = walk.slots[i];
    const std::string& file = walk.plan.files[i].ctx.file;
    for (bool done = false; !done;) {
      {
        std::unique_lock lk(slot.mu);
        slot.cv.wait(lk, [&] { return slot.done || !slot.batches.empty(); });
        std::swap(taken, slot.batches);
        done = slot.done;
        slot.cv.notify_all();
      }
      for (OpBatch& b : taken) {
        for (const Op& op : b.ops) replay(op, b, file);
        b.clear();
        count_progress(kProgressLines);
      }
      std::lock_guard lk(walk.spare_mu);
      for (OpBatch& b : taken) walk.spare.push_back(std::move(b));
      taken.clear();
    }
    if (!slot.error.empty() && failed.empty()) failed = slot.error;
    merge(slot.counters);
    std::lock_guard lk(walk.window_mu);
    walk.replayed = i + 1;
    walk.window_cv.notify_all();
  }
  return failed;
}

bool Ingestor::read_bundle(const std::string& dir, std::string* error) {
  return read_bundle(BundleListing::of(dir), error);
}

bool Ingestor::read_bundle(BundleListing listing, std::string* error) {
  std::lock_guard lock(impl_->mu);
  Impl& m = *impl_;
  if (!listing.ok) {
    if (error) *error = listing.error;
    m.have_file = false;
    return false;
  }
  if (m.opts.threads > 1) {
    bool declined = false;
    bool ok = m.read_bundle_threads(listing, m.opts.threads, &declined, error);
    m.have_file = false;
    if (!declined) return ok;
  }
  m.merge_listing_notes(listing);
  const FileContext* cur = nullptr;
  std::string cur_file;
  LogRecord rec;
  bool ok = read_planned_bundle(
      listing.dir, &listing.plan,
      [&](const BundleLine& bl) {
        if (bl.ctx != cur || bl.ctx->file != cur_file) {
          cur = bl.ctx;
          cur_file = bl.ctx->file;
          m.begin_chunked_file(*bl.ctx);
        }
        m.file_line(bl.raw, bl.line_no, &rec);
        m.count_progress(1);
      },
      // Once a file is in chunk mode its lines come as blocks, scanned in place.
      [&](const BundleBlock& b) {
        const uint64_t n = m.file_block(b.text, b.first_line_no);
        m.count_progress(n);
        return n;
      },
      [&](const FileContext* ctx) { return ctx == cur && m.file_mode == Impl::FileMode::chunk; },
      &m.fstats, error);
  m.flush_chunk();
  m.end_of_file_stream();
  m.have_file = false;
  return ok;
}

void Ingestor::read_file(const std::string& path, const std::string& bundle_relative,
                         const std::string& host_dir_name) {
  std::lock_guard lock(impl_->mu);
  Impl& m = *impl_;
  m.end_of_file_stream();
  m.have_file = false;
  gzFile gz = gzopen(path.c_str(), "rb");  // reads plain files too
  if (!gz) {
    m.notes.push_back("cannot read " + path + ": " + std::strerror(errno));
    return;
  }
  gzbuffer(gz, 1 << 17);
  FileContext ctx;
  ctx.host_dir = host_dir_name;
  ctx.file = bundle_relative;
  m.begin_chunked_file(ctx);
  std::vector<char> buf(1 << 20);
  std::string carry;        // a line split across reads
  bool discarding = false;  // past max_line_bytes of the current line
  uint64_t line_no = 0;
  LogRecord rec;
  auto handle = [&](std::string_view line) {
    m.file_line(line, ++line_no, &rec);
    m.count_progress(1);
  };
  const size_t max_line = std::max<size_t>(m.opts.max_line_bytes, 64);
  for (;;) {
    int n = gzread(gz, buf.data(), static_cast<unsigned>(buf.size()));
    if (n <= 0) {
      if (n < 0) {
        int errnum = 0;
        const char* msg = gzerror(gz, &errnum);
        m.notes.push_back("read error in " + bundle_relative + " after line " +
                          std::to_string(line_no) + ": " + (msg ? msg : "?") +
                          " (rest of the file skipped)");
      }
      break;
    }
    std::string_view chunk(buf.data(), static_cast<size_t>(n));
    while (!chunk.empty()) {
      size_t nl = chunk.find('\n');
      std::string_view piece = chunk.substr(0, nl);
      if (discarding) {
        if (nl == std::string_view::npos) break;
        discarding = false;
        chunk.remove_prefix(nl + 1);
        continue;
      }
      if (nl == std::string_view::npos) {
        carry.append(piece.substr(0, max_line - std::min(max_line, carry.size())));
        if (carry.size() >= max_line) {
          ++m.stats.truncated_long_lines;
          handle(carry);
          carry.clear();
          discarding = true;
        }
        break;
      }
      if (!carry.empty()) {
        carry.append(piece.substr(0, max_line - std::min(max_line, carry.size())));
        if (carry.size() >= max_line) ++m.stats.truncated_long_lines;
        handle(carry);
        carry.clear();
      } else if (piece.size() > max_line) {
        ++m.stats.truncated_long_lines;
        handle(piece.substr(0, max_line));
      } else {
        handle(piece);
      }
      chunk.remove_prefix(nl + 1);
    }
  }
  if (!carry.empty() && !discarding) handle(carry);
  gzclose(gz);
  m.flush_chunk();
  m.end_of_file_stream();
}

void Ingestor::feed_envelope(std::string_view json_line) {
  std::lock_guard lock(impl_->mu);
  Impl& m = *impl_;
  LogRecord rec;
  int64_t now = std::chrono::duration_cast<std::chrono::microseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  ++m.envelopes;
  if (!parse_envelope(json_line, m.topo, now, &m.fstats, &m.envelope_storage, &rec)) return;
  if (rec.line_no == 0) rec.line_no = m.envelopes;
  m.process(rec);
}

void Ingestor::feed_line(const std::string& host, Transport transport, std::string_view line,
                         std::string_view evidence_file, uint64_t line_no) {
  std::lock_guard lock(impl_->mu);
  Impl& m = *impl_;
  if (!m.have_file || m.cur_host != host || m.cur_file != evidence_file) {
    if (m.have_file && m.cur_file != evidence_file) m.end_of_file_stream();
    m.cur_host = host;
    m.cur_file.assign(evidence_file);
    m.have_file = true;
    FileContext ctx;
    ctx.host_dir = host;
    ctx.file = m.cur_file;
    m.parser.begin_file(ctx);
  }
  LogRecord rec;
  if (!m.parser.parse(line, line_no, &rec)) return;
  // The caller knows host and transport; they win over what the line claims.
  if (auto h = m.topo.resolve_host(host)) {
    rec.host = *h;
    rec.host_known = true;
  } else {
    rec.host = host;
    rec.host_known = false;
  }
  rec.transport = transport;
  rec.file = m.cur_file;
  rec.line_no = line_no;
  m.process(rec);
}

void Ingestor::feed_record(const LogRecord& rec) {
  std::lock_guard lock(impl_->mu);
  impl_->process(rec);
}

void Ingestor::finish() {
  std::lock_guard lock(impl_->mu);
  Impl& m = *impl_;
  m.end_of_file_stream();
  m.have_file = false;
  m.storms.flush(m.emit_fn);
}

void Ingestor::set_progress(std::function<void(const OpenStorms&)> fn) {
  std::lock_guard lock(impl_->mu);
  impl_->progress = std::move(fn);
}

void Ingestor::with_open_storms(const std::function<void(const OpenStorms&)>& fn) const {
  std::lock_guard lock(impl_->mu);
  fn(impl_->storms);
}

void Ingestor::advance_time(TimeUs now) {
  std::lock_guard lock(impl_->mu);
  impl_->storms.advance(now, impl_->emit_fn);
}

const IngestStats& Ingestor::stats() const {
  std::lock_guard lock(impl_->mu);
  impl_->refresh_view();
  return impl_->view;
}

IngestStats Ingestor::stats_snapshot() const {
  std::lock_guard lock(impl_->mu);
  impl_->refresh_view();
  return impl_->view;
}

}  // namespace reflex
