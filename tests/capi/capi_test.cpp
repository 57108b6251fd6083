// C API tests: error codes and messages, poll/callback delivery, reload, and
// several threads using one engine at once. The KB is a hand-built test KB
// saved as an artifact (so these tests do not depend on .rfx sources).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "../engine/test_util.h"
#include "reflex/artifact.h"
#include "reflex/reflex.h"

using namespace rt;
namespace fs = std::filesystem;

namespace {

struct Fixture : ::testing::Test {
  fs::path dir;
  std::string kb_path, topo_path;
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("reflex-capi-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
           "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir);
    KbBuilder b;
    b.sig("t_pcie_fatal", DeviceKind::pcie_port, "pcie", Severity::critical);
    b.sig("t_gpu_off_bus", DeviceKind::gpu, "gpu_fallen_off_bus", Severity::critical);
    b.sig("t_watchdog", DeviceKind::rank, "", Severity::major, SymptomKind::hang);
    b.sig("t_noise", DeviceKind::host);
    b.rule("t_pcie_fatal", "t_gpu_off_bus", {W("effect", Relation::below, "cause")}, 0, 30, 0.9);
    b.rule("t_gpu_off_bus", "t_watchdog", {W("effect", Relation::same_job, "cause")}, 0, 1800, 0.8,
           5);
    b.kb.artifact.format_version = kArtifactFormatVersion;  // what the compiler records
    b.kb.artifact.compiler_version = engine_version();
    kb_path = (dir / "test.rfxkb").string();
    std::string err;
    ASSERT_TRUE(save_artifact(b.kb, kb_path, &err)) << err;
    topo_path = (dir / "topology.json").string();
    std::ofstream(topo_path) << topo_json(2, {{"job-1", {0, 1}}});
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

std::string event_line(const std::string& name, const std::string& device, const std::string& host,
                       double t, const std::string& clock) {
  nlohmann::json j;
  j["event"] = name;
  j["device"] = device;
  j["host"] = host;
  j["ts"] = format_time_us(at(t));
  j["clock"] = clock;
  j["evidence"] = "hosts/" + host + "/x.log:1";
  j["line"] = "line";
  return j.dump();
}

void feed(reflex_engine* e, const std::string& s) {
  ASSERT_EQ(reflex_feed_event_json(e, s.data(), s.size()), REFLEX_OK) << reflex_last_error();
}

void incident(reflex_engine* e) {
  feed(e, event_line("t_pcie_fatal", pcie(1, 2), "node-1", 100, "node-1/kernel"));
  feed(e, event_line("t_gpu_off_bus", gpu(1, 2), "node-1", 100.4, "node-1/kernel"));
  for (int r = 0; r < 16; ++r)
    feed(e, event_line("t_watchdog", rank("job-1", r), "node-" + std::to_string(r / 8), 700,
                       "node-" + std::to_string(r / 8) + "/app"));
}

}  // namespace

TEST_F(Fixture, ErrorsHaveCodesAndMessages) {
  reflex_engine* e = nullptr;
  EXPECT_EQ(reflex_engine_open((dir / "missing").c_str(), topo_path.c_str(), nullptr, &e),
            REFLEX_ERR_KB);
  EXPECT_EQ(e, nullptr);
  EXPECT_NE(std::string(reflex_last_error()).find("missing"), std::string::npos);
  std::ofstream((dir / "bad.json").string()) << "{\"hosts\": [";
  EXPECT_EQ(reflex_engine_open(kb_path.c_str(), (dir / "bad.json").c_str(), nullptr, &e),
            REFLEX_ERR_TOPOLOGY);
  EXPECT_NE(std::string(reflex_last_error()), "");
  EXPECT_EQ(reflex_engine_open(kb_path.c_str(), topo_path.c_str(), nullptr, nullptr),
            REFLEX_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(reflex_feed_envelope(nullptr, "x", 1), REFLEX_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(reflex_flush(nullptr), REFLEX_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(reflex_status_name(REFLEX_ERR_KB), "knowledge base error");
  ASSERT_EQ(reflex_engine_open(kb_path.c_str(), topo_path.c_str(), nullptr, &e), REFLEX_OK)
      << reflex_last_error();
  EXPECT_STREQ(reflex_last_error(), "");
  EXPECT_EQ(reflex_feed_event_json(e, "{nope", 5), REFLEX_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(reflex_feed_line(e, "node-0", "carrier-pigeon", "x", 1), REFLEX_ERR_INVALID_ARGUMENT);
  reflex_engine_close(e);
  reflex_engine_close(nullptr);  // harmless
}

TEST_F(Fixture, PollDeliversEachDiagnosisOnce) {
  reflex_engine* e = nullptr;
  ASSERT_EQ(reflex_engine_open(kb_path.c_str(), topo_path.c_str(), nullptr, &e), REFLEX_OK);
  incident(e);
  char* json = nullptr;
  ASSERT_EQ(reflex_poll(e, &json), REFLEX_OK);
  EXPECT_EQ(json, nullptr);  // still settling
  ASSERT_EQ(reflex_flush(e), REFLEX_OK);
  ASSERT_EQ(reflex_poll(e, &json), REFLEX_OK);
  ASSERT_NE(json, nullptr);
  auto j = nlohmann::json::parse(json);
  reflex_free(json);
  EXPECT_EQ(j["root_causes"][0]["device"], pcie(1, 2));
  ASSERT_EQ(reflex_poll(e, &json), REFLEX_OK);
  EXPECT_EQ(json, nullptr);
  char* all = nullptr;
  ASSERT_EQ(reflex_diagnose_all(e, &all), REFLEX_OK);
  EXPECT_EQ(nlohmann::json::parse(all)["root_causes"][0]["device"], pcie(1, 2));
  reflex_free(all);
  reflex_engine_close(e);
}

TEST_F(Fixture, FailedReloadKeepsTheOldKnowledgeBase) {
  reflex_engine* e = nullptr;
  ASSERT_EQ(reflex_engine_open(kb_path.c_str(), topo_path.c_str(), nullptr, &e), REFLEX_OK);
  EXPECT_EQ(reflex_reload(e, (dir / "gone.rfxkb").c_str(), nullptr), REFLEX_ERR_KB);
  EXPECT_NE(std::string(reflex_last_error()).find("gone.rfxkb"), std::string::npos);
  EXPECT_EQ(reflex_reload(e, nullptr, (dir / "gone.json").c_str()), REFLEX_ERR_TOPOLOGY);
  EXPECT_EQ(reflex_reload(e, kb_path.c_str(), topo_path.c_str()), REFLEX_OK) << reflex_last_error();
  incident(e);
  char* all = nullptr;
  ASSERT_EQ(reflex_diagnose_all(e, &all), REFLEX_OK);
  EXPECT_EQ(nlohmann::json::parse(all)["root_causes"][0]["device"], pcie(1, 2));
  reflex_free(all);
  char* st = nullptr;
  ASSERT_EQ(reflex_stats_json(e, &st), REFLEX_OK);
  auto sj = nlohmann::json::parse(st);
  reflex_free(st);
  EXPECT_EQ(sj["reloads"], 1);
  reflex_engine_close(e);
}

// Several threads feed, tick, poll, swap callbacks and reload one engine at
// once; every event is counted and every diagnosis is delivered exactly once.
TEST_F(Fixture, OneEngineFromManyThreads) {
  reflex_engine* e = nullptr;
  reflex_options o = {30.0, -1.0, 0};
  ASSERT_EQ(reflex_engine_open(kb_path.c_str(), topo_path.c_str(), &o, &e), REFLEX_OK);
  std::atomic<int> via_callback{0}, via_poll{0}, errors{0};
  reflex_diagnosis_fn cb = [](const char* json, void* user) {
    if (json && *json == '{') ++*static_cast<std::atomic<int>*>(user);
  };
  constexpr int kThreads = 4, kPerThread = 400;
  std::vector<std::thread> th;
  for (int k = 0; k < kThreads; ++k)
    th.emplace_back([&, k] {
      // Each thread is its own job's incident on its own host half.
      for (int i = 0; i < kPerThread; ++i) {
        std::string h = "node-" + std::to_string(k % 2);
        std::string s = event_line("t_noise", h, h, 10 + k * 5000 + i * 0.5, h + "/kernel");
        if (reflex_feed_event_json(e, s.data(), s.size()) != REFLEX_OK) ++errors;
        if (i % 50 == 0 && reflex_tick(e) != REFLEX_OK) ++errors;
        if (i % 97 == 0) {
          char* j = nullptr;
          if (reflex_poll(e, &j) != REFLEX_OK) ++errors;
          if (j) {
            ++via_poll;
            reflex_free(j);
          }
        }
      }
      std::string w =
          event_line("t_watchdog", rank("job-1", k), "node-0", 500 + k * 5000, "node-0/app");
      if (reflex_feed_event_json(e, w.data(), w.size()) != REFLEX_OK) ++errors;
    });
  th.emplace_back([&] {
    for (int i = 0; i < 20; ++i) {
      if (reflex_set_callback(e, i % 2 ? cb : nullptr, &via_callback) != REFLEX_OK) ++errors;
      if (i % 5 == 0 && reflex_reload(e, kb_path.c_str(), nullptr) != REFLEX_OK) ++errors;
      char* st = nullptr;
      if (reflex_stats_json(e, &st) != REFLEX_OK) ++errors;
      reflex_free(st);
    }
  });
  for (auto& t : th) t.join();
  ASSERT_EQ(reflex_set_callback(e, nullptr, nullptr), REFLEX_OK);
  ASSERT_EQ(reflex_flush(e), REFLEX_OK);
  char* j = nullptr;
  while (reflex_poll(e, &j) == REFLEX_OK && j) {
    ++via_poll;
    reflex_free(j);
  }
  EXPECT_EQ(errors.load(), 0);
  char* st = nullptr;
  ASSERT_EQ(reflex_stats_json(e, &st), REFLEX_OK);
  auto sj = nlohmann::json::parse(st);
  reflex_free(st);
  EXPECT_EQ(sj["events"], kThreads * kPerThread + kThreads);
  EXPECT_EQ(sj["symptoms"], kThreads);
  // Four incidents far apart in time (more than incident_gap_s): each emitted
  // exactly once, one way or the other.
  EXPECT_EQ(via_callback.load() + via_poll.load(), sj["diagnoses_emitted"].get<int>());
  EXPECT_EQ(sj["diagnoses_emitted"], kThreads);
  reflex_engine_close(e);
}
