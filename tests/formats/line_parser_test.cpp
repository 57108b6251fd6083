// Per-line format detection (interfaces.md §3). One row per format, with real lines from
// /work/shared/reference/peers.md ("Real raw lines from peer fixtures") and
// domain.md (sections cited per row). Framing around a real message that the
// references do not show verbatim is marked "invented framing".
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "reflex/event.h"
#include "reflex/log_format.h"

namespace reflex {
namespace {

const char* kTopo = R"({"hosts": [
  {"name": "node-0017", "ip": "10.1.0.17"},
  {"name": "node-0018.cluster.local", "ip": "10.1.0.18"},
  {"name": "bd-cpu18"},
  {"name": "ny2g1r12hh2"}]})";

const Topology& topo() {
  static std::unique_ptr<Topology> t = [] {
    TopologyError err;
    auto p = Topology::load_text(kTopo, "test", &err);
    if (!p) ADD_FAILURE() << err.str();
    return p;
  }();
  return *t;
}

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

void PrintTo(const Row& r, std::ostream* os) {
  *os << r.name << ": " << r.line;
}

std::string show(const std::optional<TimeUs>& t) {
  return t ? format_time_us(*t) : "";
}

class Formats : public ::testing::TestWithParam<Row> {};

TEST_P(Formats, Parses) {
  const Row& r = GetParam();
  FormatStats stats;
  FormatOptions opts;
  opts.strict_transport = r.strict;
  LineParser p(topo(), opts, &stats);
  FileContext ctx;
  ctx.host_dir = r.dir;
  ctx.file = "hosts/" + r.dir + "/test.log";
  if (r.boot_time) ctx.boot_time_us = parse_rfc3339(*r.boot_time);
  ctx.tz_offset_s = r.tz;
  ctx.year = r.year;
  p.begin_file(ctx);
  LogRecord rec;
  uint64_t n = 0;
  for (auto& b : r.before) p.parse(b, ++n, &rec);
  ASSERT_TRUE(p.parse(r.line, ++n, &rec));
  EXPECT_EQ(rec.host, r.host);
  EXPECT_EQ(rec.host_known, r.host_known);
  EXPECT_EQ(show(rec.time.wall), r.wall);
  if (r.mono) {
    ASSERT_TRUE(rec.time.mono);
    EXPECT_NEAR(*rec.time.mono, *r.mono, 1e-6);
  }
  EXPECT_STREQ(transport_name(rec.transport), transport_name(r.transport));
  EXPECT_EQ(rec.msg, r.msg);
  EXPECT_EQ(rec.rank_hint, r.rank);
  EXPECT_EQ(rec.time_inherited, r.inherited);
  EXPECT_EQ(rec.raw, r.line);
  EXPECT_EQ(rec.file, ctx.file);
  EXPECT_EQ(rec.line_no, n);
  EXPECT_EQ(rec.time.clock, r.host + (r.transport == kTransportKernel ? "/kernel" : "/app"));
}

Row row(const char* name, std::string line) {
  Row r;
  r.name = name;
  r.line = std::move(line);
  return r;
}

// Real message texts several rows frame differently.
const std::string kXid149 =
    "NVRM: Xid (PCI:0009:01:00): 149, NETIR_LINK_EVT  Fatal   XC0 i0 Link 01 (0x021425c6 "
    "0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)";
const std::string kSegv =
    "pt_main_thread[2536443]: segfault at 7f797fe00000 ip 00007f7c7ac69996 sp 00007f7c12fd7c30 "
    "error 4 in libnccl.so.2[7f7c7ac00000+d3d3000]";
const std::string kAer = "pcieport 0000:00:01.0: AER: Uncorrected (Fatal) error received: id=0008";

// dmesg: raw, -T, --time-format iso, -x.
std::vector<Row> dmesg_rows() {
  std::vector<Row> v;
  {  // peers.md real lines (gpud): raw dmesg, no boot_time -> mono only
    Row r = row("dmesg_raw_no_boot_time", "[171167.620236] " + kXid149);
    r.mono = 171167.620236;
    r.transport = kTransportKernel;
    r.msg = kXid149;
    v.push_back(r);
  }
  {  // same line, with hosts/<host>/boot_time
    Row r = row("dmesg_raw_with_boot_time", "[171167.620236] " + kXid149);
    r.boot_time = "2025-01-01T00:00:00Z";
    r.wall = "2025-01-02T23:32:47.620236Z";
    r.mono = 171167.620236;
    r.transport = kTransportKernel;
    r.msg = kXid149;
    v.push_back(r);
  }
  {  // domain.md §2.1: "[ 130.456250] [ T1946]" thread tag (message from peers.md, Xid 13)
    Row r = row(
        "dmesg_raw_thread_tag",
        "[  130.456250] [ T1946] NVRM: Xid (PCI:0000:b5:00): 13, pid='<unknown>', "
        "name=<unknown>, Graphics SM Warp Exception on (GPC 1, TPC 3, SM 0): Out Of Range Address");
    r.mono = 130.45625;
    r.transport = kTransportKernel;
    r.msg =
        "NVRM: Xid (PCI:0000:b5:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp "
        "Exception on (GPC 1, TPC 3, SM 0): Out Of Range Address";
    v.push_back(r);
  }
  {  // peers.md (gpud xid testdata): dmesg -T
    Row r = row("dmesg_T",
                "[Sun Feb 23 16:24:18 2025] NVRM: Xid (PCI:0000:9b:00): 119, pid=2024380, "
                "name=nvidia-smi, Timeout after 6s of waiting for RPC response from GPU4 GSP! "
                "Expected function 103 (GSP_RM_ALLOC) (0x2081 0x4).");
    r.wall = "2025-02-23T16:24:18.000000Z";
    r.transport = kTransportKernel;
    r.msg =
        "NVRM: Xid (PCI:0000:9b:00): 119, pid=2024380, name=nvidia-smi, Timeout after 6s of "
        "waiting for RPC response from GPU4 GSP! Expected function 103 (GSP_RM_ALLOC) (0x2081 "
        "0x4).";
    v.push_back(r);
  }
  {  // dmesg -T is local time: hosts/<host>/timezone +05:30
    Row r =
        row("dmesg_T_timezone", "[Sun Feb 23 16:24:18 2025] NVRM: Xid (PCI:0000:9b:00): 119, x");
    r.tz = 5 * 3600 + 1800;
    r.wall = "2025-02-23T10:54:18.000000Z";
    r.transport = kTransportKernel;
    r.msg = "NVRM: Xid (PCI:0000:9b:00): 119, x";
    v.push_back(r);
  }
  {  // peers.md (gpud): dmesg -T with the journal's "host kernel:" kept
    Row r = row(
        "dmesg_T_host_field",
        "[Sun Dec  1 14:54:40 2024] ny2g1r12hh2 kernel: mlx5_core 0000:5c:00.0: "
        "mlx5_pcie_event:299:(pid 268269): Detected insufficient power on the PCIe slot (27W).");
    r.host = "ny2g1r12hh2";
    r.wall = "2024-12-01T14:54:40.000000Z";
    r.transport = kTransportKernel;
    r.msg =
        "mlx5_core 0000:5c:00.0: mlx5_pcie_event:299:(pid 268269): Detected insufficient power "
        "on the PCIe slot (27W).";
    v.push_back(r);
  }
  {  // peers.md (gpud): dmesg --time-format iso with facility/level (dmesg -x)
    Row r = row("dmesg_iso_facility", "kern  :warn  : 2025-01-21T04:41:44,285060+00:00 " + kSegv);
    r.wall = "2025-01-21T04:41:44.285060Z";
    r.transport = kTransportKernel;
    r.msg = kSegv;
    v.push_back(r);
  }
  {  // the same without -x
    Row r = row("dmesg_iso", "2025-01-21T04:41:44,285060+00:00 " + kSegv);
    r.wall = "2025-01-21T04:41:44.285060Z";
    r.transport = kTransportKernel;
    r.msg = kSegv;
    v.push_back(r);
  }
  {  // dmesg -x with a non-kernel facility is not kernel
    Row r = row("dmesg_iso_user_facility", "user  :notice: 2025-01-21T04:41:44,285060+00:00 hello");
    r.wall = "2025-01-21T04:41:44.285060Z";
    r.transport = kTransportSyslog;
    r.msg = "hello";
    v.push_back(r);
  }
  return v;
}

