// Shared by the format test files: the row of the one table every line
// format is checked against (Formats.Parses in line_parser_test.cpp), the test
// topology, and the family tables each *_rows_test.cpp file contributes.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "reflex/event.h"
#include "reflex/log_format.h"

namespace reflex::format_test {

// node-0017, node-0018.cluster.local (10.1.0.18), bd-cpu18, ny2g1r12hh2.
const Topology& topo();

struct Row {
  const char* name;
  std::vector<std::string> before;  // earlier lines of the same file
  std::string line;
  // context
  std::string dir = "node-0017";
  std::optional<std::string> boot_time;  // RFC 3339
  int tz = 0;
  std::optional<int> year;
  bool strict = false;
  // expectations
  std::string host = "node-0017";
  bool host_known = true;
  std::string wall;  // RFC 3339, "" = no wall time
  std::optional<double> mono;
  Transport transport = kTransportApp;
  std::string msg;
  int rank = -1;
  bool inherited = false;
};

void PrintTo(const Row& r, std::ostream* os);
Row row(const char* name, std::string line);

// Real message texts several rows frame differently.
inline const std::string kXid149 =
    "NVRM: Xid (PCI:0009:01:00): 149, NETIR_LINK_EVT  Fatal   XC0 i0 Link 01 (0x021425c6 "
    "0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)";
inline const std::string kSegv =
    "pt_main_thread[2536443]: segfault at 7f797fe00000 ip 00007f7c7ac69996 sp 00007f7c12fd7c30 "
    "error 4 in libnccl.so.2[7f7c7ac00000+d3d3000]";
inline const std::string kAer =
    "pcieport 0000:00:01.0: AER: Uncorrected (Fatal) error received: id=0008";

// The family tables, in the order rows() joins them.
std::vector<Row> dmesg_rows();          // dmesg_rows_test.cpp
std::vector<Row> stamp_rows();          // dmesg_rows_test.cpp
std::vector<Row> relative_time_rows();  // dmesg_rows_test.cpp
std::vector<Row> syslog_rows();         // syslog_rows_test.cpp
std::vector<Row> journal_rows();        // syslog_rows_test.cpp
std::vector<Row> quoted_rows();         // syslog_rows_test.cpp
std::vector<Row> app_rows();            // app_rows_test.cpp
std::vector<Row> sidecar_rows();        // app_rows_test.cpp
std::vector<Row> context_rows();        // app_rows_test.cpp

}  // namespace reflex::format_test
