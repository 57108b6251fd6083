// `reflex eval`: diagnose every bundle (a directory holding truth.json) under
// the given directories with the engine's library API, and score the answers
// against truth.json (docs/interfaces.md §3, §7):
//
//  - top-1 / top-3 device: the truth device is the first / among the first
//    three root causes (ids compared normalised: placeholder GPU ids by BDF,
//    PCI addresses lower case). A truth "accept" list adds accepted ids.
//  - localizable=false: correct when the diagnosis names no root cause, or its
//    first root cause is a device the truth accepts (e.g. job/<id>). These
//    bundles count in top-1/top-3/host with that rule; fault class is judged
//    on localizable bundles only.
//  - host: the host of the first root cause is the truth's host (ranks map to
//    their host; job, fabric and storage ids are their own "host").
//  - time to diagnosis: wall time per bundle of topology load + ingest +
//    diagnosis. The KB is loaded once; the per-bundle engine set-up (pattern
//    database compiled for that bundle's topology) is reported apart as
//    setup time, since a long-running `reflex watch` pays it once.
// When the engine finds several incidents in a bundle, the principal one is
// scored: the one `reflex diagnose` prints at the top of its document (the
// incident whose root accounts for the most job-level symptoms).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "reflex/compiler.h"
#include "reflex/device_id.h"
#include "reflex/diagnosis.h"
#include "reflex/engine.h"
#include "reflex/ingest.h"
#include "reflex/topology.h"
#include "reflex/vocabulary.h"

namespace reflex::cli {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct TruthRec {
  std::string device, fault_class, scenario;
  bool localizable = true;
  // Real incidents (tests/realworld, shared/realworld-dev): the source may not
  // name the device (only the class is scored), or may say nothing was faulty.
  bool device_known = true;
  bool false_alarm = false;
  std::vector<std::string> accept;
};

struct Pred {
  std::string device, fault_class;
  double score = 0;
  std::string confidence;  // high | medium | low, as the diagnosis said it
};

struct Result {
  std::string bundle;
  TruthRec truth;
  std::vector<Pred> pred;
  std::vector<std::string> eviction;
  double seconds = 0, setup = 0;
  bool error = false;
  std::string message;
  bool top1 = false, top3 = false, host = false, cls = false;
  bool device_scored = true;  // false: false alarm, or the source names no device
  bool no_eviction = false;   // false alarms: nothing was evicted
  std::string confusion;
};

std::optional<TruthRec> read_truth(const fs::path& p, std::string* err) {
  std::ifstream in(p);
  if (!in) {
    *err = "cannot read " + p.string();
    return std::nullopt;
  }
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    *err = p.string() + ": not a JSON object";
    return std::nullopt;
  }
  TruthRec t;
  const json& rc = j.value("root_cause", json::object());
  if (rc.is_object()) {
    if (rc.contains("device") && rc["device"].is_string())
      t.device = rc["device"].get<std::string>();
    if (rc.contains("fault_class") && rc["fault_class"].is_string())
      t.fault_class = rc["fault_class"].get<std::string>();
  }
  if (j.contains("localizable") && j["localizable"].is_boolean())
    t.localizable = j["localizable"].get<bool>();
  if (j.contains("scenario") && j["scenario"].is_string())
    t.scenario = j["scenario"].get<std::string>();
  for (const char* key : {"accept", "also_acceptable"})
    if (j.contains(key) && j[key].is_array())
      for (const auto& a : j[key])
        if (a.is_string()) t.accept.push_back(a.get<std::string>());
  if (j.contains("device_known") && j["device_known"].is_boolean())
    t.device_known = j["device_known"].get<bool>();
  if (j.contains("false_alarm") && j["false_alarm"].is_boolean())
    t.false_alarm = j["false_alarm"].get<bool>();
  if (t.false_alarm) {
    // Nothing was faulty: correct when nothing is evicted (scored apart).
    t.localizable = false;
    t.device_known = false;
    if (t.scenario.empty()) t.scenario = "(false alarm)";
  }
  if (t.scenario.empty()) t.scenario = t.fault_class.empty() ? "(unlabelled)" : t.fault_class;
  if (t.device.empty() && t.localizable) {
    *err = p.string() + ": root_cause.device missing";
    return std::nullopt;
  }
  return t;
}