// Other kernel-ring and program stamps: talosctl dmesg, UCX's epoch stamp.
std::vector<Row> stamp_rows() {
  std::vector<Row> v;
  {  // talosctl dmesg (NVIDIA/open-gpu-kernel-modules#1118, real line, the node
     // moved to the test topology): the node names the host, kern is kernel,
     // the level right-aligned
    Row r =
        row("talos_dmesg",
            "10.1.0.18: kern:     err: [2026-04-22T21:25:20.466440686Z]: nvidia-nvswitch1: "
            "SXid (PCI:0000:aa:00.0): 24007, Severity 1 Engine instance 12 Sub-engine instance 00");
    r.host = "node-0018.cluster.local";  // the node by its IP
    r.wall = "2026-04-22T21:25:20.466440Z";
    r.transport = kTransportKernel;
    r.msg =
        "nvidia-nvswitch1: SXid (PCI:0000:aa:00.0): 24007, Severity 1 Engine instance 12 "
        "Sub-engine "
        "instance 00";
    v.push_back(r);
  }
  {  // the same shape with "warning" and a named node
    Row r = row("talos_dmesg_warning",
                "bd-cpu18: kern: warning: [2026-04-22T21:25:20.505406921Z]: NVRM: Xid "
                "(PCI:0000:48:00): 62, 00002740");
    r.host = "bd-cpu18";
    r.wall = "2026-04-22T21:25:20.505406Z";
    r.transport = kTransportKernel;
    r.msg = "NVRM: Xid (PCI:0000:48:00): 62, 00002740";
    v.push_back(r);
  }
  {  // UCX's Unix-epoch stamp is no dmesg time. Format: openucx/ucx
     // src/ucs/debug/log.c ucs_log_default_handler "[%lu.%06lu] [%s:%-5d:%d]
     // %16s:%-4u %-4s %-5s %s"; values rendered
    Row r = row("ucx_epoch_stamp",
                "[1602505234.581375] [swx-rdmz-ucx-arm-hwi-01:36773:0]       ib_iface.c:974  UCX  "
                "ERROR ibv_create_cq(cqe=4096) failed: Cannot allocate memory");
    r.wall = "2020-10-12T12:20:34.581375Z";
    r.transport = kTransportApp;
    r.msg =
        "[swx-rdmz-ucx-arm-hwi-01:36773:0]       ib_iface.c:974  UCX  ERROR "
        "ibv_create_cq(cqe=4096) "
        "failed: Cannot allocate memory";
    v.push_back(r);
  }
  {  // a daemon's line in the same form is not kernel
    Row r = row("talos_dmesg_daemon",
                "10.1.0.17: daemon:    info: [2026-04-22T21:25:20.000000000Z]: hello");
    r.wall = "2026-04-22T21:25:20.000000Z";
    r.transport = kTransportSyslog;
    r.msg = "hello";
    v.push_back(r);
  }
  return v;
}

