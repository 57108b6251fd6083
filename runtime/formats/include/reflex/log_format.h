// Log *formats*: timestamps, host fields, transports and prefixes (interfaces.md §3-4).
// Nothing here knows what a message means; that is the knowledge base's job.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reflex/log_record.h"
#include "reflex/topology.h"

namespace reflex {

struct FormatOptions {
  bool strict_transport = false;    // syslog text tagged "kernel:" is not kernel
  size_t max_line_bytes = 1 << 20;  // longer lines are cut here and counted
};

struct FormatStats {
  uint64_t lines = 0, bytes = 0;
  uint64_t invalid_utf8 = 0, nul_bytes = 0, truncated_long_lines = 0;
  uint64_t skipped_invalid_json = 0, skipped_no_msg = 0;
  uint64_t no_timestamp = 0, implausible_time = 0, unknown_hosts = 0;
  uint64_t skipped_files = 0;       // additive: unreadable/binary files under hosts/
  uint64_t cri_partial_joined = 0;  // additive: CRI "P" lines joined into the next line
  uint64_t prompt_lines = 0;        // pasted shell prompts ("user@host:~$ dmesg -T"), skipped
  uint64_t embedded_lines = 0;      // syslog lines quoted inside other text, parsed as such
  std::vector<std::string> notes;   // each said once
};

// Who may speak through a file (docs/formats.md, "Who speaks for what").
enum class FileSource : uint8_t {
  by_name,         // its name says: a kernel capture, a system log, else job output
  kernel_capture,  // every line is a kernel line (dmesg output, kern.log, a console dump)
  system_log,      // lines carry their own transport (syslog, a journal export)
  job_output,      // no line is a kernel line; a kernel-shaped one is refused
  caller,          // the caller sets host and transport (envelopes, feed_line)
};

// Per-file context of a bundle: the host directory's boot_time and timezone,
// the year for year-less formats (from the bundle's own dated lines).
struct FileContext {
  std::string host_dir;                 // directory name under hosts/
  std::string file;                     // bundle-relative path, for evidence
  std::optional<int64_t> boot_time_us;  // hosts/<host>/boot_time
  int tz_offset_s = 0;      // hosts/<host>/timezone (fixed offset at the bundle's dates)
  std::optional<int> year;  // inferred year for RFC 3164 / dmesg -T without year
  // Additive: `year` was given (--year) and beats the file's own dated lines.
  bool year_fixed = false;
  // Additive: said once (a note) when a year-less line first takes `year`:
  // where that year came from (the bundle's first dated line, the file's
  // modification time, --year). Empty: nothing to say.
  std::string year_note;
  // Additive: wall time of the file's first timed line (set by the bundle
  // walker); untimed lines before it (NCCL init chatter) inherit it.
  std::optional<int64_t> lead_time_us;
  // Additive: who may speak through the file (declared, else by its name),
  // and whether it is a central collector whose lines may name other hosts
  // (a syslog server's file); otherwise a line naming another host is refused.
  FileSource source = FileSource::by_name;
  bool collector = false;
  // Additive: host_dir is the file's host even when the topology does not
  // know it (an agent reading its own host's logs).
  bool own_host = false;
};

// Parses one line of a file: detects the format per line, strips the prefix,
// sets host/time/transport. Keeps the previous line's time for lines without
// one. Never throws; garbage lines come out as app lines with inherited time.
class LineParser {
 public:
  LineParser(const Topology& topo, FormatOptions opts, FormatStats* stats);
  ~LineParser();
  void begin_file(FileContext ctx);
  // `raw` must stay valid while `out` is used. Returns false when the line is
  // to be skipped (empty line, a CRI "P" part held for the next line, an
  // nvidia-smi CSV header); `out` is filled otherwise. Formats, time and host
  // rules: docs/formats.md.
  bool parse(std::string_view raw, uint64_t line_no, LogRecord* out);
  // Additive (chunk mode, which parses only the lines a scan hits): whether
  // parsing `line` gives the same record whether or not `prev`, the line
  // before it, was parsed first, so the walk back to the previous timed
  // line can be left out. Conservative: true for two syslog lines with BSD
  // times of the same month (the line has its own time, the year rollover
  // sees the same month) where `prev` cannot be a pasted prompt and no
  // bug-report section or CRI join is open.
  bool parses_alone(std::string_view prev, std::string_view line) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Parses one streaming envelope (interfaces.md §4). `arrival_us` is used when `ts` is
// absent. The record's string_views point into *storage. Returns false (and
// counts it in stats) for invalid JSON or a missing msg.
bool parse_envelope(std::string_view json_line, const Topology& topo, int64_t arrival_us,
                    FormatStats* stats, std::string* storage, LogRecord* out);

// Walks a bundle (interfaces.md §3): hosts/<host>/<file> in sorted order, .gz files
// decompressed, rotated files (kern.log.1) included; reads boot_time and
// timezone; infers the year for year-less formats. Calls `fn` for each line.
// Each file gets its own FileContext (distinct address for the whole walk):
// call LineParser::begin_file when `ctx` changes. Returns false only for an
// unusable bundle (missing, not a directory, no hosts/); unreadable or binary
// files are counted in stats->skipped_files and noted.
struct BundleLine {
  const FileContext* ctx;
  std::string_view raw;
  uint64_t line_no;
};
bool for_each_bundle_line(const std::string& bundle_dir,
                          const std::function<void(const BundleLine&)>& fn, FormatStats* stats,
                          std::string* error);

// Additive (perf): while want_blocks(ctx) is true for the current file,
// read_bundle_file and read_planned_bundle (below) give lines as blocks of
// whole lines straight from the read buffer (no per-line call, no copy);
// `text` holds whole lines, each ending in '\n', the first numbered
// `first_line_no`. A line that spans reads, the last line without '\n' and
// every line while want_blocks is false go to `fn`. The block's consumer
// (block_fn) returns how many lines it holds: the consumer walks the bytes
// anyway, so they are counted once, not again by the reader.
struct BundleBlock {
  const FileContext* ctx;
  std::string_view text;
  uint64_t first_line_no;
};
// Additive (perf): the number of '\n' bytes in `text` (SIMD where available).
uint64_t count_newlines(std::string_view text);

// Additive (--threads): the walk in two steps, so files can be read in
// parallel and merged in this order. plan_bundle lists the files in walk
// order (listing notes go to *stats); read_bundle_file reads one of them
// (its lead time, notes and counters into *stats), exactly as the walk
// would. An entry with an empty path only carries its host's notes.
struct BundleFile {
  FileContext ctx;
  std::string path;
  std::vector<std::string> notes_before;  // said before the file's own
};
struct BundlePlan {
  std::deque<BundleFile> files;  // stable addresses
};
bool plan_bundle(const std::string& bundle_dir, BundlePlan* plan, FormatStats* stats,
                 std::string* error);
void read_bundle_file(BundleFile* file, const std::function<void(const BundleLine&)>& fn,
                      const std::function<uint64_t(const BundleBlock&)>& block_fn,
                      const std::function<bool(const FileContext*)>& want_blocks,
                      FormatStats* stats);
// Every file of a plan in walk order: for_each_bundle_line after its
// plan_bundle, with blocks (errors name bundle_dir).
bool read_planned_bundle(const std::string& bundle_dir, BundlePlan* plan,
                         const std::function<void(const BundleLine&)>& fn,
                         const std::function<uint64_t(const BundleBlock&)>& block_fn,
                         const std::function<bool(const FileContext*)>& want_blocks,
                         FormatStats* stats, std::string* error);
// Appends n to stats->notes unless it is there already (each note said once).
void add_note(FormatStats* stats, std::string n);

// Additive (inputs given as plain files): the host a file's own lines name,
// read from its first lines (gzip too) — the syslog/journal host field, a
// quoted syslog line's, the `uname:` line of an nvidia-bug-report.log —
// never a pod name (NCCL, CRI). The most frequent one when several are named;
// nullopt when none is (or the file cannot be read). *how says which kind of
// line named it, *hosts how many distinct hosts the lines name.
struct NamedHost {
  std::string host;
  std::string how;  // "the lines' host field", "the bug report's uname line"
  size_t hosts = 0;
};
std::optional<NamedHost> host_named_in(const std::string& path, const std::string& name);

}  // namespace reflex
