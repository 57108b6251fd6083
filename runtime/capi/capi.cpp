// The C API (include/reflex/reflex.h) over reflex::Engine. Every entry point
// catches everything: no exception crosses into C.
#include "reflex/reflex.h"

#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <new>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "reflex/artifact.h"
#include "reflex/compiler.h"
#include "reflex/engine.h"
#include "reflex/topology.h"

// Hidden by default in this library (-fvisibility=hidden); this one is API.
__attribute__((visibility("default"))) std::shared_ptr<const reflex::KnowledgeBase>
reflex::load_kb_for_engine(const std::string& path, std::string* error) {
  std::optional<KnowledgeBase> kb =
      load_kb(path, error, KbParts{.tests = false, .examples = false});
  if (!kb || !validate_kb_for_engine(*kb, error)) return nullptr;
  return std::make_shared<const KnowledgeBase>(std::move(*kb));
}

struct reflex_engine {
  std::unique_ptr<reflex::Engine> eng;
  std::mutex cb_mu;  // guards fn/user against a concurrent reflex_set_callback
  reflex_diagnosis_fn fn = nullptr;
  void* user = nullptr;
  std::mutex poll_mu;               // guards pending
  std::deque<std::string> pending;  // drained from Engine::poll, handed out one by one
};

namespace {

thread_local std::string t_error;

reflex_status fail(reflex_status s, std::string msg) {
  t_error = std::move(msg);
  return s;
}

reflex_status ok() {
  t_error.clear();
  return REFLEX_OK;
}

char* dup(const std::string& s) {
  char* p = static_cast<char*>(std::malloc(s.size() + 1));
  if (!p) return nullptr;
  std::memcpy(p, s.data(), s.size());
  p[s.size()] = '\0';
  return p;
}

// Runs f() with every exception turned into a status.
template <class F>
reflex_status guard(F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return fail(REFLEX_ERR_NO_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return fail(REFLEX_ERR_INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    return fail(REFLEX_ERR_INTERNAL, "internal error");
  }
}

std::shared_ptr<const reflex::KnowledgeBase> load_kb_path(const char* path, std::string* err) {
  return reflex::load_kb_for_engine(path, err);
}

std::shared_ptr<const reflex::Topology> load_topo_path(const char* path, std::string* err) {
  if (!path) return std::shared_ptr<const reflex::Topology>(reflex::Topology::empty());
  reflex::TopologyError terr;
  auto t = reflex::Topology::load_file(path, &terr);
  if (!t) {
    *err = terr.str();
    return nullptr;
  }
  return std::shared_ptr<const reflex::Topology>(std::move(t));
}

}  // namespace

extern "C" {

const char* reflex_version(void) {
  return reflex::engine_version();
}

const char* reflex_status_name(reflex_status s) {
  switch (s) {
    case REFLEX_OK:
      return "ok";
    case REFLEX_ERR_INVALID_ARGUMENT:
      return "invalid argument";
    case REFLEX_ERR_KB:
      return "knowledge base error";
    case REFLEX_ERR_TOPOLOGY:
      return "topology error";
    case REFLEX_ERR_IO:
      return "i/o error";
    case REFLEX_ERR_NO_MEMORY:
      return "out of memory";
    case REFLEX_ERR_INTERNAL:
      return "internal error";
  }
  return "unknown status";
}

const char* reflex_last_error(void) {
  return t_error.c_str();
}

void reflex_free(void* p) {
  std::free(p);
}

reflex_status reflex_engine_open(const char* kb_path, const char* topology_path,
                                 const reflex_options* options, reflex_engine** out) {
  return guard([&]() -> reflex_status {
    if (!out) return fail(REFLEX_ERR_INVALID_ARGUMENT, "out is NULL");
    *out = nullptr;
    if (!kb_path) return fail(REFLEX_ERR_INVALID_ARGUMENT, "kb_path is NULL");
    reflex::EngineOptions o;
    if (options) {
      if (options->settle_s > 0) o.settle_s = options->settle_s;
      if (options->clock_skew_s >= 0) o.clock_skew_s = options->clock_skew_s;
      o.ingest.strict_transport = options->strict_transport != 0;
    }
    std::string err;
    auto kb = load_kb_path(kb_path, &err);
    if (!kb) return fail(REFLEX_ERR_KB, std::string(kb_path) + ": " + err);
    auto topo = load_topo_path(topology_path, &err);
    if (!topo) return fail(REFLEX_ERR_TOPOLOGY, err);
    auto e = std::make_unique<reflex_engine>();
    e->eng = std::make_unique<reflex::Engine>(kb, topo, o);
    *out = e.release();
    return ok();
  });
}

void reflex_engine_close(reflex_engine* e) {
  try {
    delete e;
  } catch (...) {
  }
}

reflex_status reflex_set_callback(reflex_engine* e, reflex_diagnosis_fn fn, void* user) {
  return guard([&]() -> reflex_status {
    if (!e) return fail(REFLEX_ERR_INVALID_ARGUMENT, "engine is NULL");
    {
      std::lock_guard<std::mutex> lk(e->cb_mu);
      e->fn = fn;
      e->user = user;
    }
    if (!fn) {
      e->eng->set_callback(nullptr);
    } else {
      e->eng->set_callback([e](const reflex::Diagnosis& d) {
        reflex_diagnosis_fn f;
        void* u;
        {
          std::lock_guard<std::mutex> lk(e->cb_mu);
          f = e->fn;
          u = e->user;
        }
        std::string j = reflex::diagnosis_to_json(d, -1);
        if (f) {
          f(j.c_str(), u);
          return;
        }
        // The callback was cleared after the engine chose this one: the
        // diagnosis goes to the poll queue, where it would have gone a
        // moment later (it was dropped: capi_test OneEngineFromManyThreads
        // lost one in ~1 run of 30-160).
        std::lock_guard<std::mutex> lk(e->poll_mu);
        e->pending.push_back(std::move(j));
      });
    }
    return ok();
  });
}

reflex_status reflex_poll(reflex_engine* e, char** json_out) {
  return guard([&]() -> reflex_status {
    if (!e || !json_out) return fail(REFLEX_ERR_INVALID_ARGUMENT, "NULL argument");
    *json_out = nullptr;
    std::lock_guard<std::mutex> lk(e->poll_mu);
    if (e->pending.empty())
      for (auto& d : e->eng->poll()) e->pending.push_back(reflex::diagnosis_to_json(d, -1));
    if (e->pending.empty()) return ok();
    *json_out = dup(e->pending.front());
    if (!*json_out) return fail(REFLEX_ERR_NO_MEMORY, "out of memory");
    e->pending.pop_front();
    return ok();
  });
}

reflex_status reflex_feed_envelope(reflex_engine* e, const char* line, size_t len) {
  return guard([&]() -> reflex_status {
    if (!e || (!line && len)) return fail(REFLEX_ERR_INVALID_ARGUMENT, "NULL argument");
    e->eng->feed_envelope(std::string_view(line ? line : "", len));
    return ok();
  });
}

reflex_status reflex_feed_line(reflex_engine* e, const char* host, const char* source,
                               const char* line, size_t len) {
  return guard([&]() -> reflex_status {
    if (!e || !host || !source || (!line && len))
      return fail(REFLEX_ERR_INVALID_ARGUMENT, "NULL argument");
    auto t = reflex::transport_from_string(source);
    if (!t)
      return fail(REFLEX_ERR_INVALID_ARGUMENT,
                  std::string("unknown source '") + source + "' (kernel, syslog, journal, app)");
    e->eng->feed_line(host, *t, std::string_view(line ? line : "", len), "capi", 0);
    return ok();
  });
}

reflex_status reflex_feed_event_json(reflex_engine* e, const char* json, size_t len) {
  return guard([&]() -> reflex_status {
    if (!e || !json) return fail(REFLEX_ERR_INVALID_ARGUMENT, "NULL argument");
    reflex::Event ev;
    std::string err;
    auto kb = e->eng->kb();
    auto topo = e->eng->topology();
    if (!reflex::event_from_json(std::string_view(json, len), *kb, *topo, &ev, &err))
      return fail(REFLEX_ERR_INVALID_ARGUMENT, "bad event line: " + err);
    e->eng->feed_event(std::move(ev));
    return ok();
  });
}

reflex_status reflex_read_bundle(reflex_engine* e, const char* dir) {
  return guard([&]() -> reflex_status {
    if (!e || !dir) return fail(REFLEX_ERR_INVALID_ARGUMENT, "NULL argument");
    std::string err;
    if (!e->eng->read_bundle(dir, &err)) return fail(REFLEX_ERR_IO, std::string(dir) + ": " + err);
    return ok();
  });
}

reflex_status reflex_tick(reflex_engine* e) {
  return guard([&]() -> reflex_status {
    if (!e) return fail(REFLEX_ERR_INVALID_ARGUMENT, "engine is NULL");
    e->eng->tick();
    return ok();
  });
}

reflex_status reflex_flush(reflex_engine* e) {
  return guard([&]() -> reflex_status {
    if (!e) return fail(REFLEX_ERR_INVALID_ARGUMENT, "engine is NULL");
    e->eng->flush();
    return ok();
  });
}

reflex_status reflex_diagnose_all(reflex_engine* e, char** json_out) {
  return guard([&]() -> reflex_status {
    if (!e || !json_out) return fail(REFLEX_ERR_INVALID_ARGUMENT, "NULL argument");
    *json_out = nullptr;
    std::string j = reflex::diagnoses_to_json(e->eng->diagnose_all(), -1);
    *json_out = dup(j);
    if (!*json_out) return fail(REFLEX_ERR_NO_MEMORY, "out of memory");
    return ok();
  });
}

reflex_status reflex_reload(reflex_engine* e, const char* kb_path, const char* topology_path) {
  return guard([&]() -> reflex_status {
    if (!e) return fail(REFLEX_ERR_INVALID_ARGUMENT, "engine is NULL");
    std::string err;
    std::shared_ptr<const reflex::KnowledgeBase> kb;
    std::shared_ptr<const reflex::Topology> topo;
    if (kb_path) {
      kb = load_kb_path(kb_path, &err);
      if (!kb) return fail(REFLEX_ERR_KB, std::string(kb_path) + ": " + err);
    }
    if (topology_path) {
      topo = load_topo_path(topology_path, &err);
      if (!topo) return fail(REFLEX_ERR_TOPOLOGY, err);
    }
    if (!e->eng->reload(kb, topo, &err)) return fail(REFLEX_ERR_KB, err);
    return ok();
  });
}

reflex_status reflex_stats_json(reflex_engine* e, char** json_out) {
  return guard([&]() -> reflex_status {
    if (!e || !json_out) return fail(REFLEX_ERR_INVALID_ARGUMENT, "NULL argument");
    *json_out = nullptr;
    reflex::EngineStats s = e->eng->stats();
    nlohmann::ordered_json j;
    j["events"] = s.events;
    j["symptoms"] = s.symptoms;
    j["incidents_opened"] = s.incidents_opened;
    j["open_incidents"] = s.open_incidents;
    j["diagnoses_emitted"] = s.diagnoses_emitted;
    j["revisions"] = s.revisions;
    j["reloads"] = s.reloads;
    j["failed_reloads"] = s.failed_reloads;
    j["dropped_events"] = s.dropped_events;
    j["lines"] = s.ingest.lines;
    j["matched_lines"] = s.ingest.matched_lines;
    j["skipped_lines"] = s.ingest.skipped_invalid_json + s.ingest.skipped_no_msg;
    j["unknown_hosts"] = s.ingest.unknown_hosts;
    *json_out = dup(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    if (!*json_out) return fail(REFLEX_ERR_NO_MEMORY, "out of memory");
    return ok();
  });
}

}  // extern "C"