// Syslog: RFC 3164 and RFC 5424.
std::vector<Row> syslog_rows() {
  std::vector<Row> v;
  {  // peers.md (linux-pci list): RFC 3164; the host field wins; the year from the bundle
    Row r = row("rfc3164_kernel", "Dec  1 02:16:37 bd-cpu18 kernel: " + kAer);
    r.year = 2024;
    r.host = "bd-cpu18";
    r.wall = "2024-12-01T02:16:37.000000Z";
    r.transport = kTransportKernel;
    r.msg = kAer;
    v.push_back(r);
  }
  {  // --strict-transport: "kernel:" in syslog text is forgeable
    Row r = row("rfc3164_kernel_strict", "Dec  1 02:16:37 bd-cpu18 kernel: " + kAer);
    r.year = 2024;
    r.strict = true;
    r.host = "bd-cpu18";
    r.wall = "2024-12-01T02:16:37.000000Z";
    r.transport = kTransportSyslog;
    r.msg = kAer;
    v.push_back(r);
  }
  {  // domain.md §2.1 "Feb 01 14:25:31 host kernel:" prefix; host by short name; zone-less
    Row r = row("rfc3164_short_name_tz",
                "Feb 01 14:25:31 node-0018 kernel: [ 1843.308145] NVRM: GPU 0000:29:00.0: GPU has "
                "fallen off the bus.");
    r.year = 2025;
    r.tz = -8 * 3600;
    r.host = "node-0018.cluster.local";
    r.wall = "2025-02-01T22:25:31.000000Z";
    r.mono = 1843.308145;
    r.transport = kTransportKernel;
    r.msg = "NVRM: GPU 0000:29:00.0: GPU has fallen off the bus.";
    v.push_back(r);
  }
  {  // RFC 3164 from a non-kernel program (invented framing)
    Row r = row("rfc3164_app_tag", "Mar  5 10:11:12 10.1.0.18 nvidia-fabricmanager[841]: started");
    r.year = 2024;
    r.host = "node-0018.cluster.local";  // by IP
    r.wall = "2024-03-05T10:11:12.000000Z";
    r.transport = kTransportSyslog;
    r.msg = "started";
    v.push_back(r);
  }
  {  // RFC 3164 without a host field (some senders omit it; invented framing)
    Row r = row("rfc3164_no_host", "Dec  1 02:16:37 kernel: " + kAer);
    r.year = 2024;
    r.wall = "2024-12-01T02:16:37.000000Z";
    r.transport = kTransportKernel;
    r.msg = kAer;
    v.push_back(r);
  }
  {  // syslog bookkeeping line without a tag
    Row r = row("rfc3164_repeated", "Dec  1 02:16:38 bd-cpu18 last message repeated 3 times");
    r.year = 2024;
    r.host = "bd-cpu18";
    r.wall = "2024-12-01T02:16:38.000000Z";
    r.transport = kTransportSyslog;
    r.msg = "last message repeated 3 times";
    v.push_back(r);
  }
  {  // RFC 5424, facility kern (0) -> kernel (peers.md NVSentinel AER line; invented framing)
    Row r = row("rfc5424_kern",
                "<3>1 2024-03-05T10:11:12.123Z node-0018 kernel - - - pcieport 0000:50:00.0: AER: "
                "PCIe Bus Error: severity=Uncorrectable (Fatal)");
    r.host = "node-0018.cluster.local";
    r.wall = "2024-03-05T10:11:12.123000Z";
    r.transport = kTransportKernel;
    r.msg = "pcieport 0000:50:00.0: AER: PCIe Bus Error: severity=Uncorrectable (Fatal)";
    v.push_back(r);
  }
  {  // RFC 5424, facility user (1), structured data and offset
    Row r = row("rfc5424_user",
                "<14>1 2024-03-05T12:11:12.5+02:00 node-0017 trainer 42 ID7 [meta x=\"1\\]\"] "
                "step 5 done");
    r.wall = "2024-03-05T10:11:12.500000Z";
    r.transport = kTransportSyslog;
    r.msg = "step 5 done";
    v.push_back(r);
  }
  return v;
}

// journalctl -o json.
std::vector<Row> journal_rows() {
  std::vector<Row> v;
  {  // journalctl -o json, kernel transport (peers.md gpud fallen-off line)
    Row r =
        row("journal_json_kernel",
            R"({"__REALTIME_TIMESTAMP":"1709633472123456","__MONOTONIC_TIMESTAMP":"1843308145",)"
            R"("_HOSTNAME":"node-0018","_TRANSPORT":"kernel",)"
            R"("MESSAGE":"NVRM: GPU 0000:29:00.0: GPU has fallen off the bus."})");
    r.host = "node-0018.cluster.local";
    r.wall = "2024-03-05T10:11:12.123456Z";
    r.mono = 1843.308145;
    r.transport = kTransportKernel;
    r.msg = "NVRM: GPU 0000:29:00.0: GPU has fallen off the bus.";
    v.push_back(r);
  }
  {  // escapes in MESSAGE, fields in another order, numbers unquoted
    Row r = row(
        "journal_json_escapes",
        R"({"PRIORITY":3,"MESSAGE":"say \"hi\" caf\u00e9 \ud83d\ude00 a\\b\tc",)"
        R"("_TRANSPORT":"syslog","_HOSTNAME":"bd-cpu18","__REALTIME_TIMESTAMP":1709633472000001})");
    r.host = "bd-cpu18";
    r.wall = "2024-03-05T10:11:12.000001Z";
    r.transport = kTransportSyslog;
    r.msg = "say \"hi\" caf\xc3\xa9 \xf0\x9f\x98\x80 a\\b\tc";
    v.push_back(r);
  }
  {  // MESSAGE as an array of bytes ("hi\xff")
    Row r = row("journal_json_bytes",
                R"({"__REALTIME_TIMESTAMP":"1709633472000000","_HOSTNAME":"node-0017",)"
                R"("_TRANSPORT":"stdout","MESSAGE":[104,105,255]})");
    r.wall = "2024-03-05T10:11:12.000000Z";
    r.transport = kTransportJournal;
    r.msg = "hi\xff";
    v.push_back(r);
  }
  return v;
}

// Application logs: NCCL, PyTorch, ISO prefixes, rsyslog files, CRI.
std::vector<Row> app_rows() {
  std::vector<Row> v;
  {  // NCCL: the pod name in the prefix never chooses the host; [3] is the rank hint
    // (domain.md §5.2 completion-error format, invented values)
    Row r = row("nccl_prefix",
                "trainer-pod-7f9c:2345:2399 [3] NCCL WARN NET/IB : Got completion from peer "
                "10.2.18.1<52342> with status=12 opcode=0 len=0 vendor err 129 (Recv)");
    r.before = {"2024-03-05 10:11:12,000 INFO start"};
    r.wall = "2024-03-05T10:11:12.000000Z";
    r.inherited = true;
    r.rank = 3;
    r.msg =
        "NCCL WARN NET/IB : Got completion from peer 10.2.18.1<52342> with status=12 opcode=0 "
        "len=0 vendor err 129 (Recv)";
    v.push_back(r);
  }
  {  // peers.md (nccl#1730): PyTorch [rankN]: + glog time; the date's year from the file
    Row r = row("pytorch_rank_glog",
                "[rank118]:[E603 17:48:01.005271823 ProcessGroupNCCL.cpp:632] [Rank 118] Watchdog "
                "caught collective operation timeout: WorkNCCL(SeqNum=2398459, OpType=ALLREDUCE, "
                "NumelIn=8652160, NumelOut=8652160, Timeout(ms)=1800000) ran for 1800068 "
                "milliseconds before timing out.");
    r.before = {"2025-06-03 17:00:00 INFO training"};
    r.year = 2024;  // the file's own dated line wins over the bundle year
    r.wall = "2025-06-03T17:48:01.005271Z";
    r.rank = 118;
    r.msg =
        "[Rank 118] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2398459, "
        "OpType=ALLREDUCE, NumelIn=8652160, NumelOut=8652160, Timeout(ms)=1800000) ran for "
        "1800068 milliseconds before timing out.";
    v.push_back(r);
  }
  {  // domain.md §5.4 PyTorch line (month 10), year from the bundle
    Row r = row("pytorch_rank_bundle_year",
                "[rank4]:[E1016 03:31:38.929241154 ProcessGroupNCCL.cpp:621] [Rank 4] Some NCCL "
                "operations have failed or timed out.");
    r.year = 2024;
    r.wall = "2024-10-16T03:31:38.929241Z";
    r.rank = 4;
    r.msg = "[Rank 4] Some NCCL operations have failed or timed out.";
    v.push_back(r);
  }
  {  // ISO-8601 / "YYYY-MM-DD HH:MM:SS,fff" prefix, zone-less (invented app line)
    Row r = row("iso_prefix_app", "2024-03-05 10:11:12,345 ERROR trainer: loss is nan");
    r.tz = 3600;
    r.wall = "2024-03-05T09:11:12.345000Z";
    r.msg = "ERROR trainer: loss is nan";
    v.push_back(r);
  }
  {  // rsyslog RFC 3339 file format: host field and kernel tag
    Row r =
        row("rfc3339_syslog",
            "2024-03-05T10:11:12.123456+00:00 node-0018 kernel: NVRM: Xid (PCI:0000:18:00): 79, "
            "pid=1234, GPU has fallen off the bus.");
    r.host = "node-0018.cluster.local";
    r.wall = "2024-03-05T10:11:12.123456Z";
    r.transport = kTransportKernel;
    r.msg = "NVRM: Xid (PCI:0000:18:00): 79, pid=1234, GPU has fallen off the bus.";
    v.push_back(r);
  }
  {  // Kubernetes CRI (domain.md §5.4 line inside)
    Row r = row("cri_full",
                "2024-03-21T02:07:08.408271257Z stderr F [rank0]:[E321 02:07:08.408271257 "
                "ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout");
    r.wall = "2024-03-21T02:07:08.408271Z";
    r.rank = 0;
    r.msg = "[Rank 0] Watchdog caught collective operation timeout";
    v.push_back(r);
  }
  return v;
}

