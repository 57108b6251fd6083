// Helpers for engine tests: small hand-built knowledge bases, generated
// topologies and events. Names here are test vocabulary, not the shipped KB's.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "reflex/engine.h"
#include "reflex/event.h"
#include "reflex/kb.h"
#include "reflex/topology.h"

namespace rt {

using namespace reflex;

inline TimeUs T0() {
  static TimeUs t = *parse_rfc3339("2026-03-05T10:00:00Z");
  return t;
}
inline TimeUs at(double s) {
  return T0() + static_cast<TimeUs>(s * 1e6);
}

struct KbBuilder {
  KnowledgeBase kb;
  int line = 1;
  KbBuilder() {
    for (const char* c : {"gpu_hw", "gpu_memory", "gpu_fallen_off_bus", "nvlink", "pcie", "nic",
                          "host_kernel", "thermal_power", "user_code"})
      kb.classes.push_back({c, "", "", {}});
  }
  Signature& sig(const std::string& name, DeviceKind kind, const std::string& cls = "",
                 Severity sev = Severity::major, SymptomKind sym = SymptomKind::none) {
    Signature s;
    s.name = name;
    s.kind = kind;
    s.fault_class = cls;
    s.severity = sev;
    s.symptom = sym;
    s.loc = {"test/kb.rfx", line++, 1};
    s.action = cls.empty() ? "" : "inspect {device} on {host}";
    kb.signatures.push_back(s);
    return kb.signatures.back();
  }
  Rule& rule(const std::string& cause, const std::string& effect,
             std::vector<RelationConstraint> where, double min_s, double max_s,
             double strength = 0.9, double skew = 0) {
    Rule r;
    r.name = cause + "_to_" + effect + "_" + std::to_string(line);
    r.loc = {"test/kb.rfx", line++, 1};
    r.cause = cause;
    r.effect = effect;
    r.where = std::move(where);
    r.min_s = min_s;
    r.max_s = max_s;
    r.strength = strength;
    r.skew_s = skew;
    kb.rules.push_back(r);
    return kb.rules.back();
  }
  Latent& latent(const std::string& name, DeviceKind kind, const std::string& cls, bool silent) {
    Latent l;
    l.name = name;
    l.kind = kind;
    l.fault_class = cls;
    l.silent = silent;
    l.severity = Severity::critical;
    l.action = "check BMC of {host}";
    l.loc = {"test/kb.rfx", line++, 1};
    kb.latents.push_back(l);
    return kb.latents.back();
  }
};

inline RelationConstraint W(const std::string& lhs, Relation rel, const std::string& rhs) {
  auto ref = [](const std::string& s) {
    DeviceRef r;
    auto dot = s.find('.');
    std::string side = s.substr(0, dot);
    r.side = side == "cause" ? DeviceRef::Side::cause : DeviceRef::Side::effect;
    if (dot != std::string::npos) r.binding = s.substr(dot + 1);
    return r;
  };
  return {ref(lhs), rel, ref(rhs)};
}

// hosts node-0..n-1, 8 GPUs each behind their own PCIe switch with a paired NIC.
// jobs: list of (job id, host indices).
inline std::string topo_json(int hosts, std::vector<std::pair<std::string, std::vector<int>>> jobs,
                             bool nvl_domain = false, bool minimal = false) {
  std::string s = "{\"cluster\":\"test\",\"hosts\":[";
  for (int h = 0; h < hosts; ++h) {
    if (h) s += ",";
    char buf[256];
    s += "{\"name\":\"node-" + std::to_string(h) + "\"";
    if (!minimal) {
      std::snprintf(buf, sizeof buf, ",\"ip\":\"10.1.0.%d\"", h);
      s += buf;
    }
    if (nvl_domain) s += ",\"nvl_domain\":\"nvl0\"";
    s += ",\"gpus\":[";
    for (int g = 0; g < 8; ++g) {
      if (g) s += ",";
      if (minimal) {
        std::snprintf(buf, sizeof buf, "{\"index\":%d}", g);
      } else {
        std::snprintf(buf, sizeof buf,
                      "{\"index\":%d,\"bdf\":\"0000:%02x:00.0\",\"pcie_switch\":\"sw%d\","
                      "\"nics\":[\"mlx5_%d\"]}",
                      g, 0x11 + g * 0x10, g, g);
      }
      s += buf;
    }
    s += "]";
    if (!minimal) {
      s += ",\"nics\":[";
      for (int g = 0; g < 8; ++g) {
        if (g) s += ",";
        std::snprintf(buf, sizeof buf,
                      "{\"name\":\"mlx5_%d\",\"bdf\":\"0000:%02x:00.0\",\"ip\":\"10.2.%d.%d\","
                      "\"pcie_switch\":\"sw%d\"}",
                      g, 0x12 + g * 0x10, h, g, g);
        s += buf;
      }
      s += "],\"pcie_switches\":[";
      for (int g = 0; g < 8; ++g) {
        if (g) s += ",";
        std::snprintf(buf, sizeof buf, "{\"id\":\"sw%d\",\"bdf\":\"0000:%02x:00.0\"}", g,
                      0x10 + g * 0x10);
        s += buf;
      }
      s += "]";
    }
    s += "}";
  }
  s += "],\"jobs\":[";
  for (size_t j = 0; j < jobs.size(); ++j) {
    if (j) s += ",";
    s += "{\"id\":\"" + jobs[j].first + "\",\"ranks\":{\"hosts\":[";
    for (size_t k = 0; k < jobs[j].second.size(); ++k) {
      if (k) s += ",";
      s += "\"node-" + std::to_string(jobs[j].second[k]) + "\"";
    }
    s += "],\"gpus_per_host\":8}}";
  }
  s += "]}";
  return s;
}

inline std::shared_ptr<const Topology> topo(const std::string& json) {
  TopologyError err;
  auto t = Topology::load_text(json, "test-topology.json", &err);
  EXPECT_TRUE(t) << err.str();
  return std::shared_ptr<const Topology>(std::move(t));
}

inline std::string pcie(int host, int g) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "node-%d/pcie/0000:%02x:00.0", host, 0x10 + g * 0x10);
  return buf;
}
inline std::string gpu(int host, int g) {
  return "node-" + std::to_string(host) + "/gpu" + std::to_string(g);
}
inline std::string nic(int host, int g) {
  return "node-" + std::to_string(host) + "/mlx5_" + std::to_string(g);
}
inline std::string rank(const std::string& job, int r) {
  return "job/" + job + "/rank" + std::to_string(r);
}

inline Event ev(const std::string& name, const std::string& device, DeviceKind kind,
                const std::string& host, std::optional<double> wall_s, const std::string& clock,
                std::optional<double> mono = std::nullopt) {
  static uint64_t seq = 0;
  Event e;
  e.name = name;
  e.device = device;
  e.kind = kind;
  e.host = host;
  if (wall_s) e.time.wall = at(*wall_s);
  e.time.mono = mono;
  e.time.clock = clock;
  e.evidence = "hosts/" + host + "/test.log:" + std::to_string(++seq);
  e.line = "test line " + name + " " + device;
  e.seq = seq;
  return e;
}

}  // namespace rt
