// Private state of LineParser (runtime/formats only): the per-file context,
// the previous line's time, and the setters every format uses to place a
// record on a host and a clock. The formats themselves are in fmt_*.cpp,
// tried in the order of format_registry.cpp.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "civil_time.h"
#include "reflex/log_format.h"

namespace reflex {

class LineParserImpl {
 public:
  LineParserImpl(const Topology& topo, FormatOptions opts, FormatStats* stats);
  void begin_file(FileContext ctx);
  bool parse(std::string_view raw, uint64_t line_no, LogRecord* out);
  bool parses_alone(std::string_view prev, std::string_view line) const;
  // Year of the last line of the current file whose format carried one (0: none yet).
  int dated_year() const { return file_year; }

  // ---- for the formats (fmt_*.cpp) ----
  const FormatOptions& options() const { return opts; }
  const FileContext& file() const { return ctx; }
  FormatStats& counters() { return *stats; }
  // The file is an nvidia-bug-report.log (its header names the date and host).
  bool in_bug_report() const { return bug_report; }
  // The previous timed line's time in this file, nullptr before the first.
  const EventTime* previous_time() const { return have_time ? &last_time : nullptr; }
  // The host named by a syslog/journal field (topology, else the directory).
  void host_from_field(std::string_view field, LogRecord* out);
  // Whether a token names a topology host.
  bool known_host_token(std::string_view tok);
  // A civil time; a year-less one takes the file's year; zone-less ones are
  // local to the host's timezone when `zone_less`.
  void set_civil(const formats::Civil& c, bool zone_less, LogRecord* out);
  // Seconds since boot; on the wall clock when the host has a boot_time.
  void set_mono(double mono, LogRecord* out);
  // A wall time whose year also dates the file's later year-less lines.
  void set_wall_dated(int64_t us, LogRecord* out);
  // The same, and the December -> January rollover count starts again.
  void set_wall_restarting_year(int64_t us, LogRecord* out);

  // Per-file state the formats keep between lines.
  struct CsvState {                 // nvidia-smi --format=csv
    std::vector<std::string> keys;  // per column of the header: "; name="
    std::string msg;                // the rewritten row
  } csv;
  struct CriState {  // Kubernetes CRI "P" parts waiting for their "F" line
    std::string partial, joined;
    bool pending = false;
    EventTime time;
  } cri;
  std::string json_msg, json_host;  // a journal entry's unescaped fields

 private:
  void note_once(const std::string& n);
  int year_for(int month);
  bool begin_line(std::string_view* raw, uint64_t line_no, LogRecord* out);
  bool skip_non_log(std::string_view raw);
  void settle_time(LogRecord* out);

  const Topology& topo;
  FormatOptions opts;
  FormatStats own_stats;
  FormatStats* stats;
  std::set<std::string> noted;

  FileContext ctx;
  std::string dir_host;
  bool dir_known = false;
  // The directory names the file's host (known, or an agent's own): a line
  // naming another known host is refused.
  bool dir_speaks = false;

  // Previous timed line of the file (lines without a time inherit it).
  bool have_time = false;
  EventTime last_time;
  Transport last_transport = kTransportApp;
  // Who speaks through the file (declared, else by its name); whether a
  // pasted prompt may declare what follows it (not in job output, where a job
  // could print one), and whether one did (`dmesg -T | grep xid`).
  FileSource source = FileSource::job_output;
  bool prompts_declare = false, capture_cmd_kernel = false;
  // nvidia-bug-report.log: the next non-empty line is a section header.
  bool bug_report = false, section_header_pending = false;

  // Year for year-less formats: the file's last dated line, else ctx.year.
  int file_year = 0;
  int rollover_month = 0;
  int year_bump = 0;

  // Host field -> resolved host, for consecutive lines of one host.
  std::string field_cache_key, field_cache_host;
  bool field_cache_valid = false, field_cache_known = false;
  bool noted_no_boot = false, noted_no_year = false, noted_year_source = false;
  std::string probe_key;
  bool probe_valid = false, probe_known = false;
};

}  // namespace reflex