// The other collected files: fabric manager, SEL, nvidia-smi, sysfs counters, OpenSM.
std::vector<Row> sidecar_rows() {
  std::vector<Row> v;
  {  // peers.md (gpud fabric manager)
    Row r =
        row("fabric_manager",
            "[Feb 27 2025 15:10:02] [ERROR] [tid 12727] detected NVSwitch non-fatal error 12028 "
            "on fid 0 on NVSwitch pci bus id 00000000:86:00.0 physical id 3 port 61");
    r.wall = "2025-02-27T15:10:02.000000Z";
    r.msg =
        "[ERROR] [tid 12727] detected NVSwitch non-fatal error 12028 on fid 0 on NVSwitch pci "
        "bus id 00000000:86:00.0 physical id 3 port 61";
    v.push_back(r);
  }
  {  // ipmitool sel elist (interfaces.md §3 form; invented values)
    Row r = row("ipmitool_sel",
                "   1 | 03/05/2024 | 10:11:12 | Power Supply #0x51 | Failure detected | Asserted");
    r.wall = "2024-03-05T10:11:12.000000Z";
    r.msg = "Power Supply #0x51 | Failure detected | Asserted";
    v.push_back(r);
  }
  {  // nvidia-smi CSV row without a header: the row after the timestamp
    Row r = row("nvidia_smi_csv_no_header",
                "2024/03/05 10:11:12.123, 0, NVIDIA H100 80GB HBM3, 00000000:18:00.0, 87");
    r.wall = "2024-03-05T10:11:12.123000Z";
    r.msg = "0, NVIDIA H100 80GB HBM3, 00000000:18:00.0, 87";
    v.push_back(r);
  }
  {  // with a header: "name=value; ..."
    Row r = row("nvidia_smi_csv_header",
                "2024/03/05 10:11:12.123, 0, NVIDIA H100 80GB HBM3, 00000000:18:00.0, 87");
    r.before = {"timestamp, index, name, pci.bus_id, temperature.gpu [C]"};
    r.wall = "2024-03-05T10:11:12.123000Z";
    r.msg = "index=0; name=NVIDIA H100 80GB HBM3; pci.bus_id=00000000:18:00.0; temperature.gpu=87";
    v.push_back(r);
  }
  {  // more values than the header names: "colN="; blanks trimmed
    Row r = row("nvidia_smi_csv_short_header",
                "2024/03/05 10:11:12.123,  0 , NVIDIA H100 80GB HBM3,,87 ");
    r.before = {"timestamp, index"};
    r.wall = "2024-03-05T10:11:12.123000Z";
    r.msg = "index=0; col2=NVIDIA H100 80GB HBM3; col3=; col4=87";
    v.push_back(r);
  }
  {  // sysfs counter dump with epoch seconds (interfaces.md §3 form; domain.md §4.2 counter)
    Row r = row("sysfs_epoch",
                "1709633472 /sys/class/infiniband/mlx5_3/ports/1/counters/link_downed:1");
    r.wall = "2024-03-05T10:11:12.000000Z";
    r.msg = "/sys/class/infiniband/mlx5_3/ports/1/counters/link_downed:1";
    v.push_back(r);
  }
  {  // sysfs counter dump with an ISO time
    Row r =
        row("sysfs_iso",
            "2024-03-05T10:11:12Z /sys/class/infiniband/mlx5_3/ports/1/counters/symbol_error:120");
    r.wall = "2024-03-05T10:11:12.000000Z";
    r.msg = "/sys/class/infiniband/mlx5_3/ports/1/counters/symbol_error:120";
    v.push_back(r);
  }
  {  // OpenSM log (domain.md §4.3 trap text; invented framing), subnet manager not in topology
    Row r = row("opensm",
                "Mar 05 10:11:12 123456 [7F1A2B3C] 0x02 -> log_trap_info: Received Generic Notice "
                "type:1 num:128 (Link state change) Producer:2 (Switch) from LID:1 TID:0x0000000c");
    r.dir = "ufm-01";
    r.host = "ufm-01";
    r.host_known = false;
    r.year = 2024;
    r.wall = "2024-03-05T10:11:12.123456Z";
    r.msg =
        "0x02 -> log_trap_info: Received Generic Notice type:1 num:128 (Link state change) "
        "Producer:2 (Switch) from LID:1 TID:0x0000000c";
    v.push_back(r);
  }
  return v;
}