void find_bundles(const fs::path& root, std::vector<fs::path>* out) {
  std::error_code ec;
  if (fs::exists(root / "truth.json", ec)) {
    out->push_back(root);
    return;  // a bundle's hosts/ are not searched for more bundles
  }
  std::vector<fs::path> subs;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_directory(ec)) subs.push_back(it->path());
  std::sort(subs.begin(), subs.end());
  for (const auto& s : subs) find_bundles(s, out);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Same device written differently: placeholder GPU ids resolve by BDF; PCI
// addresses compare lower case.
std::string normalize(const std::string& dev, const Topology* topo) {
  const DeviceIdView id = DeviceIdView::parse(dev);
  if (!id.valid) return dev;
  if (id.placeholder && id.kind == DeviceKind::gpu && topo) {
    if (auto d = topo->device_by_bdf(std::string(id.host), id.key); d && !d->placeholder)
      return d->id;
  }
  if (!id.placeholder && id.kind == DeviceKind::pcie_port)
    return std::string(id.host) + "/" + std::string(kind_info(DeviceKind::pcie_port).id_prefix) +
           lower(std::string(id.key));
  return dev;
}

// Ranks map to their host; job, fabric and storage ids are their own "host".
std::string host_of(const std::string& dev, const Topology* topo) {
  const DeviceIdView id = DeviceIdView::parse(dev);
  if (!id.host.empty()) return std::string(id.host);
  if (id.kind == DeviceKind::rank && id.rank >= 0 && topo) {
    if (auto d = topo->rank(id.job, id.rank); d && !d->host.empty()) return d->host;
  }
  return dev;
}

// The kind as placeholder ids spell it ("gpu", "pcie", "fabric"); "device" when
// the id does not parse.
const char* kind_of(const std::string& dev) {
  const DeviceIdView id = DeviceIdView::parse(dev);
  return id.valid ? kind_info(id.kind).short_name.data() : "device";
}

void score(Result& r, const Topology* topo) {
  const TruthRec& t = r.truth;
  auto accepted = [&](const std::string& dev) {
    std::string d = normalize(dev, topo);
    if (t.localizable && d == normalize(t.device, topo)) return true;
    for (const auto& a : t.accept)
      if (d == normalize(a, topo)) return true;
    return false;
  };
  r.device_scored = !t.false_alarm && (t.device_known || !t.localizable);
  if (t.false_alarm) {
    r.no_eviction = !r.error && r.eviction.empty();
    r.top1 = r.top3 = r.host = r.cls = r.no_eviction;
  } else if (!t.localizable) {
    r.top1 = r.pred.empty() || accepted(r.pred[0].device);
    r.top3 = r.top1;
    for (size_t i = 0; i < r.pred.size() && i < 3; ++i)
      r.top3 = r.top3 || accepted(r.pred[i].device);
    r.host = r.top1;
    r.cls = r.top1;
  } else if (!r.pred.empty()) {
    r.top1 = accepted(r.pred[0].device);
    for (size_t i = 0; i < r.pred.size() && i < 3; ++i)
      r.top3 = r.top3 || accepted(r.pred[i].device);
    r.host = r.top1 || host_of(normalize(r.pred[0].device, topo), topo) == host_of(t.device, topo);
    r.cls = r.pred[0].fault_class == t.fault_class;
  }
  if (r.error) {
    r.confusion = "error";
  } else if (t.false_alarm) {
    if (!r.no_eviction) r.confusion = "evicted " + r.eviction.front();
  } else if (!r.device_scored ? !r.cls : !r.top1) {
    if (r.pred.empty()) {
      r.confusion = "no root cause";
    } else {
      const Pred& p = r.pred[0];
      std::string where = !t.localizable ? "named a device"
                          : host_of(normalize(p.device, topo), topo) == host_of(t.device, topo)
                              ? "same host"
                              : "other host";
      r.confusion = (p.fault_class.empty() ? std::string("?") : p.fault_class) + " " +
                    kind_of(p.device) + " (" + where + ")";
    }
  }
}

