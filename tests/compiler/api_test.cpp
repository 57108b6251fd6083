// The library API: lowering, artifacts, load_kb.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "reflex/artifact.h"
#include "test_util.h"

namespace reflex {
namespace {

namespace fs = std::filesystem;
const std::string kGood = std::string(REFLEX_TESTDATA_DIR) + "/good";

TEST(Api, CompilesTheGoodUnit) {
  CompileResult r = compile({kGood}, CompileOptions{});
  ASSERT_TRUE(r.kb) << testing::dump(r);
  EXPECT_EQ(r.errors(), 0);
  EXPECT_EQ(r.warnings(), 0) << testing::dump(r);
  const KnowledgeBase& kb = *r.kb;
  EXPECT_EQ(kb.meta.name, "compiler-test");
  EXPECT_EQ(kb.meta.requires_engine, ">= 0.1.0");
  // Abstract signatures are flattened away; the child carries the parent's statements.
  EXPECT_EQ(kb.find_signature("xid_base"), nullptr);
  const Signature* x = kb.find_signature("xid79_fallen_off_bus");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->kind, DeviceKind::gpu);
  EXPECT_EQ(x->sources, kTransportKernel);
  ASSERT_EQ(x->patterns.size(), 1u);
  EXPECT_NE(x->patterns[0].find("NVRM: Xid"), std::string::npos);
  ASSERT_EQ(x->locators.size(), 1u);
  EXPECT_EQ(x->locators[0].field, "bdf");
  EXPECT_EQ(x->fault_class, "gpu_fallen_off_bus");
  ASSERT_TRUE(x->when);
  EXPECT_EQ(x->when->op, Condition::Op::eq);
  ASSERT_EQ(x->examples.size(), 1u);
  EXPECT_EQ(x->examples[0].expect.at("bdf"), "0000:06:00.0");
  EXPECT_EQ(x->near_misses.size(), 2u);
  EXPECT_EQ(x->near_misses[1].source, kTransportApp);
  EXPECT_EQ(kb.standard_class("gsp_firmware"), "gpu_hw");
  ASSERT_EQ(kb.rules.size(), 3u);
  const Rule* aer = nullptr;
  for (const auto& rule : kb.rules)
    if (rule.name == "aer_fatal_takes_gpu_off_bus") aer = &rule;
  ASSERT_NE(aer, nullptr);
  EXPECT_DOUBLE_EQ(aer->max_s, 30);
  EXPECT_DOUBLE_EQ(aer->skew_s, 2);
  EXPECT_DOUBLE_EQ(aer->strength, 0.9);
  ASSERT_EQ(aer->where.size(), 1u);
  EXPECT_EQ(aer->where[0].rel, Relation::below);
  EXPECT_EQ(aer->where[0].lhs.side, DeviceRef::Side::effect);
  ASSERT_EQ(kb.latents.size(), 1u);
  EXPECT_TRUE(kb.latents[0].silent);
  ASSERT_EQ(kb.tests.size(), 2u);
  const KbTest& t = kb.tests[0];
  EXPECT_TRUE(fs::exists(t.topology_path)) << t.topology_path;
  EXPECT_EQ(t.logs.size(), 2u);
  EXPECT_EQ(t.expects.size(), 2u);
  EXPECT_FALSE(kb.tests[1].topology_json.empty());
  EXPECT_EQ(kb.artifact.format_version, kArtifactFormatVersion);
  EXPECT_EQ(kb.artifact.source_hash.size(), 64u);
}

TEST(Api, OverrideReplacesStatements) {
  CompileResult r = testing::check_text(
      "reflex 1\nsignature s { on host match /^boom/ action \"a\" severity minor }\n"
      "override signature s { action \"page\" }\n"
      "signature t { on host match /^bang/ }\n"
      "rule r { s -> t within 0s .. 1m strength 0.5 }\n"
      "override rule r { strength 0.95 }\n");
  ASSERT_TRUE(r.kb) << testing::dump(r);
  EXPECT_EQ(r.kb->find_signature("s")->action, "page");
  EXPECT_EQ(r.kb->find_signature("s")->severity, Severity::minor);
  EXPECT_DOUBLE_EQ(r.kb->rules[0].strength, 0.95);
}

TEST(Api, ShorthandRuleMakesOneRulePerEffect) {
  CompileResult r = testing::check_text(
      "reflex 1\nsignature a { on gpu match /^A/ }\nsignature b { on gpu match /^B/ }\n"
      "signature c { on gpu match /^C/ }\nrule r { a -> b, c within 0s .. 1s }\n");
  ASSERT_TRUE(r.kb) << testing::dump(r);
  ASSERT_EQ(r.kb->rules.size(), 2u);
  EXPECT_EQ(r.kb->rules[0].effect, "b");
  EXPECT_EQ(r.kb->rules[1].effect, "c");
  EXPECT_NE(r.kb->rules[0].name, r.kb->rules[1].name);
}

TEST(Api, LoadKbFromSourcesAndArtifact) {
  std::string err;
  auto kb = load_kb(kGood, &err);
  ASSERT_TRUE(kb) << err;
  fs::path art = fs::temp_directory_path() / ("reflex_api_" + std::to_string(::getpid()) + ".kb");
  ASSERT_TRUE(save_artifact(*kb, art.string(), &err)) << err;
  auto again = load_kb(art.string(), &err);
  ASSERT_TRUE(again) << err;
  EXPECT_EQ(kb_to_cbor(*kb), kb_to_cbor(*again));
  fs::remove(art);
}

// A runtime that does not walk rules (reflex events) or run tests decodes
// the artifact without them: the rest is the same, and what is left out is
// still read past, so a damaged part is still refused.
TEST(Api, LoadArtifactLeavesOutTheRulesAndTheTestsWhenAsked) {
  std::string err;
  auto kb = load_kb(kGood, &err);
  ASSERT_TRUE(kb) << err;
  ASSERT_FALSE(kb->rules.empty());
  ASSERT_FALSE(kb->latents.empty());
  ASSERT_FALSE(kb->tests.empty());
  fs::path art = fs::temp_directory_path() / ("reflex_parts_" + std::to_string(::getpid()) + ".kb");
  ASSERT_TRUE(save_artifact(*kb, art.string(), &err)) << err;
  auto lean = load_kb(art.string(), &err, KbParts{.rules = false, .tests = false});
  ASSERT_TRUE(lean) << err;
  EXPECT_TRUE(lean->rules.empty());
  EXPECT_TRUE(lean->latents.empty());
  EXPECT_TRUE(lean->tests.empty());
  KnowledgeBase expect = *kb;
  expect.rules.clear();
  expect.latents.clear();
  expect.tests.clear();
  EXPECT_EQ(kb_to_cbor(expect), kb_to_cbor(*lean));
  auto no_tests = load_kb(art.string(), &err, KbParts{.tests = false});
  ASSERT_TRUE(no_tests) << err;
  EXPECT_EQ(no_tests->rules.size(), kb->rules.size());
  EXPECT_TRUE(no_tests->tests.empty());
  // Without the signatures' examples and near misses (the runtime's
  // commands): every other member of every signature is the same.
  auto no_examples = load_kb(art.string(), &err, KbParts{.tests = false, .examples = false});
  ASSERT_TRUE(no_examples) << err;
  size_t had_examples = 0;
  for (const Signature& sig : kb->signatures) had_examples += !sig.examples.empty();
  EXPECT_GT(had_examples, 0u);
  KnowledgeBase bare = *kb;
  bare.tests.clear();
  for (Signature& sig : bare.signatures) {
    sig.examples.clear();
    sig.near_misses.clear();
  }
  EXPECT_EQ(kb_to_cbor(bare), kb_to_cbor(*no_examples));
  // Truncated inside the skipped tests (the last member): refused all the same.
  std::vector<uint8_t> bytes = kb_to_cbor(*kb);
  bytes.resize(bytes.size() - 3);
  EXPECT_FALSE(kb_from_cbor(bytes, &err, KbParts{.rules = false, .tests = false}));
  fs::remove(art);
}

// The artifact's members are found by a structure scan before any is
// decoded (model/cbor_members.h): the matcher database comes out whole,
// and a damaged or hostile document is refused in every part, kept or
// skipped, without reading past its end or recursing without bound.
TEST(Api, ArtifactDecoderTakesTheMatcherDatabaseInPlaceAndRefusesDamage) {
  std::string err;
  auto kb = load_kb(kGood, &err);
  ASSERT_TRUE(kb) << err;
  kb->matcher_cache.key = "reflex-matcher-2 test";
  kb->matcher_cache.data.resize(70000);
  for (size_t i = 0; i < kb->matcher_cache.data.size(); ++i)
    kb->matcher_cache.data[i] = static_cast<uint8_t>(i * 7);
  const std::vector<uint8_t> good = kb_to_cbor(*kb);
  auto back = kb_from_cbor(good, &err);
  ASSERT_TRUE(back) << err;
  EXPECT_EQ(back->matcher_cache.key, kb->matcher_cache.key);
  EXPECT_EQ(back->matcher_cache.data, kb->matcher_cache.data);
  EXPECT_EQ(kb_to_cbor(*back), good);
  auto lean = kb_from_cbor(good, &err, KbParts{.rules = false, .tests = false});
  ASSERT_TRUE(lean) << err;
  EXPECT_EQ(lean->matcher_cache.data, kb->matcher_cache.data);

  // The same document with an indefinite-length top-level map still loads.
  std::vector<uint8_t> indef = good;
  ASSERT_EQ(indef[0] >> 5, 5);  // a definite map of a few members
  ASSERT_LT(indef[0] & 31, 24);
  indef[0] = 0xbf;
  indef.push_back(0xff);
  auto from_indef = kb_from_cbor(indef, &err);
  ASSERT_TRUE(from_indef) << err;
  EXPECT_EQ(kb_to_cbor(*from_indef), good);

  auto refused = [&](std::vector<uint8_t> bytes, const char* what) {
    for (KbParts parts : {KbParts{}, KbParts{.rules = false, .tests = false},
                          KbParts{.tests = false, .examples = false}})
      EXPECT_FALSE(kb_from_cbor(bytes, &err, parts)) << what;
  };
  for (size_t cut : {size_t{1}, size_t{2}, good.size() / 2, good.size() - 1})
    refused(std::vector<uint8_t>(good.begin(), good.begin() + static_cast<long>(cut)), "truncated");
  std::vector<uint8_t> trailing = good;
  trailing.push_back(0);
  refused(trailing, "trailing byte");
  // {"tests": [[[[...]]]]}: 100 levels in a member that is skipped or kept.
  std::vector<uint8_t> deep = {0xa1, 0x65, 't', 'e', 's', 't', 's'};
  deep.insert(deep.end(), 100, 0x81);
  deep.push_back(0x00);
  refused(deep, "nested 100 deep");
  // {"rules": array of 2^63 items}: a count beyond the bytes there are.
  refused(
      {0xa1, 0x65, 'r', 'u', 'l', 'e', 's', 0x9b, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
      "huge count");
  refused({0xa1, 0x65, 't', 'e', 's', 't', 's', 0x5f, 0x41, 'a'}, "unclosed indefinite bytes");
  refused({0xa1, 0x65, 't', 'e', 's', 't', 's', 0x5f, 0x61, 'a', 0xff}, "text chunk in bytes");
  refused({0xa1, 0x65, 't', 'e', 's', 't', 's', 0xbf, 0x00, 0xff}, "odd indefinite map");
  refused({0xa1, 0x65, 't', 'e', 's', 't', 's', 0xff}, "a lone break");
  refused({0xa1, 0x01, 0x02}, "a key that is not text");
  refused({0xa1, 0x65, 't', 'e', 's', 't', 's', 0x1c}, "reserved additional info");
  refused({0x81, 0x00}, "not a map");
}

TEST(Api, NaturesAreLoweredWithTheirEvictionFlag) {
  CompileResult r = testing::check_text(
      "reflex 1\nnature hw \"a device\" evicts\nnature app \"user code\"\n"
      "nature evicts\n");  // `evicts` is a name too
  ASSERT_TRUE(r.kb) << testing::dump(r);
  const KnowledgeBase& kb = *r.kb;
  ASSERT_EQ(kb.natures.size(), 3u);
  EXPECT_EQ(kb.natures[0].name, "hw");  // declaration order
  EXPECT_EQ(kb.natures[0].description, "a device");
  EXPECT_TRUE(kb.natures[0].evicts);
  EXPECT_FALSE(kb.natures[1].evicts);
  EXPECT_EQ(kb.natures[2].name, "evicts");
  EXPECT_TRUE(kb.nature_evicts("hw"));
  EXPECT_FALSE(kb.nature_evicts("app"));
  EXPECT_TRUE(kb.nature_evicts(""));  // a root without a nature is a device at fault
  // ... and survive the artifact.
  auto back = kb_from_cbor(kb_to_cbor(kb), nullptr);
  ASSERT_TRUE(back);
  ASSERT_EQ(back->natures.size(), 3u);
  EXPECT_FALSE(back->nature_evicts("app"));
}

TEST(Api, LoadKbReportsDiagnostics) {
  std::string err;
  EXPECT_FALSE(load_kb(std::string(REFLEX_GOLDEN_DIR) + "/E012_unknown_event.rfx", &err));
  EXPECT_NE(err.find("error[E012]"), std::string::npos) << err;
  EXPECT_FALSE(load_kb("/nonexistent/kb", &err));
  EXPECT_NE(err.find("no such file"), std::string::npos) << err;
}

TEST(Api, LoadKbRefusesNewerEngineRequirement) {
  fs::path dir = fs::temp_directory_path() / ("reflex_api_req_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // Built from sources that require a newer engine: refused at compile time (E050)...
  std::ofstream(dir / "kb.rfx") << "reflex 1\nknowledge_base \"k\" requires engine \">= 99.0\"\n";
  std::string err;
  EXPECT_FALSE(load_kb((dir / "kb.rfx").string(), &err));
  EXPECT_NE(err.find("E050"), std::string::npos) << err;
  // ...and an artifact carrying the requirement is refused at load time.
  KnowledgeBase kb;
  kb.artifact.format_version = kArtifactFormatVersion;
  kb.meta.requires_engine = ">= 99.0.0";
  ASSERT_TRUE(save_artifact(kb, (dir / "kb.rfxkb").string(), &err)) << err;
  EXPECT_FALSE(load_kb((dir / "kb.rfxkb").string(), &err));
  EXPECT_NE(err.find("99.0.0"), std::string::npos) << err;
  fs::remove_all(dir);
}

TEST(Api, ImportsAreRelativeToTheImportingFile) {
  fs::path dir = fs::temp_directory_path() / ("reflex_api_imp_" + std::to_string(::getpid()));
  fs::create_directories(dir / "site");
  fs::create_directories(dir / "lib");
  std::ofstream(dir / "lib" / "classes.rfx") << "reflex 1\nclass gpu_hw \"G\"\n";
  std::ofstream(dir / "site" / "site.rfx")
      << "reflex 1\nimport \"../lib/classes.rfx\"\nlatent l { on host class gpu_hw }\n";
  CompileResult r = compile({(dir / "site").string()}, CompileOptions{});
  ASSERT_TRUE(r.kb) << testing::dump(r);
  EXPECT_EQ(r.files.size(), 2u);
  EXPECT_EQ(r.warnings(), 0) << testing::dump(r);
  fs::remove_all(dir);
}

TEST(Api, GraphRenderings) {
  auto kb = load_kb(kGood, nullptr);
  ASSERT_TRUE(kb);
  std::string dot = causal_graph_dot(*kb);
  EXPECT_NE(dot.find("\"pcie_aer_fatal\" -> \"xid79_fallen_off_bus\""), std::string::npos) << dot;
  std::string js = causal_graph_json(*kb);
  EXPECT_NE(js.find("\"edges\""), std::string::npos);
}

}  // namespace
}  // namespace reflex
