// Incident assembly and the bundle writer: per-host clocks, formats and their
// drift, missing logs, and the file layout of docs/interfaces.md §3.
#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <unordered_map>

#include "sim/scenarios.h"

namespace reflex::sim {

namespace {

bool mkdir_p(const std::string& path, std::string* err) {
  std::string cur;
  for (size_t i = 0; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      if (!cur.empty() && ::mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST) {
        *err = "cannot create directory '" + cur + "': " + std::strerror(errno);
        return false;
      }
    }
    if (i < path.size()) cur.push_back(path[i]);
  }
  return true;
}

bool write_file(const std::string& path, const std::string& data, std::string* err) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) {
    *err = "cannot write '" + path + "': " + std::strerror(errno);
    return false;
  }
  bool ok = std::fwrite(data.data(), 1, data.size(), f) == data.size();
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) *err = "short write to '" + path + "'";
  return ok;
}

// gzip with a fixed header (mtime 0): deterministic bytes.
bool write_gz(const std::string& path, const std::string& data, std::string* err) {
  z_stream zs{};
  if (deflateInit2(&zs, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    *err = "zlib init failed";
    return false;
  }
  std::string out;
  out.resize(deflateBound(&zs, data.size()) + 64);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) {
    *err = "zlib deflate failed";
    return false;
  }
  return write_file(path, out, err);
}

std::string jesc(const std::string& s) {
  std::string o;
  o.reserve(s.size() + 8);
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      o.push_back('\\');
      o.push_back(ch);
    } else if (c == '\n') {
      o += "\\n";
    } else if (c < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      o += b;
    } else {
      o.push_back(ch);
    }
  }
  return o;
}

// Fills \x01 / \x02 placeholders from the line's clock.
void expand(std::string& out, const std::string& text, bool timed, Us tc, int ns) {
  if (!timed) {
    out += text;
    return;
  }
  for (char ch : text) {
    if (ch == '\x01') {
      Civil c = civil(tc);
      char b[40];
      int n = std::snprintf(b, sizeof b, "%d%02d %02d:%02d:%02d.%06lld%03d", c.month, c.day, c.hour,
                            c.minute, c.second, static_cast<long long>(c.micros), ns % 1000);
      out.append(b, static_cast<size_t>(n));
    } else if (ch == '\x02') {
      Civil c = civil(tc);
      char b[32];
      int n = std::snprintf(b, sizeof b, "%04d-%02d-%02d %02d:%02d:%02d", c.year, c.month, c.day,
                            c.hour, c.minute, c.second);
      out.append(b, static_cast<size_t>(n));
    } else {
      out.push_back(ch);
    }
  }
}

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> v;
  size_t a = 0;
  while (true) {
    size_t b = s.find('\n', a);
    v.push_back(s.substr(a, b == std::string::npos ? std::string::npos : b - a));
    if (b == std::string::npos) break;
    a = b + 1;
  }
  return v;
}

HostProfile make_profile(const Cluster& c, const Job& j, int h, Rng& r, Us t0) {
  HostProfile p;
  p.kern = static_cast<HostProfile::Kern>(r.weighted({0.30, 0.15, 0.30, 0.20, 0.05}));
  p.app = static_cast<HostProfile::App>(r.weighted({0.45, 0.40, 0.15}));
  p.per_rank_files = p.app == HostProfile::kYmd && r.chance(0.3);
  p.thread_tag = p.kern == HostProfile::kDmesgRaw && r.chance(0.3);
  p.kern_gz = p.kern == HostProfile::kSyslog && r.chance(0.1);
  // Clock skew: N(0, 50 ms) with occasional outliers of seconds (§7.3).
  double sk = r.normal(0, 0.050);
  if (r.chance(0.03)) sk += (r.chance(0.5) ? 1 : -1) * r.uniform(1, 5);
  p.skew = static_cast<Us>(sk * 1e6);
  p.app_skew = p.skew + static_cast<Us>(r.normal(0, 0.002) * 1e6);
  p.boot = t0 + p.skew - static_cast<Us>(r.uniform(86400, 60 * 86400) * 1e6);
  const int pos = j.pos[static_cast<size_t>(h)];
  p.nccl_name = (pos >= 0 && r.chance(0.2)) ? j.id + "-worker-" + std::to_string(pos)
                                            : c.hosts[static_cast<size_t>(h)].name;
  p.pid_base = static_cast<int>(r.range(2000, 3900000));
  return p;
}

