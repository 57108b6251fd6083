#!/usr/bin/env python3
"""Generate a large, realistic multi-host incident bundle for ingest benchmarks.

Layout (interfaces.md §3): OUT/topology.json and OUT/hosts/<host>/{kern.log,train.log}.
Deterministic for a given --seed. Writes about --mb megabytes in total.

The mix, and why (about 1% of all lines are matched by the shipped kb/):
- kern.log (RFC 3164 syslog, ~55% of the bytes): benign chatter (systemd,
  sshd, cron, kubelet, containerd, UFW, EXT4, perf, mlx5 info) and, at
  --fault-rate, fault lines in real formats (NVIDIA's Xid catalog, the kernel's AER,
  mlx5, NETDEV watchdog, NFS and hung-task prints).
- train.log (the job's stdout/stderr on that host, ~45%): NCCL INFO lines,
  PyTorch/Megatron application chatter (data loader, checkpointing, Python
  warnings, torch.distributed), app fault lines (NCCL WARN, PyTorch watchdog)
  at --fault-rate, and Megatron iteration lines. Only one rank per pipeline
  stage prints training progress (here: one rank per host, the generous end),
  once per iteration, so iteration lines arrive at the rate the lines
  themselves claim (`elapsed time per iteration (ms): ~1000`): one per ~1 s
  of log time against ~200 lines/s of other output, i.e. ~0.5% of train.log.
  Every iteration line is a sample of the fail-slow baseline
  (kb/failslow.rfx); an earlier version printed one on every second
  train.log line, so ~21% of the bundle matched the knowledge base, which no
  real multi-host log does (kernel, NCCL INFO and application chatter
  dominate).
No line kind the knowledge base matches is left out; only their rates are
realistic.

--profile telemetry (a node as it really logs) adds what the KB
reads continuously: `nvidia-smi --query-gpu` CSV samples every second for
each of the 8 GPUs (nvidia-smi.csv; mostly no throttle reason, so the
signature's `when` rejects them; now and then a thermal reason that feeds
the aggregate), IB sysfs counter dumps every 10 s (ib_counters.log, 8 ports x
6 counters, the baselines' input), EDAC corrected-error and CPU-throttle
messages in kern.log, journald JSON (journal.json) and the job's stdout as
Kubernetes CRI lines (train.log). About a fifth of all lines match.
--profile storm writes one host's kern.log as an Xid 95 storm (every line
matches; NVSentinel#1120 saw 800K of them) beside quiet hosts. The benign chatter lines are invented (marked below) and checked
against the shipped patterns by the bench (rg -c) - they must not match.
"""
import argparse
import json
import os
import random

MONTHS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()


def syslog_ts(t):
    # RFC 3164 timestamp for seconds since 2026-03-05 00:00:00 UTC (same day)
    h, rem = divmod(int(t) % 86400, 3600)
    m, s = divmod(rem, 60)
    return "Mar  5 %02d:%02d:%02d" % (h, m, s)