double pct(size_t a, size_t b) {
  return b ? 100.0 * static_cast<double>(a) / static_cast<double>(b) : 0.0;
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

struct Group {
  // Device figures count bundles whose device is scored (dev_n); class figures
  // localizable ones (cls_n); false alarms count apart (fa_n, fa_ok).
  size_t n = 0, dev_n = 0, top1 = 0, top3 = 0, host = 0, cls = 0, cls_n = 0, errors = 0;
  size_t fa_n = 0, fa_ok = 0;
  std::vector<double> secs;
  std::map<std::string, size_t> conf;
  void add(const Result& r) {
    ++n;
    if (r.truth.false_alarm) {
      ++fa_n;
      fa_ok += r.no_eviction;
    }
    if (r.device_scored) {
      ++dev_n;
      top1 += r.top1;
      top3 += r.top3;
      host += r.host;
    }
    if (r.truth.localizable) {
      ++cls_n;
      cls += r.cls;
    }
    errors += r.error;
    secs.push_back(r.seconds);
    if (!r.confusion.empty()) ++conf[r.confusion];
  }
  std::vector<std::pair<std::string, size_t>> top_conf(size_t k) const {
    std::vector<std::pair<std::string, size_t>> v(conf.begin(), conf.end());
    std::stable_sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.second > b.second; });
    if (v.size() > k) v.resize(k);
    return v;
  }
  json to_json(const std::string& key, const std::string& name) const {
    json j = {{key, name},
              {"n", n},
              {"n_device_scored", dev_n},
              {"top1_device", dev_n ? json(pct(top1, dev_n)) : json(nullptr)},
              {"top3_device", dev_n ? json(pct(top3, dev_n)) : json(nullptr)},
              {"host", dev_n ? json(pct(host, dev_n)) : json(nullptr)},
              {"fault_class", cls_n ? json(pct(cls, cls_n)) : json(nullptr)},
              {"false_alarms", fa_n},
              {"false_alarms_no_eviction", fa_n ? json(pct(fa_ok, fa_n)) : json(nullptr)},
              {"errors", errors},
              {"p50_s", quantile(secs, 0.5)}};
    json c = json::array();
    for (auto& [k, v] : top_conf(5)) c.push_back({{"predicted", k}, {"count", v}});
    j["confusions"] = c;
    return j;
  }
};

// Figures below their floor, as "fault_class 80.0 < 85"; a figure with no
// bundles behind it (no class scored) is not judged.
std::vector<std::string> check_floors(const json& fl, const Group& all,
                                      const std::map<std::string, Group>& by_class) {
  std::vector<std::string> below;
  auto judge = [&](const std::string& what, const Group& g, const json& f) {
    if (!f.is_object()) return;
    for (auto it = f.begin(); it != f.end(); ++it) {
      if (!it.value().is_number()) continue;
      const double want = it.value().get<double>();
      std::optional<double> got;
      if (it.key() == "top1_device" && g.dev_n) got = pct(g.top1, g.dev_n);
      if (it.key() == "top3_device" && g.dev_n) got = pct(g.top3, g.dev_n);
      if (it.key() == "host" && g.dev_n) got = pct(g.host, g.dev_n);
      if (it.key() == "fault_class" && g.cls_n) got = pct(g.cls, g.cls_n);
      if (it.key() == "false_alarms_no_eviction" && g.fa_n) got = pct(g.fa_ok, g.fa_n);
      if (got && *got + 1e-9 < want) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "%s%s %.1f < %.1f", what.c_str(), it.key().c_str(), *got,
                      want);
        below.push_back(buf);
      }
    }
  };
  judge("", all, fl);
  if (fl.contains("by_fault_class") && fl["by_fault_class"].is_object())
    for (auto it = fl["by_fault_class"].begin(); it != fl["by_fault_class"].end(); ++it)
      if (auto g = by_class.find(it.key()); g != by_class.end())
        judge(it.key() + ": ", g->second, it.value());
  return below;
}

int report_floors(const std::vector<std::string>& below) {
  for (const auto& b : below) std::fprintf(stderr, "reflex eval: below floor: %s\n", b.c_str());
  return below.empty() ? 0 : 1;
}

