// Format table rows for syslog (RFC 3164, RFC 5424), journalctl -o json, and
// syslog lines quoted inside other tools' output.
#include <string>
#include <vector>

#include "format_rows.h"

namespace reflex::format_test {

// Syslog: RFC 3164 and RFC 5424.
std::vector<Row> syslog_rows() {
  std::vector<Row> v;
  {  // linux-pci list (real line): RFC 3164; the host field wins; the year from the bundle
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
  {  // the journal's "Feb 01 14:25:31 host kernel:" prefix; host by short name; zone-less
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
  {  // RFC 5424, facility kern (0) -> kernel (NVSentinel's AER line; invented framing)
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
  {  // journalctl -o json, kernel transport (gpud's fallen-off-the-bus line)
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

// Real captures as SREs paste them: lines inside other tools' output (alerts,
// launcher and kubectl prefixes), long uptimes.
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

}  // namespace reflex::format_test