// Continuations, pstore and bracketed captures, journalctl short-precise,
// near-misses and unknown hosts.
std::vector<Row> context_rows() {
  std::vector<Row> v;
  {  // peers.md (NVSentinel) multi-line fallen-off: continuation inherits time and transport
    Row r = row("continuation_inherits",
                "               NVRM: fallen off the bus and is not responding to commands.");
    r.before = {"[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0",
                "               NVRM: (PCI ID: 10de:26b5) installed in this system has"};
    r.mono = 1843.308145;
    r.transport = kTransportKernel;
    r.inherited = true;
    r.msg = "               NVRM: fallen off the bus and is not responding to commands.";
    v.push_back(r);
  }
  {  // dmesg -r (level prefix) from a pstore/console capture
    Row r = row("dmesg_r_pstore", "<6>[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0");
    r.mono = 1843.308145;
    r.transport = kTransportKernel;
    r.msg = "NVRM: The NVIDIA GPU 0000:b3:00.0";
    v.push_back(r);
  }
  {  // docs/language.md §9 test lines: "[<RFC 3339>] msg"
    Row r =
        row("bracketed_iso",
            "[2026-03-05T10:11:12.000000+00:00] pcieport 0000:17:00.0: AER: Uncorrected (Fatal) "
            "error received: 0000:17:00.0");
    r.wall = "2026-03-05T10:11:12.000000Z";
    r.msg = "pcieport 0000:17:00.0: AER: Uncorrected (Fatal) error received: 0000:17:00.0";
    v.push_back(r);
  }
  {  // Megatron-LM training_log: f" [{datetime.now().strftime('%Y-%m-%d %H:%M:%S')}]"
     // (megatron/training/training.py); real line from a public NeMo/Megatron
     // how-to (pretrain.sh output), zone-less local time
    Row r = row("megatron_indented_bracket",
                " [2024-08-01 09:44:55] iteration        1/       5 | consumed samples:           "
                "32 | elapsed time per iteration (ms): 3902.7 |");
    r.wall = "2024-08-01T09:44:55.000000Z";
    r.msg =
        "iteration        1/       5 | consumed samples:           32 | elapsed time per "
        "iteration (ms): 3902.7 |";
    v.push_back(r);
  }
  {  // near-miss (invented): an indented continuation with a bracket is no time
    Row r = row("near_miss_indented_bracket", "     [<ffffffffc0a1b2c3>] nv_kthread_q+0x10/0x20");
    r.msg = "     [<ffffffffc0a1b2c3>] nv_kthread_q+0x10/0x20";
    v.push_back(r);
  }
  {  // journalctl -o short-precise
    Row r = row("journal_short_precise", "Mar 05 10:11:12.654321 node-0017 kernel: " + kAer);
    r.year = 2024;
    r.wall = "2024-03-05T10:11:12.654321Z";
    r.transport = kTransportKernel;
    r.msg = kAer;
    v.push_back(r);
  }
  {  // near-miss (invented): a training log's "[12.5]" is not a dmesg time
    Row r = row("near_miss_bracket_number", "[12.5] loss 3.25");
    r.msg = "[12.5] loss 3.25";
    v.push_back(r);
  }
  {  // near-miss (invented): ISO app line shaped like "host tag:" stays an app line
    Row r = row("near_miss_iso_app_colon", "2024-03-05T10:11:12Z trainer step: 5");
    r.wall = "2024-03-05T10:11:12.000000Z";
    r.msg = "trainer step: 5";
    v.push_back(r);
  }
  {  // near-miss (invented): a leading 10-digit count is not an epoch time
    Row r = row("near_miss_epoch_like", "1234567890 items processed");
    r.msg = "1234567890 items processed";
    v.push_back(r);
  }
  {  // near-miss (invented): "error:warning:" is not a dmesg -x facility prefix
    Row r = row("near_miss_facility", "error:warning: disk almost full");
    r.msg = "error:warning: disk almost full";
    v.push_back(r);
  }
  {  // no time and no previous line
    Row r = row("no_time_first_line", "Traceback (most recent call last):");
    r.msg = "Traceback (most recent call last):";
    v.push_back(r);
  }
  {  // an unknown host directory is still read, flagged
    Row r = row("unknown_host_dir", "[5.000000] hello");
    r.dir = "node-9999";
    r.host = "node-9999";
    r.host_known = false;
    r.mono = 5.0;
    r.transport = kTransportKernel;
    r.msg = "hello";
    v.push_back(r);
  }
  // ---- real captures as SREs paste them (issue 11) ----
  return v;
}

// Relative times (dmesg -H, --reltime) and bare kernel tags.
std::vector<Row> relative_time_rows() {
  std::vector<Row> v;
  {  // dmesg -H first line of a minute; ovro-lwa/lwa-issues#117 (real line); year from the bundle
    Row r = row("dmesg_H_minute", "[May19 19:57] CMCI storm detected: switching to poll mode");
    r.year = 2022;
    r.wall = "2022-05-19T19:57:00.000000Z";
    r.transport = kTransportKernel;
    r.msg = "CMCI storm detected: switching to poll mode";
    v.push_back(r);
  }
  {  // dmesg -H / --reltime delta after it (same source); on the previous line's clock
    Row r =
        row("dmesg_H_delta", "[  +0.000127] mce: [Hardware Error]: Machine check events logged");
    r.before = {"[May19 19:57] CMCI storm detected: switching to poll mode"};
    r.year = 2022;
    r.wall = "2022-05-19T19:57:00.000127Z";
    r.transport = kTransportKernel;
    r.msg = "mce: [Hardware Error]: Machine check events logged";
    v.push_back(r);
  }
  {  // --reltime with no dated line before it: ordered within the host only
    // rwth-i6/returnn#1500 (real line)
    Row r =
        row("dmesg_reltime_no_base",
            "[  +0.000844] nvidia 0000:03:00.0: AER: can't recover (no error_detected callback)");
    r.mono = 0.000844;
    r.transport = kTransportKernel;
    r.msg = "nvidia 0000:03:00.0: AER: can't recover (no error_detected callback)";
    v.push_back(r);
  }
  {  // a syslog kernel line without time and host; NVIDIA/open-gpu-kernel-modules#1150 (real line)
    Row r = row("bare_kernel_tag",
                "kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 "
                "caused by previous Xid 149");
    r.transport = kTransportKernel;
    r.msg =
        "NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by "
        "previous Xid 149";
    v.push_back(r);
  }
  {  // ... which --strict-transport refuses as kernel (forgeable like `logger -t kernel`)
    Row r = row("bare_kernel_tag_strict", "kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=1, x");
    r.strict = true;
    r.transport = kTransportSyslog;
    r.msg = "NVRM: Xid (PCI:0000:dc:00): 45, pid=1, x";
    v.push_back(r);
  }
  return v;
}