struct Out {
  std::map<std::string, std::string> files;
  bool boot_time = false;
};

// How one host writes its logs: its profile, name and clocks.
struct HostWriter {
  const Incident& I;
  int h;
  const HostProfile& p;
  const std::string& name;
  bool syslog_mono = false, rotate = false;
  Us rot_at = 0;
  int sel_id = 0;
  std::string* app_single = nullptr;

  Us clock(const Line& l) const { return l.t + (l.chan == kApp ? p.app_skew : p.skew); }

  // The kernel log's file: the format's name, a rotated syslog's older half in kern.log.1.
  std::string kern_file(Us tc) const {
    switch (p.kern) {
      case HostProfile::kDmesgRaw:
        return "dmesg.log";
      case HostProfile::kDmesgT:
        return "dmesg-T.log";
      case HostProfile::kDmesgIso:
        return "dmesg-iso.log";
      case HostProfile::kJournal:
        return "journal.json";
      default:
        return p.kern_gz ? "kern.log.gz" : (rotate && tc < rot_at ? "kern.log.1" : "kern.log");
    }
  }

  void kern(const Line& l, Us tc, Out& out) const {
    std::string& o = out.files[kern_file(tc)];
    const Us mono = tc - p.boot;
    if (p.kern == HostProfile::kJournal) {
      o += "{\"__REALTIME_TIMESTAMP\":\"" + std::to_string(tc) + "\",\"_HOSTNAME\":\"" + name +
           "\",\"_TRANSPORT\":\"kernel\",\"SYSLOG_IDENTIFIER\":\"kernel\",\"PRIORITY\":\"" +
           (l.text.find("Xid") != std::string::npos || l.text.find("rror") != std::string::npos
                ? "3"
                : "6") +
           "\",\"MESSAGE\":\"" + jesc(l.text) + "\"}\n";
      return;
    }
    auto parts = split_lines(l.text);
    std::string prefix;
    switch (p.kern) {
      case HostProfile::kDmesgRaw:
        append_mono(prefix, mono);
        if (p.thread_tag)
          prefix += " [ T" + std::to_string(1000 + static_cast<int>(l.seq % 97)) + "]";
        prefix += ' ';
        break;
      case HostProfile::kDmesgT:
        append_dmesg_T(prefix, tc);
        prefix += ' ';
        break;
      case HostProfile::kDmesgIso:
        append_dmesg_iso(prefix, tc);
        prefix += ' ';
        break;
      default:
        break;
    }
    for (size_t i = 0; i < parts.size(); ++i) {
      if (p.kern == HostProfile::kSyslog) {
        append_rfc3164(o, tc);
        o += ' ' + name + " kernel: ";
        if (syslog_mono) {
          append_mono(o, mono);
          o += ' ';
        }
      } else if (i == 0) {
        o += prefix;
      } else {
        o.append(prefix.size(), ' ');  // dmesg prints continuation lines indented
      }
      o += parts[i];
      o += '\n';
    }
  }

  void app(const Line& l, Us tc, int ns, Out& out) {
    std::string* o;
    if (p.per_rank_files) {
      if (l.lrank >= 0) {
        int rk = I.job.pos[static_cast<size_t>(h)] >= 0 ? I.job.rank(h, l.lrank) : l.lrank;
        o = &out.files["rank-" + std::to_string(rk) + ".log"];
      } else {
        o = &out.files["launcher.log"];
      }
    } else {
      if (!app_single) app_single = &out.files["train.log"];
      o = app_single;
    }
    std::string body;
    expand(body, l.text, l.timed, tc, ns);
    auto parts = split_lines(body);
    for (size_t i = 0; i < parts.size(); ++i) {
      if (p.app == HostProfile::kCri) {
        append_iso_ns(*o, tc, ns);
        *o += (l.lrank >= 0 ? " stderr F " : " stdout F ");
      } else if (p.app == HostProfile::kYmd && i == 0) {
        append_ymd(*o, tc);
        *o += ' ';
      }
      *o += parts[i];
      *o += '\n';
    }
  }

