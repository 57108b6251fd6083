// How a file's lines reach process(): the one-thread walk of a bundle, a
// plain or gz file read by path, and the modes a file is read in (probing,
// per line, chunk, message batches).
//
// Hot path (a line that matches nothing): in chunk mode its bytes go through
// one Hyperscan block scan and one newline count, nothing else - it is never
// split out, parsed or matched; per line one format parse and one scan of
// the message. No heap allocation either way (tests/ingest checks both with
// a counting allocator). Lines the block scan hits reuse its pattern ids.
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "ingest_impl.h"

namespace reflex {

bool Ingestor::Impl::read_bundle_one_thread(BundleListing& listing, std::string* error) {
  replayer.merge_listing_notes(listing);
  const FileContext* cur = nullptr;
  std::string cur_name;
  LogRecord rec;
  bool read_ok = read_planned_bundle(
      listing.dir, &listing.plan,
      [&](const BundleLine& bl) {
        if (bl.ctx != cur || bl.ctx->file != cur_name) {
          cur = bl.ctx;
          cur_name = bl.ctx->file;
          begin_chunked_file(*bl.ctx);
        }
        file_line(bl.raw, bl.line_no, &rec);
        count_progress(1);
      },
      // Once a file is in chunk mode its lines come as blocks, scanned in place.
      [&](const BundleBlock& b) {
        const uint64_t n = file_block(b.text, b.first_line_no);
        count_progress(n);
        return n;
      },
      [&](const FileContext* ctx) { return ctx == cur && file_mode == FileMode::chunk; }, &fstats,
      error);
  flush_chunk();
  joins.end_of_file_stream();
  have_file = false;
  return read_ok;
}

void Ingestor::Impl::read_any_file(const std::string& path, const std::string& bundle_relative,
                                   const std::string& host_dir_name) {
  joins.end_of_file_stream();
  have_file = false;
  gzFile gz = gzopen(path.c_str(), "rb");  // reads plain files too
  if (!gz) {
    notes.push_back("cannot read " + path + ": " + std::strerror(errno));
    return;
  }
  gzbuffer(gz, 1 << 17);
  FileContext ctx;
  ctx.host_dir = host_dir_name;
  ctx.file = bundle_relative;
  begin_chunked_file(ctx);
  std::vector<char> buf(1 << 20);
  std::string carry;        // a line split across reads
  bool discarding = false;  // past max_line_bytes of the current line
  uint64_t line_no = 0;
  LogRecord rec;
  auto handle = [&](std::string_view line) {
    file_line(line, ++line_no, &rec);
    count_progress(1);
  };
  const size_t max_line = std::max<size_t>(opts.max_line_bytes, 64);
  for (;;) {
    int n = gzread(gz, buf.data(), static_cast<unsigned>(buf.size()));
    if (n <= 0) {
      if (n < 0) {
        int errnum = 0;
        const char* msg = gzerror(gz, &errnum);
        notes.push_back("read error in " + bundle_relative + " after line " +
                        std::to_string(line_no) + ": " + (msg ? msg : "?") +
                        " (rest of the file skipped)");
      }
      break;
    }
    std::string_view rest(buf.data(), static_cast<size_t>(n));
    while (!rest.empty()) {
      size_t nl = rest.find('\n');
      std::string_view piece = rest.substr(0, nl);
      if (discarding) {
        if (nl == std::string_view::npos) break;
        discarding = false;
        rest.remove_prefix(nl + 1);
        continue;
      }
      if (nl == std::string_view::npos) {
        carry.append(piece.substr(0, max_line - std::min(max_line, carry.size())));
        if (carry.size() >= max_line) {
          ++stats.truncated_long_lines;
          handle(carry);
          carry.clear();
          discarding = true;
        }
        break;
      }
      if (!carry.empty()) {
        carry.append(piece.substr(0, max_line - std::min(max_line, carry.size())));
        if (carry.size() >= max_line) ++stats.truncated_long_lines;
        handle(carry);
        carry.clear();
      } else if (piece.size() > max_line) {
        ++stats.truncated_long_lines;
        handle(piece.substr(0, max_line));
      } else {
        handle(piece);
      }
      rest.remove_prefix(nl + 1);
    }
  }
  if (!carry.empty() && !discarding) handle(carry);
  gzclose(gz);
  flush_chunk();
  joins.end_of_file_stream();
}

void Ingestor::Impl::begin_chunked_file(const FileContext& ctx) {
  flush_chunk();
  joins.end_of_file_stream();
  parser.begin_file(ctx);
  file_mode = FileMode::probing;
  probed = 0;
  blocks.begin_file();
}

void Ingestor::Impl::file_line(std::string_view raw, uint64_t line_no, LogRecord* rec) {
  if (file_mode == FileMode::chunk) {
    if (chunk.size() + raw.size() >= UINT32_MAX - 2) flush_chunk();
    if (chunk_n == 0) chunk_first_no = line_no;
    ++chunk_n;
    chunk.append(raw);
    chunk += '\n';
    ++counts.chunk_lines;
    counts.chunk_bytes += raw.size() + 1;
    if (chunk.size() >= kChunkBytes) flush_chunk();
    return;
  }
  if (!parser.parse(raw, line_no, rec)) return;
  if (file_mode == FileMode::probing) {
    if (!ingest::msg_in_raw(*rec)) {
      file_mode = FileMode::per_line;
    } else if (++probed >= kProbeLines && matcher.chunk_mode() && opts.chunk_mode) {
      file_mode = FileMode::chunk;
    }
  } else if (file_mode == FileMode::per_line && matcher.chunk_mode() && opts.chunk_mode &&
             rec->msg.find('\n') == std::string_view::npos) {
    batch.batch_line(*rec);
    return;
  }
  batch.flush_batch();
  lines.process(*rec);
}

uint64_t Ingestor::Impl::file_block(std::string_view text, uint64_t first_line_no) {
  flush_chunk();
  if (text.empty()) return 0;
  if (text.size() >= UINT32_MAX - 2) {  // offsets are 32-bit: split (never with 1 MB reads)
    size_t cut = text.rfind('\n', UINT32_MAX / 2);
    if (cut != std::string_view::npos && cut + 1 < text.size()) {
      const uint64_t n1 = file_block(text.substr(0, cut + 1), first_line_no);
      return n1 + file_block(text.substr(cut + 1), first_line_no + n1);
    }
  }
  const uint64_t n_lines = blocks.scan_block(text, first_line_no);
  counts.chunk_lines += n_lines;
  counts.chunk_bytes += text.size();
  return n_lines;
}

void Ingestor::Impl::flush_chunk() {
  batch.flush_batch();
  if (chunk_n == 0) return;
  blocks.scan_block(chunk, chunk_first_no);
  chunk.clear();
  chunk_n = 0;
}

}  // namespace reflex