// Lines inside other tools' output: alerts, launcher and kubectl prefixes, long uptimes.
std::vector<Row> quoted_rows() {
  std::vector<Row> v;
  {  // a syslog kernel line quoted in an alert; huggingface/m4-logs tr-190 chronicles (real line)
    Row r = row("syslog_quoted_in_alert",
                "Xid errors on instance: node-0017, Error: May 19 07:08:57 node-0017 kernel: "
                "[680111.646286] NVRM: Xid (PCI:0000:10:1c): 63, pid=1850, Row Remapper: New row "
                "marked for remapping, reset gpu to activate");
    r.year = 2023;
    r.wall = "2023-05-19T07:08:57.000000Z";
    r.mono = 680111.646286;
    r.transport = kTransportKernel;
    r.msg =
        "NVRM: Xid (PCI:0000:10:1c): 63, pid=1850, Row Remapper: New row marked for remapping, "
        "reset gpu to activate";
    v.push_back(r);
  }
  {  // torch elastic's local-rank prefix before PyTorch's own; pytorch/pytorch#113128 (real line)
    Row r = row("elastic_default_prefix",
                "[default0]:[rank12]:[E817 17:40:34.227531918 ProcessGroupNCCL.cpp:1515] [PG 0 "
                "(default_pg) Rank 12] Process group watchdog thread terminated with exception: "
                "CUDA error: uncorrectable ECC error encountered");
    r.year = 2024;
    r.wall = "2024-08-17T17:40:34.227531Z";
    r.rank = 12;
    r.msg =
        "[PG 0 (default_pg) Rank 12] Process group watchdog thread terminated with exception: "
        "CUDA error: uncorrectable ECC error encountered";
    v.push_back(r);
  }
  {  // kubectl logs --prefix (invented framing around a real NCCL line of NVIDIA/nccl#905)
    Row r = row("kubectl_prefix",
                "[pod/trainer-0/main] NCCL WARN NET/IB : Got async event : port error");
    r.msg = "NCCL WARN NET/IB : Got async event : port error";
    v.push_back(r);
  }
  {  // gpud's synthetic 9-digit uptime with a 3-digit fraction (peer-parity case 3)
    Row r = row("dmesg_long_uptime",
                "[111111111.111] NVRM: Xid (PCI:0000:05:00): 79, pid='<unknown>', name=<unknown>, "
                "GPU has fallen off the bus.");
    r.mono = 111111111.111;
    r.transport = kTransportKernel;
    r.msg =
        "NVRM: Xid (PCI:0000:05:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the "
        "bus.";
    v.push_back(r);
  }
  return v;
}

// Every family, in this order.
std::vector<Row> rows() {
  std::vector<Row> v;
  for (auto family : {dmesg_rows, stamp_rows, syslog_rows, journal_rows, app_rows, sidecar_rows,
                      context_rows, relative_time_rows, quoted_rows})
    for (Row& r : family()) v.push_back(std::move(r));
  return v;
}

INSTANTIATE_TEST_SUITE_P(Formats, Formats, ::testing::ValuesIn(rows()),
                         [](const auto& tp) { return std::string(tp.param.name); });

// ---- sequences and counters ----

struct Fixture {
  FormatStats stats;
  LineParser p;
  LogRecord rec;
  uint64_t n = 0;
  explicit Fixture(std::optional<int> year = std::nullopt, std::string dir = "node-0017",
                   std::string file = "f.log", FormatOptions opts = {})
      : p{topo(), opts, &stats} {
    FileContext ctx;
    ctx.host_dir = dir;
    ctx.file = "hosts/" + dir + "/" + file;
    ctx.year = year;
    p.begin_file(ctx);
  }
  bool parse(std::string_view s) { return p.parse(s, ++n, &rec); }
};

TEST(FormatSequences, CriPartialLinesJoinTheFinalLine) {
  Fixture f;
  EXPECT_FALSE(f.parse("2024-03-05T10:11:12.000000001Z stdout P RuntimeError: NCCL commun"));
  EXPECT_FALSE(f.parse("2024-03-05T10:11:12.500Z stdout P icator was aborted on rank 3. "));
  ASSERT_TRUE(f.parse("2024-03-05T10:11:13Z stdout F Original reason for failure was: timeout"));
  EXPECT_EQ(f.rec.msg,
            "RuntimeError: NCCL communicator was aborted on rank 3. Original reason for failure "
            "was: timeout");
  EXPECT_EQ(format_time_us(*f.rec.time.wall),
            "2024-03-05T10:11:12.000000Z");  // the first part's time
  EXPECT_EQ(f.stats.cri_partial_joined, 2u);
}

// parses_alone (chunk mode leaves out the line before a hit line): only for
// two syslog lines with BSD times of the same month, never after a line
// that could be a pasted prompt or while a CRI join is open.
TEST(FormatSequences, ParsesAloneOnlyForSameMonthSyslogLines) {
  Fixture f(2026);
  const std::string_view mar1 = "Mar  5 10:00:00 node-0017 kernel: audit: ok";
  const std::string_view mar2 = "Mar  5 10:00:01 node-0017 kernel: NVRM: Xid (PCI:0000:18:00): 95";
  EXPECT_TRUE(f.p.parses_alone(mar1, mar2));
  EXPECT_FALSE(f.p.parses_alone("Feb 28 23:59:59 node-0017 kernel: audit: ok", mar2));
  EXPECT_FALSE(f.p.parses_alone("               NVRM: (PCI ID: 10de:26b5) installed", mar2));
  EXPECT_FALSE(f.p.parses_alone(mar1, "               NVRM: fallen off the bus."));
  EXPECT_FALSE(f.p.parses_alone("2026-03-05T10:00:00Z systemd[1]: ok", mar2));
  EXPECT_FALSE(f.p.parses_alone("", mar2));
  EXPECT_FALSE(f.p.parses_alone("Mar  5 10:00:00 user@gpu-07:~$ dmesg", mar2));
  // The record is the same with or without the line before it.
  Fixture with(2026), without(2026);
  ASSERT_TRUE(with.parse(mar1));
  ASSERT_TRUE(with.parse(mar2));
  ASSERT_TRUE(without.parse(mar2));
  EXPECT_EQ(with.rec.time.wall, without.rec.time.wall);
  EXPECT_EQ(with.rec.msg, without.rec.msg);
  EXPECT_EQ(with.rec.host, without.rec.host);
  EXPECT_EQ(with.rec.transport, without.rec.transport);
  // An open CRI join: no.
  EXPECT_FALSE(f.parse("2024-03-05T10:11:12.000000001Z stdout P RuntimeError: NCCL commun"));
  EXPECT_FALSE(f.p.parses_alone(mar1, mar2));
}