  // Fabric manager, BMC SEL, nvidia-smi, IB counters and pstore: one file each.
  void other(const Line& l, Us tc, Out& out) {
    switch (l.chan) {
      case kFm: {
        std::string& o = out.files["fabricmanager.log"];
        append_fm(o, tc);
        o += ' ' + l.text + '\n';
        break;
      }
      case kSel: {
        std::string& o = out.files["ipmi-sel.txt"];
        char b[16];
        std::snprintf(b, sizeof b, "%4x | ", sel_id++);
        o += b;
        append_sel(o, tc);
        o += " | " + l.text + '\n';
        break;
      }
      case kSmi: {
        std::string& o = out.files["nvidia-smi.csv"];
        if (l.text.rfind("timestamp,", 0) == 0) {
          if (o.empty()) o += l.text + '\n';
          break;
        }
        append_smi(o, tc);
        o += l.text + '\n';
        break;
      }
      case kCounters: {
        std::string& o = out.files["ib-counters.txt"];
        o += iso_us(tc) + ' ' + l.text + '\n';
        break;
      }
      case kPstore: {
        std::string& o = out.files["pstore-dmesg.txt"];
        if (o.empty()) o += "Panic#1 Part1\n";
        append_mono(o, tc - p.boot);
        o += ' ' + l.text + '\n';
        out.boot_time = true;
        break;
      }
      default:
        break;
    }
  }
};

void render_host(const Incident& I, int h, std::vector<Line>& lines, Rng& r, Out& out) {
  HostWriter w{I, h, I.prof[static_cast<size_t>(h)], I.c->hosts[static_cast<size_t>(h)].name};
  const HostProfile& p = w.p;
  const Us dead = I.dead_at[static_cast<size_t>(h)];
  const bool app_lost = I.app_lost[static_cast<size_t>(h)];
  // Drop what a dead host never wrote; keep BMC SEL and pstore (collected afterwards).
  lines.erase(std::remove_if(lines.begin(), lines.end(),
                             [&](const Line& l) {
                               if (l.chan == kSel || l.chan == kPstore) return false;
                               if (app_lost && l.chan == kApp) return true;
                               return l.t > dead;
                             }),
              lines.end());
  std::sort(lines.begin(), lines.end(), [&](const Line& a, const Line& b) {
    Us ta = w.clock(a), tb = w.clock(b);
    return ta != tb ? ta < tb : a.seq < b.seq;
  });
  w.syslog_mono = (h % 2) == 0;
  w.rotate = p.kern == HostProfile::kSyslog && !p.kern_gz && r.chance(0.15) && !lines.empty();
  w.rot_at = w.rotate ? w.clock(lines[lines.size() / 3]) : 0;
  w.sel_id = 0x1a0 + r.index(64);
  for (const Line& l : lines) {
    const Us tc = w.clock(l);
    const int ns = static_cast<int>(l.seq * 7919u % 1000u);
    if (l.chan == kKern)
      w.kern(l, tc, out);
    else if (l.chan == kApp)
      w.app(l, tc, ns, out);
    else
      w.other(l, tc, out);
  }
  if (p.kern == HostProfile::kDmesgRaw && out.files.count("dmesg.log")) out.boot_time = true;
}