def iso_ts(t):
    h, rem = divmod(int(t) % 86400, 3600)
    m, s = divmod(rem, 60)
    us = int((t - int(t)) * 1e6)
    return "2026-03-05 %02d:%02d:%02d,%03d" % (h, m, s, us // 1000)


def cri_ts(t):
    h, rem = divmod(int(t) % 86400, 3600)
    m, s = divmod(rem, 60)
    return "2026-03-05T%02d:%02d:%02d.%06dZ" % (h, m, s, int((t - int(t)) * 1e6))


SMI_HEADER = ("timestamp, index, pci.bus_id, temperature.gpu, clocks.sm [MHz], "
              "clocks_throttle_reasons.active, power.draw [W]")
SMI_BUS = ["00000000:%02X:00.0" % b for b in (0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB)]
IB_COUNTERS = ("symbol_error", "link_error_recovery", "link_downed", "port_rcv_errors",
               "port_xmit_discards", "port_rcv_remote_physical_errors")


def smi_row(r, t, seq, host, hi):
    # one sample per GPU per second: 8 rows share a second
    if seq % 8 == 1:
        t += 1.0
    g = seq % 8
    h, rem = divmod(int(t) % 86400, 3600)
    m, s = divmod(rem, 60)
    # a thermal slowdown now and then (reason 0x40), otherwise none (0x0)
    reasons = "0x0000000000000040" if r.random() < 0.002 else "0x0000000000000000"
    return ("2026/03/05 %02d:%02d:%02d.%03d, %d, %s, %d, %d MHz, %s, %.2f W\n" % (
        h, m, s, int((t - int(t)) * 1000), g, SMI_BUS[g], 55 + r.randrange(30), 1980 - r.randrange(400),
        reasons, 300 + r.random() * 400)), t


def ib_row(r, t, seq, host, hi):
    # a dump of 8 ports x 6 counters every 10 s
    if seq % 48 == 1:
        t += 10.0
    port, c = divmod(seq % 48, 6)
    # healthy counters stand still; now and then one ticks (a baseline's input)
    key = (host, port, c)
    if r.random() < 0.0005:
        IB_STATE[key] = IB_STATE.get(key, 0) + 1
    value = IB_STATE.get(key, 0)
    return "%d /sys/class/infiniband/mlx5_%d/ports/1/counters/%s:%d\n" % (
        1772668800 + int(t), port, IB_COUNTERS[c], value), t


def journal_row(r, t, seq, host, hi):
    t += r.random() * 0.05
    msg = ("I0305 kubelet.go:2345] \\\"SyncLoop (PLEG): event for pod\\\" pod=\\\"train/worker-%d\\\"" % r.randrange(99)
           if seq % 3 else "Started Session %d of user root." % r.randrange(99999))
    return ('{"__REALTIME_TIMESTAMP":"%d","_HOSTNAME":"%s","_TRANSPORT":"journal","SYSLOG_IDENTIFIER":"%s",'
            '"PRIORITY":"6","MESSAGE":"%s"}\n' % (int((1772668800 + t) * 1e6), host, "kubelet" if seq % 3 else "systemd-logind", msg)), t


IB_STATE = {}
TELEMETRY = {"nvidia-smi.csv": smi_row, "ib_counters.log": ib_row, "journal.json": journal_row}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--mb", type=int, default=1024)
    ap.add_argument("--hosts", type=int, default=16)
    ap.add_argument("--seed", type=int, default=1)
    # Fault lines per line of each file; with the iteration lines this makes
    # ~1% of all lines matched by the shipped kb/ (the bench prints rg -c).
    ap.add_argument("--fault-rate", type=float, default=0.0075)
    ap.add_argument("--profile", choices=("mixed", "telemetry", "storm"), default="mixed")
    a = ap.parse_args()
    rnd = random.Random(a.seed)

    hosts = ["node-%04d" % (i + 1) for i in range(a.hosts)]
    gpu_bdfs = ["0000:%02x:00.0" % b for b in (0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb)]
    nic_bdfs = ["0000:%02x:00.0" % b for b in (0x19, 0x2b, 0x3b, 0x5e, 0x9b, 0xac, 0xbb, 0xdc)]
    sw_bdfs = ["0000:%02x:00.0" % b for b in (0x17, 0x29, 0x39, 0x5c)]
    topo = {"cluster": "bench", "hosts": [], "jobs": [
        {"id": "job-1", "ranks": {"hosts": hosts, "gpus_per_host": 8}}]}
    for hi, h in enumerate(hosts):
        topo["hosts"].append({
            "name": h, "ip": "10.1.0.%d" % (hi + 1),
            "gpus": [{"index": g, "bdf": gpu_bdfs[g], "pcie_switch": "sw%d" % (g // 2),
                      "nics": ["mlx5_%d" % g]} for g in range(8)],
            "nics": [{"name": "mlx5_%d" % g, "bdf": nic_bdfs[g], "netdev": "ibp%ds0" % g,
                      "ip": "10.2.%d.%d" % (hi + 1, g + 1), "pcie_switch": "sw%d" % (g // 2)}
                     for g in range(8)],
            "pcie_switches": [{"id": "sw%d" % s, "bdf": sw_bdfs[s]} for s in range(4)],
        })
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "topology.json"), "w") as f:
        json.dump(topo, f, indent=1)

    # --- benign chatter (kernel/syslog side) ---
    benign_kern = [
        "systemd[1]: Started Session %d of user root.",
        "systemd[1]: Starting Daily apt download activities...",
        "sshd[%d]: Accepted publickey for ubuntu from 10.0.0.5 port 51234 ssh2: RSA SHA256:3q2+7w",
        "sshd[%d]: pam_unix(sshd:session): session closed for user ubuntu",
        "kernel: [UFW BLOCK] IN=eth0 OUT= MAC=00:00:00:00 SRC=10.0.0.%d DST=10.1.0.1 LEN=40 PROTO=TCP",
        "kernel: EXT4-fs (nvme0n1p2): re-mounted. Opts: errors=remount-ro. Quota mode: none.",
        "kernel: perf: interrupt took too long (2503 > 2500), lowering kernel.perf_event_max_sample_rate to %d",
        "CRON[%d]: (root) CMD (/usr/local/bin/collect_metrics.sh >/dev/null 2>&1)",
        "kernel: nvidia-peermem: module loaded, version %d",
        "kubelet[2211]: I0305 10:11:12.345678    2211 kubelet.go:2345] \"SyncLoop (PLEG): event for pod\" pod=\"train/worker-%d\"",
        "containerd[1876]: time=\"2026-03-05T10:11:12.000000000Z\" level=info msg=\"cleaning up dead shim\" id=%d",
        "kernel: mlx5_core 0000:19:00.0: mlx5e_ethtool_get_link_ksettings: query port ptys failed: %d",
        "dbus-daemon[1101]: [system] Successfully activated service 'org.freedesktop.hostname1' pid=%d",
    ]
    benign_app = [
        "%s:%d:%d [%d] NCCL INFO Channel 00/32 : 0[0] -> 1[1] via P2P/IPC",
        "%s:%d:%d [%d] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB ibp25s0:10.2.0.1<0>",
        "%s:%d:%d [%d] NCCL INFO comm 0x55d4c8a0 rank 3 nranks 128 cudaDev 3 nvmlDev 3 busId 5d000 commId 0x1a2b - Init COMPLETE",
        "%s:%d:%d [%d] NCCL INFO Using network IB",
        "%s:%d:%d [%d] NCCL INFO ncclCommInitRank comm 0x55d4c8a0 rank 3 nranks 128 cudaDev 3 busId 5d000 - Init START",
    ]
    # Application chatter of a PyTorch/Megatron job (invented, in the formats of
    # Python logging, Python warnings and PyTorch's glog-style INFO lines).
    chatter_app = [
        "%s [INFO] [data_loader.py:212] rank %d: prefetched shard %05d (4096 samples, 3 workers busy)",
        "%s [INFO] [checkpointing.py:512] rank %d: writing distributed checkpoint shard %d to /ckpt/job-1/latest",
        "%s [WARNING] [utils.py:88] rank %d: tokens_per_sec sample %d skipped (profiler window)",
        "/usr/local/lib/python3.10/dist-packages/torch/utils/data/dataloader.py:558: UserWarning: This DataLoader will create 16 worker processes in total (rank %d, pid %d).",
        "  warnings.warn(_create_warning_msg(",
        "[rank%d]:[I305 10:41:12.408271257 ProcessGroupNCCL.cpp:2218] [PG 0 (default_pg) Rank %d] ProcessGroupNCCL created ncclComm_ 0x55d4c8a0 on CUDA device",
    ]
    train_tmpl = " [INFO] iteration %d/ 100000 | consumed samples: %d | elapsed time per iteration (ms): %.1f | learning rate: 1.5E-04 | lm loss: 2.%04d"

    # --- fault lines (real formats; BDFs from the topology) ---
    def kern_fault(r, hi):
        g = r.randrange(8)
        bdf = gpu_bdfs[g][5:10]
        choice = r.randrange(12)
        if choice == 0:  # Xid 79 in the NVRM form of NVIDIA's Xid catalog
            return "NVRM: Xid (PCI:0000:%s): 79, pid=%d, GPU has fallen off the bus." % (bdf, r.randrange(99999))
        if choice == 1:  # NVIDIA/NVSentinel test fixture, Xid 13
            return "NVRM: Xid (PCI:0000:%s): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp Exception on (GPC 1, TPC 3, SM 0): Out Of Range Address" % bdf
        if choice == 2:
            return "NVRM: Xid (PCI:0000:%s): 95, pid=%d, name=python, Uncontained: FBHUB. RST: Yes, D-RST: No" % (bdf, r.randrange(99999))
        if choice == 3:  # leptonai/gpud xid testdata, Xid 119
            return "NVRM: Xid (PCI:0000:%s): 119, pid=2024380, name=nvidia-smi, Timeout after 6s of waiting for RPC response from GPU4 GSP! Expected function 103 (GSP_RM_ALLOC) (0x2081 0x4)." % bdf
        if choice == 4:  # NVIDIA/NVSentinel test fixture, Xid 74
            return "NVRM: Xid (PCI:0000:%s): 74, pid='<unknown>', name=<unknown>, NVLink: fatal error detected on link 14(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)" % bdf
        if choice == 5:  # Linux drivers/pci/pcie/aer.c message format
            return "pcieport %s: AER: Corrected error received: %s" % (sw_bdfs[g // 2], sw_bdfs[g // 2])
        if choice == 6:
            return "pcieport %s: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)" % sw_bdfs[g // 2]
        if choice == 7:  # NVIDIA/NVSentinel test fixture, mlx5 command timeout
            return "mlx5_core %s: wait_func:1195:(pid 1967079): ENABLE_HCA(0x104) timeout. Will cause a leak of a command resource" % nic_bdfs[g]
        if choice == 8:  # Linux mlx5 core events.c port module event
            return "mlx5_core %s: Port module event: module %d, Cable plugged" % (nic_bdfs[g], g)
        if choice == 9:  # NVIDIA/NVSentinel test fixture, NIC transmit timeout
            return "NETDEV WATCHDOG: ibp%ds0 (mlx5_core): transmit queue 0 timed out" % g
        if choice == 10:  # NFS client stall, usually benign noise that recovers
            return "nfs: server nfs-03 not responding, still trying"
        return "INFO: task python:%d blocked for more than 120 seconds." % r.randrange(99999)

    def app_fault(r, host, rank):
        choice = r.randrange(4)
        if choice == 0:  # PyTorch ProcessGroupNCCL watchdog timeout
            return "[rank%d]:[E305 10:41:12.408271257 ProcessGroupNCCL.cpp:607] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) ran for 600060 milliseconds before timing out." % (rank, rank)
        if choice == 1:
            return "[rank%d]:[E305 10:41:12.465150152 ProcessGroupNCCL.cpp:1664] [PG 1 Rank %d] Exception (either an error or timeout) detected by watchdog at work: 1580, last enqueued NCCL work: 1582, last completed NCCL work: 1579." % (rank, rank)
        if choice == 2:  # NCCL src/transport/net_ib.cc completion error
            return "%s:1234:5678 [%d] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer 10.2.3.4<45678> with status=12 opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:10.2.0.1 remoteGids ::ffff:10.2.3.4 hca mlx5_%d" % (host, rank % 8, rank % 8)
        return "%s:1234:5678 [%d] NCCL INFO NET/IB : mlx5_%d:1 Got async event : port error" % (host, rank % 8, rank % 8)

    target = a.mb * 1024 * 1024
    per_host = target // len(hosts)
    total = 0
    for hi, h in enumerate(hosts):
        d = os.path.join(a.out, "hosts", h)
        os.makedirs(d, exist_ok=True)
        r = random.Random(a.seed * 1000 + hi)
        files = {"mixed": (("kern.log", 0.55), ("train.log", 0.45)),
                 "telemetry": (("kern.log", 0.20), ("train.log", 0.20), ("nvidia-smi.csv", 0.35),
                               ("ib_counters.log", 0.15), ("journal.json", 0.10)),
                 "storm": (("kern.log", 0.55), ("train.log", 0.45))}[a.profile]
        for fname, share in files:
            budget = int(per_host * share)
            written = 0
            t = 36000.0
            it = 0
            next_iter = t + 1.0
            storm = a.profile == "storm" and fname == "kern.log" and hi == 0
            if storm:
                budget = int(target * 0.8)  # the storm is most of the bundle
            elif a.profile == "storm":
                budget = int(target * 0.2 / len(hosts) * share)  # quiet hosts beside it
            with open(os.path.join(d, fname), "w", buffering=1 << 20) as f:
                buf = []
                size = 0
                if fname == "nvidia-smi.csv":
                    buf.append(SMI_HEADER + "\n")
                seq = 0
                while written + size < budget:
                    seq += 1
                    if fname in TELEMETRY:
                        line, t = TELEMETRY[fname](r, t, seq, h, hi)
                    elif storm:
                        t += 0.0005
                        line = "[%.6f] NVRM: Xid (PCI:0000:%s): 95, pid=%d, name=python, Uncontained: FBHUB. RST: Yes, D-RST: No\n" % (
                            t, gpu_bdfs[seq % 8][5:10], 4000 + seq % 97)
                    elif fname == "kern.log" and a.profile == "telemetry" and r.random() < 0.01:
                        t += r.random() * 0.01
                        if r.random() < 0.5:  # kernel edac_mc_handle_error (rate-limited on real nodes)
                            msg = "kernel: EDAC MC%d: 1 CE memory read error on CPU_SrcID#0_Ha#0_Chan#%d_DIMM#0 (channel:%d slot:0)" % (r.randrange(2), r.randrange(4), r.randrange(4))
                        else:  # arch/x86/kernel/cpu/mce/therm_throt.c
                            msg = "kernel: CPU%d: Core temperature above threshold, cpu clock throttled (total events = %d)" % (r.randrange(64), r.randrange(1, 9999))
                        line = "%s %s %s\n" % (syslog_ts(t), h, msg)
                    elif fname == "train.log" and a.profile == "telemetry" and not (t >= next_iter):
                        t += r.random() * 0.01
                        rank = hi * 8 + r.randrange(8)
                        tm = benign_app[r.randrange(len(benign_app))]
                        inner = app_fault(r, h, rank) if r.random() < a.fault_rate else (tm % (h, 1234, 5678, rank % 8))
                        line = "%s stdout F %s\n" % (cri_ts(t), inner)
                    elif fname == "kern.log":
                        t += r.random() * 0.01  # ~200 lines/s per file
                        if r.random() < a.fault_rate:
                            msg = "kernel: " + kern_fault(r, hi)
                        else:
                            tm = benign_kern[r.randrange(len(benign_kern))]
                            msg = tm % r.randrange(1, 99999) if "%d" in tm else tm
                        line = "%s %s %s\n" % (syslog_ts(t), h, msg)
                    elif t >= next_iter:
                        t += r.random() * 0.01
                        # One iteration line per iteration of the printing rank,
                        # at the pace the line reports.
                        it += 1
                        ms = 1000 + r.random() * 40
                        next_iter += ms / 1000.0
                        line = iso_ts(t) + (train_tmpl % (it, it * 1024, ms, r.randrange(10000))) + "\n"
                    else:
                        t += r.random() * 0.01
                        rank = hi * 8 + r.randrange(8)
                        x = r.random()
                        if x < a.fault_rate:
                            line = app_fault(r, h, rank) + "\n"
                        elif x < 0.55:
                            tm = benign_app[r.randrange(len(benign_app))]
                            line = (tm % (h, 1234, 5678, rank % 8)) + "\n"
                        else:
                            tm = chatter_app[r.randrange(len(chatter_app))]
                            n = tm.count("%")
                            if tm.startswith("%s"):
                                args = (iso_ts(t), rank, r.randrange(1, 99999))
                            elif tm.startswith("[rank"):
                                args = (rank, rank)
                            else:
                                args = (rank, r.randrange(1, 99999))
                            line = (tm % args[:n]) + "\n"
                    buf.append(line)
                    size += len(line)
                    if len(buf) >= 20000:
                        f.write("".join(buf))
                        written += size
                        buf, size = [], 0
                f.write("".join(buf))
                written += size
            total += written
    print("wrote %.1f MB in %d hosts to %s" % (total / 1048576.0, len(hosts), a.out))


if __name__ == "__main__":
    main()