// A pasted prompt is skipped and counted; its command makes the following
// untimed lines kernel lines (lyulyul/shine-cluster#171 shows the prompt form).
TEST(FormatSequences, PastedPromptIsSkippedAndItsCommandSetsTheTransport) {
  Fixture f;
  EXPECT_FALSE(f.parse("user@gpu-07:~$ dmesg -T | grep -i xid"));
  EXPECT_EQ(f.stats.prompt_lines, 1u);
  ASSERT_TRUE(f.parse("NVRM: Xid (PCI:0000:dc:00): 79, GPU has fallen off the bus."));
  EXPECT_EQ(f.rec.transport, kTransportKernel);
  EXPECT_FALSE(
      f.parse("(htranstrack) wangcui@hoth:~/shared/STGTrack/H-TransTrack_test2$ nvidia-smi"));
  ASSERT_TRUE(f.parse("Unable to determine the device handle for GPU 0000:1C:00.0: Unknown Error"));
  EXPECT_EQ(f.rec.transport, kTransportApp);  // nvidia-smi output is the tool's, not the kernel's
  EXPECT_FALSE(f.parse("[root@node-0017 ~]# journalctl -k --no-pager"));
  ASSERT_TRUE(f.parse("NVRM: Xid (PCI:0000:dc:00): 79, GPU has fallen off the bus."));
  EXPECT_EQ(f.rec.transport, kTransportKernel);
  // an e-mail address is not a prompt
  ASSERT_TRUE(f.parse("contact admin@example.com for access"));
}

// A file that is a kernel capture by name holds kernel lines whatever their
// shape, unless --strict-transport.
TEST(FormatSequences, KernelCaptureByFileName) {
  for (const char* name : {"dmesg.txt", "kern.log.1", "console-ramoops-0", "messages"}) {
    Fixture f(std::nullopt, "node-0017", name);
    ASSERT_TRUE(f.parse("NVRM: Xid (PCI:0000:dc:00): 79, GPU has fallen off the bus."));
    EXPECT_EQ(f.rec.transport, kTransportKernel) << name;
  }
  Fixture app(std::nullopt, "node-0017", "train.log");
  ASSERT_TRUE(app.parse("NVRM: Xid (PCI:0000:dc:00): 79, GPU has fallen off the bus."));
  EXPECT_EQ(app.rec.transport, kTransportApp);
  FormatOptions strict;
  strict.strict_transport = true;
  Fixture st(std::nullopt, "node-0017", "dmesg.txt", strict);
  ASSERT_TRUE(st.parse("NVRM: Xid (PCI:0000:dc:00): 79, GPU has fallen off the bus."));
  EXPECT_EQ(st.rec.transport, kTransportApp);
}

// nvidia-bug-report.log: the section rule and header are skipped; the "dmesg:"
// section holds kernel lines, the nvidia-smi section does not (section layout
// of nvidia-bug-report.sh: a rule of underscores, a blank line, the header).
TEST(FormatSequences, BugReportSectionsSetTheTransport) {
  Fixture f(std::nullopt, "node-0017", "nvidia-bug-report.log");
  const std::string rule(44, '_');
  EXPECT_FALSE(f.parse(rule));
  EXPECT_FALSE(f.parse(""));
  EXPECT_FALSE(f.parse("dmesg:"));
  ASSERT_TRUE(f.parse("NVRM: Xid (PCI:0000:dc:00): 79, GPU has fallen off the bus."));
  EXPECT_EQ(f.rec.transport, kTransportKernel);
  EXPECT_FALSE(f.parse(rule));
  EXPECT_FALSE(f.parse("/usr/bin/nvidia-smi --query"));
  ASSERT_TRUE(f.parse("Unable to determine the device handle for GPU 0000:1C:00.0: Unknown Error"));
  EXPECT_EQ(f.rec.transport, kTransportApp);
  // the same rule in another file is a line like any other
  Fixture g;
  EXPECT_TRUE(g.parse(rule));
}

TEST(FormatSequences, YearRollsOverInOneFile) {
  Fixture f(2024);
  ASSERT_TRUE(f.parse("Dec 31 23:59:59 node-0017 kernel: a"));
  EXPECT_EQ(format_time_us(*f.rec.time.wall), "2024-12-31T23:59:59.000000Z");
  ASSERT_TRUE(f.parse("Jan  1 00:00:01 node-0017 kernel: b"));
  EXPECT_EQ(format_time_us(*f.rec.time.wall), "2025-01-01T00:00:01.000000Z");
}

TEST(FormatSequences, YearlessWithoutAnyYearIsFlagged) {
  Fixture f;
  ASSERT_TRUE(f.parse("Mar  5 10:11:12 node-0017 kernel: a"));
  EXPECT_TRUE(f.rec.time_implausible);
  EXPECT_EQ(f.stats.implausible_time, 1u);
  EXPECT_FALSE(f.stats.notes.empty());
}

TEST(FormatSequences, ImplausibleTimesAreKeptAndCounted) {
  Fixture f(2024);
  ASSERT_TRUE(f.parse("1999-12-31T23:59:59Z rtc lost power"));
  EXPECT_TRUE(f.rec.time_implausible);
  EXPECT_EQ(format_time_us(*f.rec.time.wall), "1999-12-31T23:59:59.000000Z");
  ASSERT_TRUE(f.parse("2031-01-01T00:00:00Z far future"));
  EXPECT_TRUE(f.rec.time_implausible);
  ASSERT_TRUE(f.parse("2024-06-01T00:00:00Z fine"));
  EXPECT_FALSE(f.rec.time_implausible);
  EXPECT_EQ(f.stats.implausible_time, 2u);
}

TEST(FormatSequences, TimesPastYear9999AreNotKept) {
  Fixture f(2024);
  ASSERT_TRUE(f.parse("2024-06-01T00:00:00Z fine"));
  // Four digits, but the offset takes it into year 10000: the line keeps the
  // previous line's time, as a line without one does, and is counted.
  ASSERT_TRUE(f.parse("9999-12-31T23:59:59-05:00 beyond"));
  EXPECT_TRUE(f.rec.time_inherited);
  EXPECT_EQ(format_time_us(*f.rec.time.wall), "2024-06-01T00:00:00.000000Z");
  EXPECT_EQ(f.stats.implausible_time, 1u);
}

