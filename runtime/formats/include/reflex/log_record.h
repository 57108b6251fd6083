// One log line after its *format* is parsed (timestamp, host, transport,
// message) and before its *meaning* is matched against the knowledge base.
// Format parsing knows nothing about Xids or NCCL; see docs/language.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "reflex/event.h"

namespace reflex {

// Why a line's claim is refused (docs/formats.md, "Who speaks for what"):
// its shape says kernel but its file is not a kernel capture, or it names a
// host other than the one whose file holds it. A refused line is never
// evidence; it is counted and shown.
enum class Refusal : uint8_t { none, kernel_claim, foreign_host };

struct LogRecord {
  std::string host;             // resolved host name, or the raw name when unknown
  bool host_known = true;       // false: not in the topology (kept, flagged)
  EventTime time;               // wall and/or mono, and the clock it came from
  bool time_inherited = false;  // the line had no time; it took the previous line's
  // The time is before 2000, more than a year past the bundle's year, or the
  // year was unknown; kept as parsed, counted in stats.
  bool time_implausible = false;
  Transport transport = kTransportApp;
  std::string_view msg;   // the message after the format's prefix (valid until the next line)
  std::string_view raw;   // the whole raw line
  std::string_view file;  // bundle-relative path, e.g. "hosts/node-0017/kern.log"
  uint64_t line_no = 0;   // 1-based line number in that (decompressed) file
  int rank_hint = -1;     // "[rank3]:" / "[3]" prefixes of NCCL/PyTorch lines, -1 if none
  Refusal refusal = Refusal::none;
};

}  // namespace reflex
