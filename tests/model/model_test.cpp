// The model's vocabularies, device ids, calendar and pattern dialect.
#include <gtest/gtest.h>

#include "reflex/device_id.h"
#include "reflex/pattern.h"
#include "reflex/time.h"
#include "reflex/vocabulary.h"

using namespace reflex;

struct IdCase {
  const char* id;
  bool valid;
  bool placeholder;
  DeviceKind kind;
  const char* host;
  const char* key;
};

class DeviceIdTest : public ::testing::TestWithParam<IdCase> {};

TEST_P(DeviceIdTest, Parses) {
  const IdCase& c = GetParam();
  DeviceIdView v = DeviceIdView::parse(c.id);
  EXPECT_EQ(v.valid, c.valid) << c.id;
  if (!c.valid) return;
  EXPECT_EQ(v.placeholder, c.placeholder) << c.id;
  EXPECT_EQ(v.kind, c.kind) << c.id;
  EXPECT_EQ(v.host, c.host) << c.id;
  EXPECT_EQ(v.key, c.key) << c.id;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, DeviceIdTest,
    ::testing::Values(IdCase{"node-1", true, false, DeviceKind::host, "node-1", ""},
                      IdCase{"node-1/gpu3", true, false, DeviceKind::gpu, "node-1", ""},
                      IdCase{"node-1/gpux", true, false, DeviceKind::nic, "node-1", ""},
                      IdCase{"node-1/mlx5_0", true, false, DeviceKind::nic, "node-1", ""},
                      IdCase{"node-1/eth0", true, false, DeviceKind::nic, "node-1", ""},
                      IdCase{"node-1/pcie/0000:5c:00.0", true, false, DeviceKind::pcie_port,
                             "node-1", "0000:5c:00.0"},
                      IdCase{"node-1/nvsw2", true, false, DeviceKind::nvswitch, "node-1", ""},
                      IdCase{"node-1/gpu@0000:18:00.0", true, true, DeviceKind::gpu, "node-1",
                             "0000:18:00.0"},
                      IdCase{"node-1/pcie@0000:18:00.0", true, true, DeviceKind::pcie_port,
                             "node-1", "0000:18:00.0"},
                      IdCase{"node-1/nvsw@3", true, true, DeviceKind::nvswitch, "node-1", "3"},
                      IdCase{"node-1/toaster@3", false, false, DeviceKind::host, "", ""},
                      IdCase{"fabric/leaf-3", true, false, DeviceKind::fabric_switch, "", ""},
                      IdCase{"fabric/", false, false, DeviceKind::host, "", ""},
                      IdCase{"storage/nfs-1", true, false, DeviceKind::storage, "", ""},
                      IdCase{"job/job-42", true, false, DeviceKind::job, "", ""},
                      IdCase{"job/job-42/rank7", true, false, DeviceKind::rank, "", ""},
                      IdCase{"job/job-42/rank@7", true, true, DeviceKind::rank, "", "7"},
                      IdCase{"job/job-42/rankx", false, false, DeviceKind::host, "", ""},
                      IdCase{"", false, false, DeviceKind::host, "", ""}),
    [](const ::testing::TestParamInfo<IdCase>& i) { return "case" + std::to_string(i.index); });

TEST(DeviceId, RankAndJob) {
  DeviceIdView v = DeviceIdView::parse("job/job-42/rank17");
  EXPECT_EQ(v.job, "job-42");
  EXPECT_EQ(v.rank, 17);
}

TEST(DeviceId, BuildersRoundTrip) {
  for (const DeviceKindInfo& k : kDeviceKinds) {
    if (!k.host_local && k.kind != DeviceKind::rank) continue;
    std::string id = placeholder_id("node-1", k.kind, "x");
    DeviceIdView v = DeviceIdView::parse(id);
    EXPECT_TRUE(v.valid && v.placeholder) << id;
    EXPECT_EQ(v.kind, k.kind) << id;
  }
  EXPECT_EQ(cluster_device_id(DeviceKind::fabric_switch, "leaf"), "fabric/leaf");
  EXPECT_EQ(DeviceIdView::parse(cluster_device_id(DeviceKind::storage, "s")).kind,
            DeviceKind::storage);
}

TEST(Vocabulary, KindsAndRelations) {
  EXPECT_STREQ(to_string(DeviceKind::pcie_port), "pcie_port");
  EXPECT_EQ(device_kind_from_string("pcie"), std::nullopt);  // an alias, not a language word
  EXPECT_EQ(device_kind_named("pcie", true), DeviceKind::pcie_port);
  for (const RelationInfo& r : kRelations)
    EXPECT_EQ(relation_from_string(std::string(r.name)), r.rel);
  EXPECT_TRUE(relation_allows(Relation::paired, DeviceKind::nic, DeviceKind::gpu));
  EXPECT_TRUE(relation_allows(Relation::paired, DeviceKind::gpu, DeviceKind::nic));
  EXPECT_FALSE(relation_allows(Relation::on, DeviceKind::host, DeviceKind::host));
  EXPECT_TRUE(relation_allows(Relation::on, DeviceKind::rank, DeviceKind::host));
  EXPECT_FALSE(relation_allows(Relation::same, DeviceKind::gpu, DeviceKind::nic));
  EXPECT_TRUE(relation_allows(Relation::same_job, DeviceKind::rank, DeviceKind::nvswitch));
  EXPECT_FALSE(relation_allows(Relation::same_job, DeviceKind::job, DeviceKind::rank));
}

TEST(Calendar, CivilRoundTrip) {
  for (TimeUs t : {TimeUs{0}, TimeUs{-1}, TimeUs{1772707862408271}, TimeUs{-86400000001},
                   TimeUs{951782400000000} /* 2000-02-29 */}) {
    CivilTime c = civil_from_time_us(t);
    EXPECT_EQ(civil_to_time_us(static_cast<int>(c.date.year), static_cast<int>(c.date.month),
                               static_cast<int>(c.date.day), c.hour, c.minute, c.second, c.micros),
              t);
  }
  EXPECT_EQ(civil_from_time_us(0).weekday, 4);  // a Thursday
  EXPECT_EQ(civil_from_time_us(-1).date.year, 1969);
  static_assert(days_from_civil(2000, 3, 1) - days_from_civil(2000, 2, 28) == 2);
}

TEST(Pattern, SameDialectEverywhere) {
  std::string err;
  EXPECT_TRUE(re2_pattern_ok(R"(Xid \(PCI:(?P<bdf>[0-9a-f:.]+)\))", &err));
  EXPECT_FALSE(re2_pattern_ok("(unclosed", &err));
  EXPECT_FALSE(err.empty());
  EXPECT_TRUE(hyperscan_pattern_ok(R"(NVRM: Xid \d+)", &err));
  EXPECT_EQ(pattern_capture_names("(?P<a>x)(?P<b>y)(z)"), (std::set<std::string>{"a", "b"}));
}