std::string truth_json(const Truth& t, const std::string& scenario, uint64_t seed, int index) {
  std::string o = "{\n  \"root_cause\": {\"device\": \"" + jesc(t.device) + "\", \"fault_class\": ";
  o += t.fault_class.empty() ? std::string("null") : "\"" + jesc(t.fault_class) + "\"";
  o += "},\n  \"localizable\": " + std::string(t.localizable ? "true" : "false");
  if (t.false_alarm) o += ",\n  \"false_alarm\": true";
  o += ",\n  \"scenario\": \"" + jesc(scenario) + "\"";
  o += ",\n  \"t0\": \"" + iso_us(t.t0) + "\"";
  auto arr = [&](const std::vector<std::string>& v) {
    std::string a = "[";
    for (size_t i = 0; i < v.size(); ++i) a += (i ? ", \"" : "\"") + jesc(v[i]) + "\"";
    return a + "]";
  };
  o += ",\n  \"eviction_set\": " + arr(t.eviction);
  if (!t.accept.empty()) o += ",\n  \"accept\": " + arr(t.accept);
  if (!t.also.empty()) o += ",\n  \"also_acceptable\": " + arr(t.also);
  o += ",\n  \"chain\": \"" + jesc(t.chain) + "\"";
  o += ",\n  \"root_event\": \"" + jesc(t.root_event) + "\"";
  o += ",\n  \"regime\": \"" + jesc(t.regime) + "\"";
  o += ",\n  \"latent\": [";
  for (size_t i = 0; i < t.latent.size(); ++i)
    o += std::string(i ? ", " : "") + "{\"kind\": \"" + jesc(t.latent[i].kind) +
         "\", \"device\": \"" + jesc(t.latent[i].device) + "\"}";
  o += "]";
  o += ",\n  \"notes\": " + arr(t.notes);
  o += ",\n  \"generator\": {\"name\": \"reflex-sim\", \"seed\": " + std::to_string(seed) +
       ", \"index\": " + std::to_string(index) + "}";
  o += "\n}\n";
  return o;
}

const ScenarioDef* find_def(const std::string& name) {
  for (const auto& d : scenario_defs())
    if (d.info.name == name) return &d;
  return nullptr;
}

const HardDef* find_hard(const std::string& name) {
  for (const auto& d : hard_scenario_defs())
    if (d.def.info.name == name) return &d;
  for (const auto& d : hard_new_scenario_defs())
    if (d.def.info.name == name) return &d;
  return nullptr;
}

// The bundle of one incident: topology.json, truth.json, every host's files,
// the subnet manager's log and BMC SEL captures (hosts outside the topology).
bool write_bundle(const SimOptions& o, Cluster& c, int index, Incident& I, Rng& r,
                  std::string* err) {
  const std::string& scen = I.truth.scenario;
  const int H = static_cast<int>(c.hosts.size());
  char dname[32];
  std::snprintf(dname, sizeof dname, "incident-%04d", index);
  const std::string dir = o.out + "/" + dname;
  if (!mkdir_p(dir + "/hosts", err)) return false;
  if (!I.no_topology && !write_file(dir + "/topology.json", topology_json(c, I.job), err))
    return false;
  if (!write_file(dir + "/truth.json", truth_json(I.truth, scen, o.seed, index), err)) return false;
  for (int h = 0; h < H; ++h) {
    Rng hr(derive_seed(o.seed, static_cast<uint64_t>(index), 5000000 + static_cast<uint64_t>(h)));
    Ctx hx(I, hr);
    if (!I.paste) add_host_background(hx, h, o.noise_lines_per_host);
    Out out;
    render_host(I, h, I.host_lines[static_cast<size_t>(h)], hr, out);
    std::vector<Line>().swap(I.host_lines[static_cast<size_t>(h)]);
    bool any = false;
    for (auto& [f, data] : out.files) any = any || !data.empty();
    if (!any) continue;
    const std::string hd = dir + "/hosts/" + c.hosts[static_cast<size_t>(h)].name;
    if (!mkdir_p(hd, err)) return false;
    for (auto& [f, data] : out.files) {
      if (data.empty()) continue;
      bool ok = f.size() > 3 && f.compare(f.size() - 3, 3, ".gz") == 0
                    ? write_gz(hd + "/" + f, data, err)
                    : write_file(hd + "/" + f, data, err);
      if (!ok) return false;
    }
    if (out.boot_time &&
        !write_file(hd + "/boot_time", iso_us(I.prof[static_cast<size_t>(h)].boot) + "\n", err))
      return false;
  }
  if (!I.sm_lines.empty()) {
    std::sort(I.sm_lines.begin(), I.sm_lines.end(),
              [](const Line& a, const Line& b) { return a.t != b.t ? a.t < b.t : a.seq < b.seq; });
    std::string o2;
    const Us sm_skew = static_cast<Us>(r.normal(0, 0.05) * 1e6);
    for (const Line& l : I.sm_lines) {
      append_opensm(o2, l.t + sm_skew);
      o2 += " [7F1C2A3FE700] 0x02 -> " + l.text + '\n';
    }
    if (!mkdir_p(dir + "/hosts/sm-01", err)) return false;
    if (!write_file(dir + "/hosts/sm-01/opensm.log", o2, err)) return false;
  }
  for (auto& [name, sel] : I.bmc_sel) {
    std::string o3;
    const Us bmc_skew = static_cast<Us>(r.normal(0, 2.0) * 1e6);  // BMC clocks drift more
    int id = 0x1a0 + r.index(64);
    for (const Line& l : sel) {
      char b[16];
      std::snprintf(b, sizeof b, "%4x | ", id++);
      o3 += b;
      append_sel(o3, l.t + bmc_skew);
      o3 += " | " + l.text + '\n';
    }
    if (!mkdir_p(dir + "/hosts/" + name, err)) return false;
    if (!write_file(dir + "/hosts/" + name + "/ipmi-sel.txt", o3, err)) return false;
  }
  return true;
}

