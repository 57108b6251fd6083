// Format table rows for application logs (NCCL, PyTorch, ISO prefixes, CRI),
// files collected from tools (fabric manager, SEL, nvidia-smi, sysfs
// counters, OpenSM), and the context rules: continuations, near-misses,
// unknown hosts.
#include <string>
#include <vector>

#include "format_rows.h"

namespace reflex::format_test {

// Application logs: NCCL, PyTorch, ISO prefixes, rsyslog files, CRI.
std::vector<Row> app_rows() {
  std::vector<Row> v;
  {  // NCCL: the pod name in the prefix never chooses the host; [3] is the rank hint
    // (NCCL's IB completion-error format, invented values)
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
  {  // NVIDIA/nccl#1730 (real line): PyTorch [rankN]: + glog time; the year from the file
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
  {  // a PyTorch watchdog line (month 10), year from the bundle
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
  {  // Kubernetes CRI (a PyTorch watchdog line inside)
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
  {  // gpud's fabric manager fixture (real line)
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
  {  // sysfs counter dump with epoch seconds (interfaces.md §3 form; IB link_downed)
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
  {  // OpenSM log (OpenSM's trap text; invented framing), subnet manager not in topology
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
  {  // NVSentinel's multi-line fallen-off (real lines): continuation inherits time and transport
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
  return v;
}

}  // namespace reflex::format_test