// Every bundle under the given directories, sorted per directory; a message
// and exit code 2 when a directory is missing or holds none.
std::optional<int> collect_bundles(const std::vector<std::string>& dirs,
                                   std::vector<fs::path>* bundles) {
  for (const auto& d : dirs) {
    std::error_code ec;
    if (!fs::is_directory(d, ec)) {
      std::fprintf(stderr, "reflex eval: '%s' is not a directory\n", d.c_str());
      return 2;
    }
    find_bundles(d, bundles);
  }
  if (bundles->empty()) {
    std::fputs("reflex eval: no bundle (directory with truth.json) found\n", stderr);
    return 2;
  }
  return std::nullopt;
}

// The bundle's own topology.json (an empty topology when it has none) unless
// one topology is used for every bundle; a load error is the bundle's error.
std::shared_ptr<const Topology> bundle_topology(const fs::path& bundle,
                                                const std::shared_ptr<const Topology>& fixed,
                                                Result& r) {
  if (fixed) return fixed;
  std::error_code ec;
  // As `reflex diagnose`: a bundle whose topology declares no job is one job.
  if (!fs::exists(bundle / "topology.json", ec)) {
    auto t = Topology::empty();
    t->assume_one_job();
    return t;
  }
  TopologyError te;
  auto t = Topology::load_file((bundle / "topology.json").string(), &te);
  if (!t) {
    r.error = true;
    r.message = te.str();
    return t;
  }
  t->assume_one_job();
  return t;
}

// Diagnoses one bundle and scores the principal incident against its truth.
Result eval_bundle(const fs::path& bundle, TruthRec truth,
                   const std::shared_ptr<const KnowledgeBase>& kb,
                   const std::shared_ptr<const Topology>& fixed_topo) {
  Result r;
  r.bundle = bundle.string();
  r.truth = std::move(truth);
  const auto t0 = std::chrono::steady_clock::now();
  std::shared_ptr<const Topology> topo = bundle_topology(bundle, fixed_topo, r);
  if (!r.error) {
    const auto ts = std::chrono::steady_clock::now();
    Engine eng(kb, topo);
    r.setup = std::chrono::duration<double>(std::chrono::steady_clock::now() - ts).count();
    std::string berr;
    if (!eng.read_bundle(r.bundle, &berr)) {
      r.error = true;
      r.message = berr;
    } else {
      std::vector<Diagnosis> ds = eng.diagnose_all();
      if (!ds.empty())
        for (const auto& rc : ds.front().root_causes)
          r.pred.push_back({rc.device, rc.fault_class, rc.score, rc.confidence});
      for (const auto& d : ds)  // a false alarm must evict nothing in any incident
        r.eviction.insert(r.eviction.end(), d.eviction_set.begin(), d.eviction_set.end());
    }
  }
  r.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() - r.setup;
  score(r, topo.get());
  return r;
}

// The figures of a run: overall, per scenario, per fault class.
struct Summary {
  Group all;
  std::map<std::string, Group> by_scen, by_class;
  size_t unloc = 0, unloc_ok = 0, loc = 0, loc_top1 = 0;
  // Calibration: per confidence of the first root cause, bundles and how many
  // were right (the device where the truth names one, else the class).
  std::map<std::string, std::pair<size_t, size_t>> calibration;
  std::vector<double> setups;
  double total_s = 0;
};

Summary summarize(const std::vector<Result>& results, double total_s) {
  Summary s;
  s.total_s = total_s;
  for (const auto& r : results) {
    s.setups.push_back(r.setup);
    s.all.add(r);
    if (!r.truth.false_alarm && !r.error) {
      auto& c = s.calibration[r.pred.empty() ? std::string("(none)") : r.pred[0].confidence];
      ++c.first;
      c.second += r.device_scored ? r.top1 : r.cls;
    }
    s.by_scen[r.truth.scenario].add(r);
    s.by_class[r.truth.false_alarm   ? std::string("(false alarm)")
               : r.truth.localizable ? r.truth.fault_class
                                     : std::string("(not localizable)")]
        .add(r);
    if (r.truth.localizable) {
      if (r.device_scored) {
        ++s.loc;
        s.loc_top1 += r.top1;
      }
    } else if (!r.truth.false_alarm) {
      ++s.unloc;
      s.unloc_ok += r.top1;
    }
  }
  return s;
}