bool write_incident(const SimOptions& o, Cluster& c, int index, const ScenarioDef* def,
                    bool with_job, std::string* err) {
  const std::string& scen = def->info.name;
  Rng r(derive_seed(o.seed, static_cast<uint64_t>(index), 1));
  Incident I;
  I.c = &c;
  I.job = build_job(c, r, o.compact_ranks);
  if (!with_job) {  // a snippet: no job in the topology, no application logs
    I.job = Job{};
    I.job.pos.assign(c.hosts.size(), -1);
  }
  I.banner_per_host = o.hard;
  const int H = static_cast<int>(c.hosts.size());
  I.host_lines.resize(static_cast<size_t>(H));
  I.dead_at.assign(static_cast<size_t>(H), std::numeric_limits<Us>::max());
  I.app_lost.assign(static_cast<size_t>(H), 0);
  I.want_smi.assign(static_cast<size_t>(H), 0);
  I.want_counters.assign(static_cast<size_t>(H), 0);
  const Us t0 =
      to_us(2026, 1, 5, 0, 0, 0) + r.range(0, 300LL * 86400) * kSec + r.range(0, kSec - 1);
  I.torch_variant = r.index(4);
  I.nccl_variant = r.index(8);
  I.iter_style = r.index(2);
  I.step_s = r.uniform(2, 20);
  I.timeout_ms = r.chance(0.7) ? 600000 : 1800000;
  static const std::vector<std::string> kNccl = {"2.18.6", "2.19.3", "2.20.5", "2.21.5", "2.23.4"};
  I.nccl_version = r.pick(kNccl);
  I.smi_all = r.chance(0.2);
  I.counters_all = r.chance(0.2);
  I.prof.resize(static_cast<size_t>(H));
  for (int h = 0; h < H; ++h) {
    Rng hr(derive_seed(o.seed, static_cast<uint64_t>(index), 1000 + static_cast<uint64_t>(h)));
    I.prof[static_cast<size_t>(h)] = make_profile(c, I.job, h, hr, t0);
  }
  if (scen == "nvlink5_fatal")
    for (int h = 0; h < H; ++h)
      c.hosts[static_cast<size_t>(h)].nvl_domain = strf("nvl-%03d", h / 9 + 1);
  const bool launch = scen == "nccl_mismatch";  // hard templates set their own window
  I.t_start = launch ? t0 - static_cast<Us>(r.uniform(5, 60) * 1e6)
                     : t0 - static_cast<Us>(r.uniform(900, 5400) * 1e6);
  I.t_end = t0 + static_cast<Us>(r.uniform(300, 1200) * 1e6);
  I.truth.scenario = scen;
  Ctx x(I, r);
  def->run(x, t0);
  // No training before a launch failure (hard templates say so by their regime).
  if (I.truth.regime.find("slow") == std::string::npos && !launch &&
      !(o.hard && I.truth.regime == "launch") && !I.paste)
    x.training(I.t_start, t0, 0, 1.0);
  Us last = t0;
  for (const auto& v : I.host_lines)
    for (const auto& l : v) last = std::max(last, l.t);
  I.t_end = std::max(I.t_end, last + static_cast<Us>(r.uniform(5, 60) * 1e6));
  if (I.truth.regime.find("slow") != std::string::npos) I.t_end = std::max(I.t_end, last);
  int root_host = -1;
  {
    const std::string hn = I.truth.device.substr(0, I.truth.device.find('/'));
    for (int h = 0; h < H; ++h)
      if (c.hosts[static_cast<size_t>(h)].name == hn) root_host = h;
  }
  if (!I.paste) {
    add_incident_noise(x, root_host);
    add_latent_faults(x, root_host);
  }
  // A host whose log shipping is broken: "not observable" is not "no errors" (§7.3).
  if (!I.paste && r.chance(0.08) && I.job.hosts.size() > 2) {
    int h = I.job.hosts[static_cast<size_t>(r.index(I.job.hosts.size()))];
    if (h != root_host) {
      I.app_lost[static_cast<size_t>(h)] = 1;
      I.truth.notes.push_back("application log of " + c.hosts[static_cast<size_t>(h)].name +
                              " not collected");
    }
  }
  if (!write_bundle(o, c, index, I, r, err)) return false;
  if (scen == "nvlink5_fatal")
    for (auto& hh : c.hosts) hh.nvl_domain.clear();
  return true;
}

