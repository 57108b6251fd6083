// Format table rows for the kernel ring buffer as dmesg and talosctl print
// it (raw, -T, -H, --reltime, -r, -x, --time-format iso) and for programs'
// own bracketed epoch stamps.
#include <string>
#include <vector>

#include "format_rows.h"

namespace reflex::format_test {

// dmesg: raw, -T, --time-format iso, -x.
std::vector<Row> dmesg_rows() {
  std::vector<Row> v;
  {  // real line (gpud's fixtures): raw dmesg, no boot_time -> mono only
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
  {  // newer kernels' "[ T1946]" caller tag after the time (real Xid 13 message)
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
  {  // gpud's xid testdata (real line): dmesg -T
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
  {  // gpud's fixtures (real line): dmesg -T with the journal's "host kernel:" kept
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
  {  // gpud's fixtures (real line): dmesg --time-format iso with facility/level (dmesg -x)
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

// Real captures as SREs paste them: relative times (dmesg -H, --reltime) and
// bare kernel tags.
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

}  // namespace reflex::format_test