json result_json(const Result& r) {
  json p = json::array();
  for (size_t i = 0; i < r.pred.size() && i < 3; ++i)
    p.push_back({{"device", r.pred[i].device},
                 {"fault_class", r.pred[i].fault_class},
                 {"score", r.pred[i].score}});
  json o = {
      {"bundle", r.bundle},
      {"scenario", r.truth.scenario},
      {"truth",
       {{"device", r.truth.device},
        {"fault_class", r.truth.fault_class.empty() ? json(nullptr) : json(r.truth.fault_class)},
        {"localizable", r.truth.localizable}}},
      {"predicted", p},
      {"top1", r.top1},
      {"top3", r.top3},
      {"host", r.host},
      {"fault_class_ok", r.cls},
      {"seconds", r.seconds}};
  if (r.error) o["error"] = r.message;
  return o;
}

json eval_json(const std::string& kb_path, const std::vector<Result>& results, const Summary& s) {
  const Group& all = s.all;
  json j;
  j["kb"] = kb_path;
  j["bundles"] = results.size();
  j["errors"] = all.errors;
  j["accuracy"] = {
      {"top1_device", pct(all.top1, all.dev_n)},
      {"top3_device", pct(all.top3, all.dev_n)},
      {"host", pct(all.host, all.dev_n)},
      {"false_alarms_no_eviction", all.fa_n ? json(pct(all.fa_ok, all.fa_n)) : json(nullptr)},
      {"fault_class", pct(all.cls, all.cls_n)},
      {"top1_device_localizable", pct(s.loc_top1, s.loc)},
      {"localizable_false_handled", s.unloc ? json(pct(s.unloc_ok, s.unloc)) : json(nullptr)}};
  j["counts"] = {{"top1", all.top1},
                 {"top3", all.top3},
                 {"host", all.host},
                 {"fault_class", all.cls},
                 {"localizable", s.loc},
                 {"not_localizable", s.unloc},
                 {"not_localizable_handled", s.unloc_ok},
                 {"device_scored", all.dev_n},
                 {"false_alarms", all.fa_n},
                 {"false_alarms_no_eviction", all.fa_ok}};
  j["time_s"] = {{"p50", quantile(all.secs, 0.5)},
                 {"p99", quantile(all.secs, 0.99)},
                 {"max", quantile(all.secs, 1.0)},
                 {"total", s.total_s},
                 {"setup_p50", quantile(s.setups, 0.5)}};
  json bs = json::array(), bc = json::array(), rs = json::array();
  for (auto& [k, g] : s.by_scen) bs.push_back(g.to_json("scenario", k));
  for (auto& [k, g] : s.by_class) bc.push_back(g.to_json("class", k));
  for (const auto& r : results) rs.push_back(result_json(r));
  json cal = json::array();
  for (auto& [level, c] : s.calibration)
    cal.push_back({{"confidence", level},
                   {"n", c.first},
                   {"right", c.second},
                   {"share_right", pct(c.second, c.first)}});
  j["calibration"] = cal;
  j["by_scenario"] = bs;
  j["by_fault_class"] = bc;
  j["results"] = rs;
  return j;
}

// One table row: counts, figures, p50 time and the two most common misses.
void print_group_row(const std::string& name, const Group& g) {
  std::string conf;
  for (auto& [k, v] : g.top_conf(2))
    conf += (conf.empty() ? "" : "; ") + k + " x" + std::to_string(v);
  auto fig = [](size_t a, size_t b) {
    char buf[16];
    if (!b) return std::string("-");
    std::snprintf(buf, sizeof buf, "%.1f", pct(a, b));
    return std::string(buf);
  };
  std::printf("%-24s %4zu %6s %6s %6s %6s %7.3f  %s\n", name.c_str(), g.n,
              fig(g.top1, g.dev_n).c_str(), fig(g.top3, g.dev_n).c_str(),
              fig(g.host, g.dev_n).c_str(),
              g.cls_n  ? std::to_string(static_cast<int>(pct(g.cls, g.cls_n) + 0.5)).c_str()
              : g.fa_n ? (fig(g.fa_ok, g.fa_n) + "*").c_str()
                       : "-",
              quantile(g.secs, 0.5), conf.c_str());
}