// Hard mode: every incident on a cluster of its own, with a host count drawn
// within the family's range (and --hosts), its own GPU-NIC pairing and noise
// volume; formats and clocks are drawn per host as always.
bool generate_hard(const SimOptions& o, const std::vector<std::string>& plan, std::string* err,
                   const Progress& progress) {
  static const int kSizes[] = {2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64};
  for (int i = 0; i < o.count; ++i) {
    const int index = o.first_index + i;
    const HardDef* hd = find_hard(plan[static_cast<size_t>(i)]);
    Rng r(derive_seed(o.seed, static_cast<uint64_t>(index), 7));
    const int hi = std::min(hd->max_hosts, o.hosts);
    std::vector<int> sizes;
    for (int n : kSizes)
      if (n >= hd->min_hosts && n <= hi) sizes.push_back(n);
    SimOptions oi = o;
    oi.hosts = sizes.empty() ? std::max(hd->min_hosts, std::min(hi, hd->max_hosts)) : r.pick(sizes);
    oi.pairing_2_2 = oi.gpus_per_host % 2 == 0 && r.chance(0.3);
    oi.noise_lines_per_host = static_cast<int>(o.noise_lines_per_host * r.uniform(0.25, 2.0));
    Cluster c = build_cluster(oi, derive_seed(o.seed, static_cast<uint64_t>(index), 8));
    if (!write_incident(oi, c, index, &hd->def, hd->job, err)) return false;
    if (progress) progress(i + 1, o.count);
  }
  return true;
}

}  // namespace

const std::vector<ScenarioInfo>& scenarios() {
  static const std::vector<ScenarioInfo> k = [] {
    std::vector<ScenarioInfo> v;
    for (const auto& d : scenario_defs()) v.push_back(d.info);
    return v;
  }();
  return k;
}

const std::vector<ScenarioInfo>& hard_scenarios() {
  static const std::vector<ScenarioInfo> k = [] {
    std::vector<ScenarioInfo> v;
    for (const auto& d : hard_scenario_defs()) v.push_back(d.def.info);
    return v;
  }();
  return k;
}

std::vector<ScenarioInfo> hard_scenarios(const std::string& families) {
  std::vector<ScenarioInfo> v;
  if (families != "new")
    for (const auto& d : hard_scenario_defs()) v.push_back(d.def.info);
  if (families == "new" || families == "all")
    for (const auto& d : hard_new_scenario_defs()) v.push_back(d.def.info);
  return v;
}

