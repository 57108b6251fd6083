// Ingestor::Impl: the shared state (ingest_core.h) and the stages a line
// goes through, each a class of its own, wired together here. Lines flow:
// a file mode (ingest_files.cpp) -> a block walk (block_scan.h) or a message
// batch (message_batch.h) -> LineProcessor::process (line_match.h, with the
// line memo) -> multi-line joins (multiline.h) -> EventEmitter (emit_event.h)
// -> storms -> sink. A --threads walk (threaded_walk.cpp) records the
// emitter's inputs instead (op_record.h) and replays them (replay.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

#include "block_scan.h"
#include "emit_event.h"
#include "ingest_core.h"
#include "line_match.h"
#include "message_batch.h"
#include "multiline.h"
#include "op_record.h"
#include "reflex/ingest.h"
#include "reflex/log_format.h"
#include "replay.h"
#include "threaded_walk.h"

namespace reflex {

struct Ingestor::Impl : ingest::IngestCore {
  // ---- setup and counters (ingest_impl.cpp) ----
  // `origin`: a --threads worker's (its matcher shares origin's patterns).
  Impl(const KnowledgeBase& k, const Topology& t, IngestOptions o, const Impl* origin = nullptr)
      : IngestCore(k, t, o, origin ? &origin->matcher : nullptr) {}
  void refresh_view() const;
  mutable IngestStats view;
  mutable std::mutex mu;

  // ---- the stages, each given what it needs of the core and of the others ----
  ingest::OpRecorder recorder{*this};
  ingest::EventEmitter events{*this, recorder};
  ingest::MultilineJoins joins{*this, events};
  ingest::LineProcessor lines{*this, joins, events, recorder};
  ingest::MessageBatch batch{matcher, lines};
  using FileMode = ingest::FileMode;
  FileMode file_mode = FileMode::probing;
  ingest::BlockReader blocks{*this, lines, file_mode};
  ingest::OpReplay replayer{*this, events};

  // Current file for feed_line (host, evidence file).
  std::string cur_host, cur_file;
  bool have_file = false;
  uint64_t envelopes = 0;
  std::string envelope_storage;
  // set_progress(): called between lines every kProgressLines lines read.
  static constexpr uint64_t kProgressLines = 4096;
  std::function<void(const OpenStorms&)> progress;
  uint64_t since_progress = 0;
  void count_progress(uint64_t lines_read) {
    if (!progress) return;
    since_progress += lines_read;
    if (since_progress < kProgressLines) return;
    since_progress = 0;
    batch.flush_batch();  // the open storms as of the last line read
    progress(storms);
  }

  // ---- reading files and their modes (ingest_files.cpp) ----
  // A file starts in per-line mode; after kProbeLines lines whose message is
  // a slice of the raw line (text formats) it switches to chunk mode. Formats
  // that build the message elsewhere (JSON, CSV, joined CRI lines) stay per
  // line, their messages scanned in batches. In chunk mode lines are scanned
  // by the block (BlockReader).
  static constexpr int kProbeLines = 64;
  static constexpr size_t kChunkBytes = 1 << 20;
  int probed = 0;
  std::string chunk;  // lines copied one by one (file_line), each ending in '\n'
  uint64_t chunk_first_no = 0, chunk_n = 0;  // number of its first line, lines in it
  LogRecord chunk_rec_line;                  // per-line records of a --threads worker

  // One thread's walk of a listed bundle (Ingestor::read_bundle).
  bool read_bundle_one_thread(BundleListing& listing, std::string* error);
  // One plain or gz file (Ingestor::read_file).
  void read_any_file(const std::string& path, const std::string& bundle_relative,
                     const std::string& host_dir_name);
  void begin_chunked_file(const FileContext& ctx);
  // One line of a file, in whatever mode the file is in.
  void file_line(std::string_view raw, uint64_t line_no, LogRecord* rec);
  // A block of whole lines from the bundle reader, scanned in place; returns
  // their number.
  uint64_t file_block(std::string_view text, uint64_t first_line_no);
  void flush_chunk();

  // ---- --threads walks (threaded_walk.cpp) ----
  // false with *declined set: the bundle's files cannot keep n threads busy
  // (nothing was read; the caller walks it with one thread).
  bool read_bundle_threads(BundleListing& listing, unsigned n, bool* declined, std::string* error);
  void walk_worker(ingest::ThreadedWalk& walk);
  void read_walk_file(ingest::ThreadedWalk& walk, size_t i, bool in_order, ingest::OpBatch* ops);
  std::string replay_in_walk_order(ingest::ThreadedWalk& walk);
};

}  // namespace reflex
