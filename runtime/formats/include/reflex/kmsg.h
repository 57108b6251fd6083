// The /dev/kmsg record format (the kernel's Documentation/ABI/testing/dev-kmsg):
//   "PRI,SEQ,TS_USEC,FLAGS[,more fields];MESSAGE\n"
// followed by continuation lines " KEY=VALUE\n" (the record's dictionary:
// SUBSYSTEM=, DEVICE=). The message has its unprintable bytes escaped as \xNN.
// A format only: what a message means is the knowledge base's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace reflex {

struct KmsgRecord {
  int priority = 0;      // syslog PRI: facility << 3 | level
  uint64_t seq = 0;      // 64-bit, increments by one per record since boot
  uint64_t ts_usec = 0;  // monotonic time since boot
  char flags = '-';      // '-', 'c' (a continued line begins), '+' (it continues)
  std::string message;   // \xNN decoded; may hold '\n' (a multi-line message)
  std::vector<std::pair<std::string, std::string>> dict;
  // Facility 0 is the kernel's own: a process writing to /dev/kmsg gets
  // another (LOG_USER by default), so the kernel's claim cannot be forged there.
  bool from_kernel() const { return (priority >> 3) == 0; }
};

// One record: its first line, then any continuation lines. False (and *err)
// when the prefix is not the format's.
bool parse_kmsg_record(std::string_view text, KmsgRecord* out, std::string* err);

// The record's message lines as `dmesg -r` prints them ("<PRI>[SECONDS.USEC] text"),
// the form the line parser reads (priority -> transport, the bracket time ->
// wall time through the boot time).
std::vector<std::string> kmsg_dmesg_lines(const KmsgRecord& r);

}  // namespace reflex
