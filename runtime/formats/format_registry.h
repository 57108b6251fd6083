// The registry of line formats: which recognisers LineParser tries on a line,
// and in which order. Each format family lives in its own fmt_*.cpp file and
// declares its recognisers below; format_registry.cpp lists them all in one
// fixed order. A line only meets the recognisers registered for the class of
// its first byte, so the common line costs a table lookup and one or two calls
// through a function pointer.
#pragma once

#include <cstdint>
#include <string_view>

#include "reflex/log_record.h"

namespace reflex {

class LineParserImpl;

namespace formats {

// What a recogniser made of a line.
enum class Match : uint8_t {
  kNo,    // not this format: the next recogniser is tried; *msg is left alone
  kYes,   // this format: time, host, transport and *msg are set
  kSkip,  // this format, but the line holds no record (a CRI "P" part, a CSV header)
};

// The class of a line's first byte. A recogniser names the classes it can
// start with; a line is never shown to the others.
enum FirstByte : uint8_t {
  kBracket = 1 << 0,  // '['
  kAngle = 1 << 1,    // '<'
  kBrace = 1 << 2,    // '{'
  kDigit = 1 << 3,    // '0'..'9'
  kSpace = 1 << 4,    // ' '
  kAlpha = 1 << 5,    // 'a'..'z', 'A'..'Z'
  kOther = 1 << 6,    // anything else
  kAnyByte = 0x7f,
};

// `raw` is the line (cut, without its line end, not blank); `out` holds the
// record's defaults (the directory's host, app transport, no time).
using RecogniseFn = Match(LineParserImpl& p, std::string_view raw, LogRecord* out,
                          std::string_view* msg);
using Recognise = RecogniseFn*;

struct Recogniser {
  const char* name;     // for the order test and for readers
  uint8_t first_bytes;  // FirstByte classes it is tried on
  Recognise fn;
};

// The recognisers for a line starting with `first_byte`, in registry order,
// ending with nullptr.
const Recognise* recognisers_for(char first_byte);
// The whole registry in its order (for tests and documentation).
const Recogniser* registry_begin();
const Recogniser* registry_end();

// The recognisers, by the file that holds them. Declared with the function
// type so that every one has exactly the signature the registry calls.

// fmt_dmesg.cpp: the kernel ring buffer as dmesg prints it.
RecogniseFn dmesg_stamp;     // "[  12.345678] msg" (and a program's epoch stamp)
RecogniseFn dmesg_reltime;   // "[  +0.000844] msg" (dmesg -H, --reltime)
RecogniseFn dmesg_human;     // "[May19 19:57] msg" (dmesg -H)
RecogniseFn dmesg_ctime;     // "[Tue Mar  5 10:11:12 2024] msg" (dmesg -T)
RecogniseFn dmesg_priority;  // "<6>[  12.345678] msg" (dmesg -r)
RecogniseFn dmesg_facility;  // "kern  :warn  : <time> msg" (dmesg -x)
// fmt_talos.cpp: talosctl dmesg.
RecogniseFn talos_dmesg;  // "<node>: kern:  err: [<RFC 3339>]: msg"
// fmt_syslog.cpp: syslog files and lines.
RecogniseFn syslog_rfc5424;     // "<PRI>1 <RFC 3339> host app pid msgid [sd] msg"
RecogniseFn syslog_priority;    // "<PRI>Mar  5 10:11:12 host tag: msg"
RecogniseFn syslog_bsd;         // "Mar  5 10:11:12 host tag: msg" (and OpenSM)
RecogniseFn syslog_kernel_tag;  // "kernel: msg" pasted without time and host
RecogniseFn syslog_embedded;    // a syslog kernel line quoted inside other text
// fmt_journal.cpp: journalctl -o json (and envelopes written to a file).
RecogniseFn journal_json_fast;  // flat objects, no allocation
RecogniseFn journal_json_full;  // anything nlohmann parses
// fmt_iso.cpp: lines that start with an ISO 8601 / RFC 3339 time.
RecogniseFn iso_stamped;    // dmesg --time-format iso, CRI, RFC 3339 syslog, app lines
RecogniseFn iso_bracketed;  // "[2026-03-05 10:11:12] msg"
RecogniseFn iso_indented;   // " [2024-08-01 09:44:55] msg" (Megatron-LM)
// fmt_app.cpp: application prefixes that start a line.
RecogniseFn app_rank;  // "[rank3]:..." (the prefix itself is stripped later)
RecogniseFn app_glog;  // "E0603 17:48:01.005271 12345 file.cc:632] msg"
// fmt_tools.cpp: files that collectors write from tools.
RecogniseFn tool_fabric_manager;    // "[Mar 05 2024 10:11:12] msg"
RecogniseFn tool_nvsmi_csv_row;     // "2024/03/05 10:11:12.123, 0, ..."
RecogniseFn tool_nvsmi_csv_header;  // "timestamp, index, name, ..."
RecogniseFn tool_ipmi_sel;          // "   1 | 03/05/2024 | 10:11:12 | ..."
RecogniseFn tool_epoch_counter;     // "1709633472 /sys/class/infiniband/..."
// fmt_headers.cpp: header lines that date a capture or name its host.
RecogniseFn
    tool_header_time;  // "Timestamp : Fri Dec 09 02:27:00 2016", bug report "Date:"/"uname:"

}  // namespace formats
}  // namespace reflex
