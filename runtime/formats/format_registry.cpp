// The one ordered list of line formats, and the first-byte dispatch built from
// it at compile time. The list is a table here rather than self-registration
// from each fmt_*.cpp: the order of attempts decides what a line parses as, so
// it has to be written down in one place, and a static library drops objects
// that only register themselves.
#include "format_registry.h"

#include <array>
#include <cstddef>

namespace reflex::formats {

namespace {

// Every recogniser, in the order they are tried. Only the relative order of
// recognisers that share a first-byte class matters; it is chosen so that
// the stricter framing wins:
// - '[': a dmesg time before a fabric-manager date, the rank prefix and a
//   bracketed ISO time ("[12.5] loss" is none of them).
// - '<': RFC 5424 ("<PRI>1 ") before dmesg -r and RFC 3164 with a priority.
// - digits: an ISO time first, then nvidia-smi rows ("2024/..."), SEL lines,
//   talosctl dmesg ("10.1.0.18: kern: ..."), and last an epoch counter, whose
//   10-digit number would also start the others.
// - ' ': a SEL line ("   1 | ...") before Megatron's indented ISO time.
// - letters: a BSD syslog time ("Mar  5 ...") before dmesg -x facilities,
//   the nvidia-smi header, glog, capture headers ("Timestamp : ...", a
//   bug report's "Date:"), a bare "kernel: " tag and talosctl dmesg.
// - any byte: a syslog line quoted inside other text, when nothing else matched.
constexpr Recogniser kRegistry[] = {
    {"dmesg_stamp", kBracket, &dmesg_stamp},
    {"dmesg_reltime", kBracket, &dmesg_reltime},
    {"dmesg_human", kBracket, &dmesg_human},
    {"dmesg_ctime", kBracket, &dmesg_ctime},
    {"tool_fabric_manager", kBracket, &tool_fabric_manager},
    {"app_rank", kBracket, &app_rank},
    {"iso_bracketed", kBracket, &iso_bracketed},
    {"syslog_rfc5424", kAngle, &syslog_rfc5424},
    {"dmesg_priority", kAngle, &dmesg_priority},
    {"syslog_priority", kAngle, &syslog_priority},
    {"journal_json_fast", kBrace, &journal_json_fast},
    {"journal_json_full", kBrace, &journal_json_full},
    {"iso_stamped", kDigit, &iso_stamped},
    {"tool_nvsmi_csv_row", kDigit, &tool_nvsmi_csv_row},
    {"tool_ipmi_sel", kDigit | kSpace, &tool_ipmi_sel},
    {"iso_indented", kSpace, &iso_indented},
    {"syslog_bsd", kAlpha, &syslog_bsd},
    {"dmesg_facility", kAlpha, &dmesg_facility},
    {"tool_nvsmi_csv_header", kAlpha, &tool_nvsmi_csv_header},
    {"app_glog", kAlpha, &app_glog},
    {"tool_header_time", kAlpha, &tool_header_time},
    {"syslog_kernel_tag", kAlpha, &syslog_kernel_tag},
    {"talos_dmesg", kDigit | kAlpha, &talos_dmesg},
    {"tool_epoch_counter", kDigit, &tool_epoch_counter},
    {"syslog_embedded", kAnyByte, &syslog_embedded},
};
constexpr size_t kCount = sizeof(kRegistry) / sizeof(kRegistry[0]);
constexpr int kClasses = 7;  // bits of FirstByte

constexpr int class_of(unsigned char c) {
  if (c == '[') return 0;
  if (c == '<') return 1;
  if (c == '{') return 2;
  if (c >= '0' && c <= '9') return 3;
  if (c == ' ') return 4;
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return 5;
  return 6;
}

// Per byte value, the null-terminated list of its class.
struct Dispatch {
  std::array<std::array<Recognise, kCount + 1>, kClasses> lists{};
  std::array<unsigned char, 256> class_of_byte{};
};

constexpr Dispatch make_dispatch() {
  Dispatch d;
  for (int cls = 0; cls < kClasses; ++cls) {
    size_t n = 0;
    for (const Recogniser& r : kRegistry)
      if (r.first_bytes & (1 << cls)) d.lists[cls][n++] = r.fn;
    d.lists[cls][n] = nullptr;
  }
  for (int b = 0; b < 256; ++b) d.class_of_byte[b] = static_cast<unsigned char>(class_of(b));
  return d;
}

constexpr Dispatch kDispatch = make_dispatch();

static_assert(class_of('[') == 0 && (kBracket >> 0) == 1 && (kOther >> 6) == 1,
              "class numbers follow the FirstByte bits");

}  // namespace

const Recognise* recognisers_for(char first_byte) {
  return kDispatch.lists[kDispatch.class_of_byte[static_cast<unsigned char>(first_byte)]].data();
}

const Recogniser* registry_begin() {
  return kRegistry;
}
const Recogniser* registry_end() {
  return kRegistry + kCount;
}

}  // namespace reflex::formats