std::vector<std::string> plan_scenarios(const SimOptions& o, std::string* error) {
  std::vector<std::string> names;
  std::vector<double> w;
  if (o.scenarios.empty()) {
    if (o.hard && o.families != "default" && o.families != "new" && o.families != "all") {
      if (error) *error = "--families must be default, new or all";
      return {};
    }
    for (const auto& d : o.hard ? hard_scenarios(o.families) : scenarios()) {
      names.push_back(d.name);
      w.push_back(d.weight);
    }
  } else {
    for (const auto& s : o.scenarios) {
      if (o.hard ? !find_hard(s) : !find_def(s)) {
        if (error)
          *error = "unknown " + std::string(o.hard ? "hard-mode " : "") + "scenario '" + s +
                   "' (see --list-scenarios" + (o.hard ? " --hard)" : ")");
        return {};
      }
      if (std::find(names.begin(), names.end(), s) == names.end()) {
        names.push_back(s);
        w.push_back(1.0);
      }
    }
  }
  Rng r(derive_seed(o.seed, 0x5ce5ce));
  std::vector<std::string> plan;
  const int K = o.count;
  if (!o.stratified) {
    for (int i = 0; i < K; ++i) plan.push_back(names[static_cast<size_t>(r.weighted(w))]);
    return plan;
  }
  // Stratified: counts follow the mix (largest remainder), every scenario at
  // least once when K allows, then a seeded shuffle.
  double W = 0;
  for (double x : w) W += x;
  const size_t n = names.size();
  std::vector<int> cnt(n, 0);
  std::vector<double> rem(n, 0);
  int used = 0;
  for (size_t i = 0; i < n; ++i) {
    double e = K * w[i] / W;
    cnt[i] = static_cast<int>(e);
    rem[i] = e - cnt[i];
    used += cnt[i];
  }
  if (K >= static_cast<int>(n))
    for (size_t i = 0; i < n; ++i)
      if (cnt[i] == 0) {
        cnt[i] = 1;
        ++used;
        rem[i] = -1;
      }
  while (used > K) {  // take back from the largest
    size_t j = static_cast<size_t>(std::max_element(cnt.begin(), cnt.end()) - cnt.begin());
    --cnt[j];
    --used;
  }
  while (used < K) {
    size_t j = static_cast<size_t>(std::max_element(rem.begin(), rem.end()) - rem.begin());
    ++cnt[j];
    rem[j] = -1;
    ++used;
  }
  for (size_t i = 0; i < n; ++i)
    for (int k = 0; k < cnt[i]; ++k) plan.push_back(names[i]);
  r.shuffle(plan);
  return plan;
}

bool generate(const SimOptions& o, std::string* error, const Progress& progress) {
  std::string dummy;
  std::string* err = error ? error : &dummy;
  if (o.count < 1) return *err = "--count must be at least 1", false;
  if (o.hosts < 2 || o.hosts > 100000) return *err = "--hosts must be between 2 and 100000", false;
  if (o.gpus_per_host < 1 || o.gpus_per_host > 8)
    return *err = "--gpus-per-host must be between 1 and 8", false;
  if (o.pairing_2_2 && o.gpus_per_host % 2)
    return *err = "--pairing 2:2 needs an even --gpus-per-host", false;
  if (o.noise_lines_per_host < 0) return *err = "--noise-lines-per-host must be >= 0", false;
  if (o.out.empty()) return *err = "--out is required", false;
  std::vector<std::string> plan = plan_scenarios(o, err);
  if (plan.empty()) return false;
  if (!mkdir_p(o.out, err)) return false;
  if (o.hard) return generate_hard(o, plan, err, progress);
  Cluster c = build_cluster(o, o.seed);
  for (int i = 0; i < o.count; ++i) {
    if (!write_incident(o, c, o.first_index + i, find_def(plan[static_cast<size_t>(i)]), true, err))
      return false;
    if (progress) progress(i + 1, o.count);
  }
  return true;
}

}  // namespace reflex::sim