TEST(FormatSequences, GarbageNulInvalidUtf8AndHugeLinesAreKeptAndCounted) {
  FormatStats stats;
  FormatOptions opts;
  opts.max_line_bytes = 64;
  LineParser p(topo(), opts, &stats);
  FileContext ctx;
  ctx.host_dir = "node-0017";
  p.begin_file(ctx);
  LogRecord rec;
  std::string nul("[1.000000] a\0b", 14);
  ASSERT_TRUE(p.parse(nul, 1, &rec));
  EXPECT_EQ(rec.msg.size(), 3u);
  ASSERT_TRUE(p.parse("[2.000000] caf\xc3\xa9 ok", 2, &rec));  // valid UTF-8
  ASSERT_TRUE(p.parse("[3.000000] bad \xff\xfe bytes \xc3", 3, &rec));
  std::string huge(1000, 'x');
  ASSERT_TRUE(p.parse(huge, 4, &rec));
  EXPECT_EQ(rec.raw.size(), 64u);
  EXPECT_TRUE(rec.time_inherited);
  EXPECT_FALSE(p.parse("", 5, &rec));
  EXPECT_FALSE(p.parse("   \r", 6, &rec));
  ASSERT_TRUE(p.parse("\x01\x02\x03 {{{ [[[ <<< 2024-99-99", 7, &rec));
  EXPECT_EQ(stats.nul_bytes, 1u);
  EXPECT_EQ(stats.invalid_utf8, 1u);
  EXPECT_EQ(stats.truncated_long_lines, 1u);
  EXPECT_EQ(stats.lines, 7u);
}

TEST(FormatSequences, UnknownSyslogHostOnKnownDirectoryStaysOnDirectory) {
  Fixture f(2024);
  ASSERT_TRUE(f.parse("Mar  5 10:11:12 gpu-17-alias kernel: a"));
  EXPECT_EQ(f.rec.host, "node-0017");
  EXPECT_TRUE(f.rec.host_known);
  ASSERT_TRUE(f.parse("Mar  5 10:11:12 node-0018 kernel: b"));
  EXPECT_EQ(f.rec.host, "node-0018.cluster.local");
  EXPECT_EQ(f.rec.time.clock, "node-0018.cluster.local/kernel");
}

TEST(FormatSequences, CentralSyslogOnUnknownDirectoryKeepsUnknownHosts) {
  Fixture f(2024, "syslog-server");
  ASSERT_TRUE(f.parse("Mar  5 10:11:12 node-0420 kernel: a"));
  EXPECT_EQ(f.rec.host, "node-0420");
  EXPECT_FALSE(f.rec.host_known);
  EXPECT_GE(f.stats.unknown_hosts, 1u);
}

// ---- envelopes (interfaces.md §4) ----

TEST(Envelope, FieldsAliasesAndDefaults) {
  FormatStats stats;
  std::string storage;
  LogRecord rec;
  ASSERT_TRUE(parse_envelope(
      R"({"host": "node-0017", "ts": "2026-03-05T10:11:12.345678Z", "source": "kernel", "msg": "NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has fallen off the bus."})",
      topo(), 42, &stats, &storage, &rec));
  EXPECT_EQ(rec.host, "node-0017");
  EXPECT_TRUE(rec.host_known);
  EXPECT_EQ(format_time_us(*rec.time.wall), "2026-03-05T10:11:12.345678Z");
  EXPECT_EQ(rec.transport, kTransportKernel);
  EXPECT_EQ(rec.msg, "NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has fallen off the bus.");
  EXPECT_EQ(rec.time.clock, "node-0017/kernel");

  // Vector/Fluent Bit names; source omitted -> app; short host name.
  ASSERT_TRUE(parse_envelope(
      R"({"host": "node-0018", "timestamp": "2026-03-05T10:11:13Z", "message": "[rank5]: boom"})",
      topo(), 42, &stats, &storage, &rec));
  EXPECT_EQ(rec.host, "node-0018.cluster.local");
  EXPECT_EQ(rec.transport, kTransportApp);
  EXPECT_EQ(rec.rank_hint, 5);
  EXPECT_EQ(rec.msg, "boom");
  EXPECT_EQ(format_time_us(*rec.time.wall), "2026-03-05T10:11:13.000000Z");

  // ts omitted -> arrival; unknown host kept and counted.
  ASSERT_TRUE(parse_envelope(R"({"host": "node-0420", "msg": "x"})", topo(), 1709633472000000,
                             &stats, &storage, &rec));
  EXPECT_EQ(*rec.time.wall, 1709633472000000);
  EXPECT_EQ(rec.host, "node-0420");
  EXPECT_FALSE(rec.host_known);
  EXPECT_EQ(stats.unknown_hosts, 1u);

  // ts omitted, but the line carries its own time (docs/language.md §9 test lines).
  ASSERT_TRUE(parse_envelope(
      R"({"host": "node-0017", "source": "kernel", "msg": "[2026-03-05T10:11:12.000000+00:00] pcieport 0000:17:00.0: AER: x"})",
      topo(), 42, &stats, &storage, &rec));
  EXPECT_EQ(format_time_us(*rec.time.wall), "2026-03-05T10:11:12.000000Z");
  EXPECT_EQ(rec.msg, "pcieport 0000:17:00.0: AER: x");
  EXPECT_EQ(rec.transport, kTransportKernel);
}

TEST(Envelope, InvalidJsonAndMissingMsgAreCountedAndSkipped) {
  FormatStats stats;
  std::string storage;
  LogRecord rec;
  EXPECT_FALSE(
      parse_envelope("{\"host\": \"node-0017\", \"msg\": ", topo(), 0, &stats, &storage, &rec));
  EXPECT_FALSE(parse_envelope("not json", topo(), 0, &stats, &storage, &rec));
  EXPECT_FALSE(parse_envelope("[1,2]", topo(), 0, &stats, &storage, &rec));
  EXPECT_FALSE(parse_envelope(R"({"host": "node-0017"})", topo(), 0, &stats, &storage, &rec));
  EXPECT_FALSE(
      parse_envelope(R"({"host": "node-0017", "msg": 17})", topo(), 0, &stats, &storage, &rec));
  EXPECT_EQ(stats.skipped_invalid_json, 3u);
  EXPECT_EQ(stats.skipped_no_msg, 2u);
}

TEST(Envelope, TsPastYear9999IsArrivalAndCounted) {
  FormatStats stats;
  std::string storage;
  LogRecord rec;
  // 1e20 us would not fit int64 (a cast of it is undefined); the other is
  // year 58081; the string's offset reaches year 10000.
  for (const char* line :
       {R"({"host": "node-0017", "ts": 1e20, "msg": "x"})",
        R"({"host": "node-0017", "ts": -1e300, "msg": "x"})",
        R"({"host": "node-0017", "ts": 1770700707262408271, "msg": "x"})",
        R"({"host": "node-0017", "ts": "9999-12-31T23:59:59-05:00", "msg": "x"})"}) {
    ASSERT_TRUE(parse_envelope(line, topo(), 1709633472000000, &stats, &storage, &rec)) << line;
    EXPECT_EQ(*rec.time.wall, 1709633472000000) << line;
  }
  EXPECT_EQ(stats.implausible_time, 4u);
}

}  // namespace
}  // namespace reflex