void print_eval_text(const std::string& kb_path, const std::vector<Result>& results,
                     const Summary& s, bool details) {
  const Group& all = s.all;
  std::printf("reflex eval: %zu bundles, kb %s\n\n", results.size(), kb_path.c_str());
  std::printf("top-1 device      %6.1f%%  (%zu/%zu%s)\n", pct(all.top1, all.dev_n), all.top1,
              all.dev_n, all.dev_n < all.n ? " whose device is known" : "");
  std::printf("top-3 device      %6.1f%%\n", pct(all.top3, all.dev_n));
  std::printf("host              %6.1f%%\n", pct(all.host, all.dev_n));
  std::printf("fault class       %6.1f%%  (localizable bundles)\n", pct(all.cls, all.cls_n));
  if (s.unloc)
    std::printf("not localizable   %6.1f%%  handled (%zu/%zu)\n", pct(s.unloc_ok, s.unloc),
                s.unloc_ok, s.unloc);
  if (all.fa_n)
    std::printf("false alarms      %6.1f%%  nothing evicted (%zu/%zu)\n", pct(all.fa_ok, all.fa_n),
                all.fa_ok, all.fa_n);
  std::printf("errors            %zu\n", all.errors);
  std::printf(
      "time / bundle     p50 %.3f s, p99 %.3f s (+ engine set-up p50 %.3f s), total %.1f s\n\n",
      quantile(all.secs, 0.5), quantile(all.secs, 0.99), quantile(s.setups, 0.5), s.total_s);
  std::printf("%-24s %4s %6s\n", "confidence", "n", "right%");
  for (const char* level : {"high", "medium", "low", "(none)"}) {
    auto it = s.calibration.find(level);
    if (it == s.calibration.end()) continue;
    std::printf("%-24s %4zu %6.1f\n", level, it->second.first,
                pct(it->second.second, it->second.first));
  }
  std::puts("");
  std::printf("%-24s %4s %6s %6s %6s %6s %7s  %s\n", "scenario", "n", "top1%", "top3%", "host%",
              "class%", "p50 s", "most common misses");
  for (auto& [k, g] : s.by_scen) print_group_row(k, g);
  std::printf("\n%-24s %4s %6s %6s %6s %6s %7s  %s\n", "fault class", "n", "top1%", "top3%",
              "host%", "class%", "p50 s", "most common misses");
  for (auto& [k, g] : s.by_class) print_group_row(k, g);
  if (!details) return;
  std::puts("\nmisses:");
  for (const auto& r : results)
    if (!r.top1)
      std::printf(
          "  %s [%s] truth %s, got %s%s\n", r.bundle.c_str(), r.truth.scenario.c_str(),
          r.truth.localizable ? r.truth.device.c_str() : "(not localizable)",
          r.pred.empty() ? "(none)" : (r.pred[0].device + " " + r.pred[0].fault_class).c_str(),
          r.error ? (" error: " + r.message).c_str() : "");
}

// The KB, loaded once with its pattern database precompiled for every bundle.
std::shared_ptr<const KnowledgeBase> load_eval_kb(const std::string& kb_path) {
  std::string err;
  auto kb_opt = load_kb(kb_path, &err, KbParts{.tests = false, .examples = false});
  if (!kb_opt) {
    std::fprintf(stderr, "reflex eval: cannot load knowledge base '%s':\n%s\n", kb_path.c_str(),
                 err.c_str());
    return nullptr;
  }
  // One pattern database for every bundle's ingest, not one compile per bundle.
  std::string pc_err;
  (void)precompile_patterns(&*kb_opt, &pc_err);  // on failure each bundle compiles; same result
  return std::make_shared<const KnowledgeBase>(std::move(*kb_opt));
}

