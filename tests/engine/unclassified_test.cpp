// Unclassified roots (runtime/engine/unclassified.cpp): when nothing recognized
// is a root, the lines only a KB `suspect` flagged lead, in the KB's order of
// its suspects, each with its family's class when the suspect gives one.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_util.h"
#include "unclassified.h"

using namespace rt;

namespace {

KbBuilder families() {
  KbBuilder b;
  b.kb.classes.push_back({"storage", "", "", {}});
  b.kb.classes.push_back({"user_code", "", "", {}});
  b.kb.classes.push_back({"local_disk", "storage", "", {}});
  b.sig("s_disk", DeviceKind::host, "local_disk").suspect = true;
  b.sig("s_generic", DeviceKind::host).suspect = true;
  b.sig("s_exception", DeviceKind::host, "user_code").suspect = true;
  return b;
}

UnrecognizedLine line(const std::string& suspect, const std::string& host, int n) {
  return {suspect, "hosts/" + host + "/log:" + std::to_string(n),
          suspect + " line " + std::to_string(n)};
}

std::vector<Diagnosis> run(const KnowledgeBase& kb, std::vector<UnrecognizedLine> samples) {
  IngestStats st;
  st.unrecognized_samples = std::move(samples);
  std::vector<Diagnosis> ds;
  reflex::engine::add_unclassified_roots(&ds, st, *Topology::empty(), kb);
  return ds;
}

TEST(Unclassified, TakesTheFamilysClassInTheKbsOrder) {
  KbBuilder b = families();
  // walk order: the exception first, the disk line last; the KB lists the disk first
  auto ds = run(b.kb, {line("s_exception", "node-1", 1), line("s_generic", "node-2", 2),
                       line("s_disk", "node-3", 3)});
  ASSERT_EQ(ds.size(), 1u);
  const auto& rc = ds[0].root_causes;
  ASSERT_EQ(rc.size(), 3u);
  EXPECT_EQ(rc[0].device, "node-3");
  EXPECT_EQ(rc[0].fault_class, "storage");  // the standard class above local_disk
  EXPECT_EQ(rc[0].subclass, "local_disk");
  EXPECT_EQ(rc[1].device, "node-2");
  EXPECT_EQ(rc[1].fault_class, "unclassified");  // a suspect without a class
  EXPECT_EQ(rc[2].device, "node-1");
  EXPECT_EQ(rc[2].fault_class, "user_code");
  for (const auto& r : rc) {
    EXPECT_EQ(r.confidence, "low");
    EXPECT_EQ(r.basis, "unclassified");
    ASSERT_EQ(r.chain.size(), 1u);
  }
  EXPECT_NE(rc[0].description.find("most likely storage"), std::string::npos) << rc[0].description;
}

TEST(Unclassified, NothingWhenARecognizedRootExists) {
  KbBuilder b = families();
  IngestStats st;
  st.unrecognized_samples = {line("s_disk", "node-3", 3)};
  std::vector<Diagnosis> ds(1);
  ds[0].root_causes.emplace_back();
  ds[0].root_causes[0].device = "node-9/gpu0";
  reflex::engine::add_unclassified_roots(&ds, st, *Topology::empty(), b.kb);
  ASSERT_EQ(ds[0].root_causes.size(), 1u);
  EXPECT_EQ(ds[0].root_causes[0].device, "node-9/gpu0");
}

TEST(Unclassified, ASuspectTheKbNoLongerHasIsUnclassifiedAndLast) {
  KbBuilder b = families();
  auto ds = run(b.kb, {line("s_gone", "node-1", 1), line("s_exception", "node-2", 2)});
  ASSERT_EQ(ds[0].root_causes.size(), 2u);
  EXPECT_EQ(ds[0].root_causes[0].fault_class, "user_code");
  EXPECT_EQ(ds[0].root_causes[1].fault_class, "unclassified");
}

}  // namespace
