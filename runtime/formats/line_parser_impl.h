// Private state of LineParser (runtime/formats only).
#pragma once

#include <nlohmann/json_fwd.hpp>
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

 private:
  void note_once(const std::string& n);
  void host_from_field(std::string_view field, LogRecord* out);
  bool talos_line(std::string_view raw, LogRecord* out, std::string_view* msg);
  int year_for(int month);
  bool known_host_token(std::string_view tok);
  void set_wall(int64_t us, LogRecord* out);
  void set_civil(const formats::Civil& c, bool zone_less, LogRecord* out);
  void set_mono(double mono, LogRecord* out);
  void syslog_body(std::string_view rest, LogRecord* out, std::string_view* msg, bool kern_facility,
                   bool have_facility);
  bool rfc5424(std::string_view s, int pri, LogRecord* out, std::string_view* msg);
  bool journal_fast(std::string_view line, LogRecord* out, std::string_view* msg);
  bool journal_json(std::string_view line, LogRecord* out, std::string_view* msg);
  bool envelope_in_file(const nlohmann::json& j, LogRecord* out, std::string_view* msg);
  void app_prefixes(std::string_view* msg, LogRecord* out);
  bool csv_row(std::string_view s, LogRecord* out, std::string_view* msg);
  bool csv_header(std::string_view s);
  bool sel_line(std::string_view s, LogRecord* out, std::string_view* msg);
  bool embedded_syslog(std::string_view raw, LogRecord* out, std::string_view* msg);
  // parse(), by the line's first byte.
  bool begin_line(std::string_view* raw, uint64_t line_no, LogRecord* out);
  bool skip_non_log(std::string_view raw);
  bool bracket_line(std::string_view raw, LogRecord* out, std::string_view* msg);
  bool indented_bracket_iso(std::string_view raw, LogRecord* out, std::string_view* msg);
  bool priority_line(std::string_view raw, LogRecord* out, std::string_view* msg);
  bool digit_line(std::string_view raw, LogRecord* out, std::string_view* msg, bool* skip);
  bool alpha_line(std::string_view raw, LogRecord* out, std::string_view* msg, bool* skip);
  void settle_time(LogRecord* out);

 public:
  // Year of the last line of the current file whose format carried one (0: none yet).
  int dated_year() const { return file_year; }

 private:
  const Topology& topo;
  FormatOptions opts;
  FormatStats own_stats;
  FormatStats* stats;
  std::set<std::string> noted;

  FileContext ctx;
  std::string dir_host;
  bool dir_known = false;

  // Previous timed line of the file (lines without a time inherit it).
  bool have_time = false;
  EventTime last_time;
  Transport last_transport = kTransportApp;
  // The file is a kernel capture by name (dmesg*, kern.log*, pstore, console),
  // or a pasted prompt's command read the ring buffer (`dmesg -T | grep xid`).
  bool file_kernel_capture = false, capture_cmd_kernel = false;
  // nvidia-bug-report.log: the next non-empty line is a section header.
  bool bug_report = false, section_header_pending = false;

  // Year for year-less formats: the file's last dated line, else ctx.year.
  int file_year = 0;
  int rollover_month = 0;
  int year_bump = 0;

  // Per-file format state.
  std::vector<std::string> csv_keys;  // per column of the header: "; name="
  std::string csv_msg, json_msg, json_host;
  std::string cri_partial, cri_joined;
  bool cri_pending = false;
  EventTime cri_time;

  // Host field -> resolved host, for consecutive lines of one host.
  std::string field_cache_key, field_cache_host;
  bool field_cache_valid = false, field_cache_known = false;
  bool noted_no_boot = false, noted_no_year = false;
  std::string probe_key;
  bool probe_valid = false, probe_known = false;
};

}  // namespace reflex