// Diagnoses and scores every bundle (a progress counter on a terminal);
// bundles whose truth.json cannot be read are skipped with a message.
std::vector<Result> eval_bundles(const std::vector<fs::path>& bundles,
                                 const std::shared_ptr<const KnowledgeBase>& kb,
                                 const std::shared_ptr<const Topology>& fixed_topo) {
  const bool tty = isatty(2);
  std::vector<Result> results;
  results.reserve(bundles.size());
  for (size_t i = 0; i < bundles.size(); ++i) {
    std::string terr;
    auto truth = read_truth(bundles[i] / "truth.json", &terr);
    if (!truth) {
      std::fprintf(stderr, "reflex eval: skipping %s\n", terr.c_str());
      continue;
    }
    results.push_back(eval_bundle(bundles[i], std::move(*truth), kb, fixed_topo));
    if (tty) std::fprintf(stderr, "\rreflex eval: %zu/%zu bundles", i + 1, bundles.size());
  }
  if (tty) std::fputc('\n', stderr);
  return results;
}

// Figures below the floors file's; exit code 2 (in *rc) when it does not read.
std::vector<std::string> floors_below(const std::string& floors_path, const Summary& s,
                                      std::optional<int>* rc) {
  if (floors_path.empty()) return {};
  std::ifstream fin(floors_path);
  json fl = json::parse(fin, nullptr, false);
  if (!fin || fl.is_discarded() || !fl.is_object()) {
    std::fprintf(stderr, "reflex eval: %s: not a JSON object of floors\n", floors_path.c_str());
    *rc = 2;
    return {};
  }
  return check_floors(fl, s.all, s.by_class);
}

}  // namespace

int run_eval(int argc, char** argv) {
  std::string kb_path, format = "text", topo_override;
  std::vector<std::string> dirs;
  bool from_bundle = false, details = false;
  CLI::App app{"Diagnose every bundle under DIR and score it against its truth.json",
               "reflex eval"};
  add_kb_option(app, &kb_path);
  app.add_option("--format", format, "json or text")->check(CLI::IsMember({"json", "text"}));
  app.add_option("--topology", topo_override, "use this topology for every bundle");
  app.add_flag("--topology-from-bundle", from_bundle,
               "each bundle's own topology.json (the default)");
  app.add_flag("--details", details, "text: list every bundle that missed");
  std::string floors_path;
  app.add_option("--floors", floors_path,
                 "JSON floors ({\"fault_class\": 85, \"top1_device\": 75, "
                 "\"false_alarms_no_eviction\": 100, \"by_fault_class\": {...}}): exit 1 when "
                 "a figure is below its floor");
  app.add_option("DIR", dirs, "directories holding bundles (any depth)")->required();
  if (auto rc = parse_or_exit(app, argc, argv, "reflex eval")) return *rc;
  if (from_bundle && !topo_override.empty()) {
    std::fputs("reflex eval: --topology and --topology-from-bundle exclude each other\n", stderr);
    return 2;
  }
  std::vector<fs::path> bundles;
  if (auto rc = collect_bundles(dirs, &bundles)) return *rc;
  if (!resolve_kb(&kb_path, "reflex eval")) return 2;
  auto kb = load_eval_kb(kb_path);
  if (!kb) return 2;
  std::shared_ptr<const Topology> fixed_topo;
  if (!topo_override.empty()) {
    TopologyError te;
    fixed_topo = Topology::load_file(topo_override, &te);
    if (!fixed_topo) {
      std::fprintf(stderr, "reflex eval: %s\n", te.str().c_str());
      return 2;
    }
  }
  const auto t_all = std::chrono::steady_clock::now();
  const std::vector<Result> results = eval_bundles(bundles, kb, fixed_topo);
  const Summary s = summarize(
      results, std::chrono::duration<double>(std::chrono::steady_clock::now() - t_all).count());
  std::optional<int> floors_rc;
  const std::vector<std::string> below = floors_below(floors_path, s, &floors_rc);
  if (floors_rc) return *floors_rc;
  if (format == "json") {
    json j = eval_json(kb_path, results, s);
    if (!floors_path.empty()) j["below_floor"] = below;
    std::puts(j.dump(2, ' ', false, json::error_handler_t::replace).c_str());
  } else {
    print_eval_text(kb_path, results, s, details);
  }
  return report_floors(below);
}

}  // namespace reflex::cli
