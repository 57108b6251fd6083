// Relations of docs/language.md §3 over the two_hosts.json fixture: one table
// row per (relation, a, b, expected), then related_devices() checked against
// related() for every relation.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "reflex/topology.h"

namespace reflex {
namespace {

const std::string kData = REFLEX_TOPOLOGY_TEST_DATA;
const std::string A = "node-0017.cluster.local";  // hosts of the fixture
const std::string B = "node-0018";
const std::string C = "node-0019";

const Topology& topo() {
  static std::unique_ptr<Topology> t = [] {
    TopologyError err;
    auto p = Topology::load_file(kData + "/two_hosts.json", &err);
    if (!p) ADD_FAILURE() << err.str();
    return p;
  }();
  return *t;
}

struct RelCase {
  Relation rel;
  std::string a, b;
  bool want;
};

std::string case_name(const RelCase& c) {
  return std::string(to_string(c.rel)) + ": " + c.a + " ~ " + c.b;
}

void PrintTo(const RelCase& c, std::ostream* os) {
  *os << case_name(c);
}

class Relations : public ::testing::TestWithParam<RelCase> {};

TEST_P(Relations, Holds) {
  const RelCase& c = GetParam();
  EXPECT_EQ(topo().related(c.rel, c.a, c.b), c.want) << case_name(c);
}

const RelCase kCases[] = {
    // same
    {Relation::same, A + "/gpu0", A + "/gpu0", true},
    {Relation::same, A + "/gpu0", B + "/gpu0", false},
    {Relation::same, A + "/gpu@0000:77:00.0", A + "/gpu@0000:77:00.0", true},
    // same_host
    {Relation::same_host, A + "/gpu0", A + "/mlx5_2", true},
    {Relation::same_host, A + "/pcie/0000:16:01.0", A + "/nvsw0", true},
    {Relation::same_host, A, A + "/gpu3", true},
    {Relation::same_host, A + "/gpu0", B + "/gpu0", false},
    {Relation::same_host, "job/job-42/rank0", A + "/gpu0", false},      // ranks are not host-local
    {Relation::same_host, A + "/gpu@0000:77:00.0", A + "/gpu3", true},  // placeholder: by host
    {Relation::same_host, A + "/gpu@0000:77:00.0", B + "/gpu0", false},
    {Relation::same_host, "sm-01/nic@mlx5_0", "sm-01", true},  // unknown host
    // on
    {Relation::on, A + "/gpu3", A, true},
    {Relation::on, A + "/gpu3", B, false},
    {Relation::on, A + "/mlx5_0", A, true},
    {Relation::on, A + "/pcie/sw2", A, true},
    {Relation::on, A + "/nvsw1", A, true},
    {Relation::on, "job/job-42/rank2", B, true},
    {Relation::on, "job/job-42/rank2", A, false},
    {Relation::on, A, A, false},
    {Relation::on, A + "/gpu@0000:77:00.0", A, true},
    {Relation::on, A + "/gpu@0000:77:00.0", B, false},
    // below: GPU/NIC below their switch and, transitively, the root port
    {Relation::below, A + "/gpu0", A + "/pcie/0000:17:00.0", true},
    {Relation::below, A + "/gpu0", A + "/pcie/0000:16:01.0", true},
    {Relation::below, A + "/mlx5_0", A + "/pcie/0000:16:01.0", true},
    {Relation::below, A + "/pcie/0000:17:00.0", A + "/pcie/0000:16:01.0", true},
    {Relation::below, A + "/pcie/sw2", A + "/pcie/0000:99:01.0", true},
    {Relation::below, A + "/gpu3", A + "/pcie/0000:16:01.0", false},
    {Relation::below, A + "/gpu3", A + "/pcie/0000:9a:00.0", true},
    {Relation::below, A + "/gpu3", A + "/pcie/sw2", false},  // sibling switch
    {Relation::below, A + "/pcie/0000:16:01.0", A + "/pcie/0000:17:00.0", false},
    {Relation::below, A + "/gpu0", B + "/pcie/0000:17:00.0", false},  // same BDF, other host
    {Relation::below, A + "/gpu@0000:18:00.0", A + "/pcie/0000:17:00.0", false},  // placeholder
    // paired: first NIC of gpus[].nics only, either order
    {Relation::paired, A + "/gpu0", A + "/mlx5_0", true},
    {Relation::paired, A + "/mlx5_0", A + "/gpu0", true},
    {Relation::paired, A + "/gpu1", A + "/mlx5_1", true},
    {Relation::paired, A + "/gpu1", A + "/mlx5_0", false},  // second NIC is not the pair
    {Relation::paired, A + "/gpu3", A + "/mlx5_2", true},
    {Relation::paired, C + "/gpu0", A + "/mlx5_0", false},
    // nvlink_peer: different GPUs, same host or same nvl_domain
    {Relation::nvlink_peer, A + "/gpu0", A + "/gpu3", true},
    {Relation::nvlink_peer, A + "/gpu0", A + "/gpu0", false},
    {Relation::nvlink_peer, A + "/gpu0", B + "/gpu1", true},  // nvl-a
    {Relation::nvlink_peer, A + "/gpu0", C + "/gpu0", false},
    {Relation::nvlink_peer, A + "/gpu0", A + "/mlx5_0", false},
    // serves
    {Relation::serves, A + "/nvsw0", A + "/gpu3", true},
    {Relation::serves, B + "/nvsw0", A + "/gpu3", true},  // same nvl domain
    {Relation::serves, A + "/nvsw0", C + "/gpu0", false},
    {Relation::serves, A + "/gpu3", A + "/nvsw0", false},
    // attached
    {Relation::attached, A + "/mlx5_0", "fabric/leaf-03", true},
    {Relation::attached, A + "/mlx5_1", "fabric/leaf-03", false},
    {Relation::attached, B + "/mlx5_1", "fabric/leaf-04", true},
    {Relation::attached, "fabric/leaf-03", A + "/mlx5_0", false},
    // uplink
    {Relation::uplink, "fabric/leaf-03", "fabric/spine-02", true},
    {Relation::uplink, "fabric/leaf-04", "fabric/spine-02", false},
    {Relation::uplink, "fabric/spine-01", "fabric/leaf-03", false},
    // runs_on
    {Relation::runs_on, "job/job-42/rank1", A + "/gpu1", true},
    {Relation::runs_on, "job/job-42/rank1", A, true},
    {Relation::runs_on, "job/job-42/rank1", A + "/gpu0", false},
    {Relation::runs_on, "job/job-9/rank0", C, true},
    {Relation::runs_on, "job/job-9/rank0", C + "/gpu0", false},  // the rank's GPU is unknown
    // uses: the NIC paired with the rank's GPU
    {Relation::uses, "job/job-42/rank1", A + "/mlx5_1", true},
    {Relation::uses, "job/job-42/rank1", A + "/mlx5_0", false},
    {Relation::uses, "job/job-42/rank2", B + "/mlx5_0", true},
    {Relation::uses, "job/job-9/rank0", C + "/mlx5_0", false},
    // in
    {Relation::in, "job/job-42/rank3", "job/job-42", true},
    {Relation::in, "job/job-42/rank3", "job/job-7", false},
    {Relation::in, B, "job/job-7", true},
    {Relation::in, C, "job/job-42", false},
    {Relation::in, A + "/gpu3", "job/job-42", false},  // no rank of job-42 on GPU 3
    {Relation::in, A + "/gpu1", "job/job-42", true},
    {Relation::in, C + "/gpu0", "job/job-9", true},  // rank without GPU: host's GPUs count
    {Relation::in, A + "/mlx5_0", "job/job-42", false},
    // same_job
    {Relation::same_job, "job/job-42/rank0", "job/job-42/rank3", true},
    {Relation::same_job, "job/job-42/rank0", "job/job-7/rank0", false},
    {Relation::same_job, "job/job-42/rank0", B + "/mlx5_1", true},
    {Relation::same_job, A + "/gpu3", B + "/pcie/0000:17:00.0", true},
    {Relation::same_job, A + "/nvsw0", C, false},
    {Relation::same_job, "job/job-9/rank0", C + "/gpu0", true},
    // mounts: every host mounts every storage unless hosts[].mounts says otherwise
    {Relation::mounts, A, "storage/nfs-03", true},
    {Relation::mounts, "job/job-42/rank2", "storage/home", true},
    {Relation::mounts, C, "storage/home", true},
    {Relation::mounts, C, "storage/nfs-03", false},
    {Relation::mounts, "job/job-9/rank0", "storage/nfs-03", false},
    {Relation::mounts, A + "/gpu0", "storage/nfs-03", false},
    // any
    {Relation::any, "fabric/spine-01", "job/job-7/rank2", true},
    {Relation::any, "x@y", "", true},
};

INSTANTIATE_TEST_SUITE_P(Topology, Relations, ::testing::ValuesIn(kCases));

// related_devices() must agree with related() exactly, in both directions.
TEST(RelatedDevices, AgreesWithRelatedForEveryRelation) {
  const Topology& t = topo();
  std::vector<std::string> all;
  for (int k = 0; k <= int(DeviceKind::storage); ++k)
    for (auto& id : t.devices_of_kind(DeviceKind(k))) all.push_back(id);
  ASSERT_GT(all.size(), 40u);
  // Placeholders as the known side, too.
  std::vector<std::string> bs = all;
  bs.push_back(A + "/gpu@0000:77:00.0");
  bs.push_back("sm-01");
  for (int r = 0; r <= int(Relation::any); ++r) {
    Relation rel = Relation(r);
    for (auto& b : bs) {
      for (int k = 0; k <= int(DeviceKind::storage); ++k) {
        DeviceKind kind = DeviceKind(k);
        for (bool lhs : {true, false}) {
          auto got = t.related_devices(rel, b, lhs, kind);
          std::set<std::string> got_set(got.begin(), got.end());
          EXPECT_EQ(got_set.size(), got.size()) << "duplicates for " << to_string(rel) << " " << b;
          std::set<std::string> want;
          auto xs = t.devices_of_kind(kind);
          if (auto d = t.device(b); d && d->placeholder && d->kind == kind) xs.push_back(b);
          for (auto& x : xs)
            if (lhs ? t.related(rel, x, b) : t.related(rel, b, x)) want.insert(x);
          EXPECT_EQ(got_set, want)
              << to_string(rel) << " b=" << b << " kind=" << to_string(kind) << " lhs=" << lhs;
        }
      }
    }
  }
}

TEST(RelatedDevices, ExamplesFromTheLanguageTable) {
  const Topology& t = topo();
  // Everything below root port 0000:16:01.0 of host A: switch sw0, GPUs 0-1, NICs 0-1.
  auto below = t.related_devices(Relation::below, A + "/pcie/0000:16:01.0", true, DeviceKind::gpu);
  EXPECT_EQ(std::set<std::string>(below.begin(), below.end()),
            (std::set<std::string>{A + "/gpu0", A + "/gpu1"}));
  auto ranks = t.related_devices(Relation::uses, A + "/mlx5_0", true, DeviceKind::rank);
  EXPECT_EQ(std::set<std::string>(ranks.begin(), ranks.end()),
            (std::set<std::string>{"job/job-42/rank0", "job/job-7/rank2"}));
  auto ups =
      t.related_devices(Relation::uplink, "fabric/leaf-03", false, DeviceKind::fabric_switch);
  EXPECT_EQ(ups, (std::vector<std::string>{"fabric/spine-01", "fabric/spine-02"}));
  // A placeholder GPU relates to its host's devices by host only.
  auto host_gpus =
      t.related_devices(Relation::same_host, A + "/gpu@0000:77:00.0", true, DeviceKind::gpu);
  EXPECT_EQ(host_gpus.size(), 4u);  // GPUs 0, 1, 3 and the placeholder itself
  EXPECT_TRUE(
      t.related_devices(Relation::below, A + "/gpu@0000:77:00.0", false, DeviceKind::pcie_port)
          .empty());
}

// The integer-id API answers exactly as the string API for devices in the
// topology: related() for every pair and relation, related_device_ids() with
// the same devices in the same order (limits included).
TEST(DeviceIds, AgreeWithTheStringApi) {
  const Topology& t = topo();
  std::vector<std::string> all;
  for (int k = 0; k <= int(DeviceKind::storage); ++k)
    for (auto& id : t.devices_of_kind(DeviceKind(k))) all.push_back(id);
  ASSERT_EQ(all.size(), t.device_count());
  std::set<Topology::DeviceId> ids;
  for (auto& name : all) {
    Topology::DeviceId d = t.id(name);
    ASSERT_NE(d, Topology::kNoDevice) << name;
    EXPECT_EQ(t.id_str(d), name);
    ids.insert(d);
  }
  EXPECT_EQ(ids.size(), all.size());  // one id per device
  EXPECT_EQ(*ids.begin(), 0);
  EXPECT_EQ(size_t(*ids.rbegin()), all.size() - 1);
  // Placeholders, unknown and malformed names have no id.
  for (std::string s : {A + "/gpu@0000:77:00.0", std::string("sm-01"), A + "/gpu9", std::string(""),
                        std::string("job/job-42/rank99")})
    EXPECT_EQ(t.id(s), Topology::kNoDevice) << s;
  std::vector<Topology::DeviceId> got;
  for (int r = 0; r <= int(Relation::any); ++r) {
    Relation rel = Relation(r);
    for (auto& a : all)
      for (auto& b : all)
        ASSERT_EQ(t.related(rel, t.id(a), t.id(b)), t.related(rel, a, b))
            << to_string(rel) << " " << a << " ~ " << b;
    for (auto& b : all)
      for (int k = 0; k <= int(DeviceKind::storage); ++k)
        for (bool lhs : {true, false})
          for (size_t limit : {size_t(1), size_t(3), static_cast<size_t>(-1)}) {
            auto want = t.related_devices(rel, b, lhs, DeviceKind(k), limit);
            got.assign(7, 0);  // the output is cleared first
            t.related_device_ids(rel, t.id(b), lhs, DeviceKind(k), &got, limit);
            std::vector<std::string> names;
            for (auto d : got) names.push_back(t.id_str(d));
            EXPECT_EQ(names, want) << to_string(rel) << " b=" << b << " kind=" << k
                                   << " lhs=" << lhs << " limit=" << limit;
          }
  }
}

// same_job_key() decides same_job as related() does wherever it claims to:
// a kNoJob key relates to nothing, two single-job keys by equality.
TEST(DeviceIds, SameJobKeyAgreesWithRelated) {
  const Topology& t = topo();
  int decided = 0, many = 0;
  for (Topology::DeviceId a = 0; size_t(a) < t.device_count(); ++a) {
    const int32_t ka = t.same_job_key(a);
    EXPECT_GE(ka, Topology::kManyJobs) << t.id_str(a);
    many += ka == Topology::kManyJobs;
    for (Topology::DeviceId b = 0; size_t(b) < t.device_count(); ++b) {
      const int32_t kb = t.same_job_key(b);
      const bool rel = t.related(Relation::same_job, a, b);
      if (ka == Topology::kNoJob || kb == Topology::kNoJob) {
        EXPECT_FALSE(rel) << t.id_str(a) << " ~ " << t.id_str(b);
        ++decided;
      } else if (ka >= 0 && kb >= 0) {
        EXPECT_EQ(rel, ka == kb) << t.id_str(a) << " ~ " << t.id_str(b);
        ++decided;
      }
    }
  }
  EXPECT_GT(decided, 0);
  EXPECT_EQ(t.same_job_key(Topology::kNoDevice), Topology::kNoJob);
  EXPECT_EQ(t.same_job_key(Topology::DeviceId(t.device_count())), Topology::kNoJob);
  // The fixture's host in two jobs: its devices are left to related().
  EXPECT_GT(many, 0);
}

TEST(DeviceIds, OutOfRangeIdsAreNoDevice) {
  const Topology& t = topo();
  const Topology::DeviceId gpu = t.id(A + "/gpu0");
  ASSERT_NE(gpu, Topology::kNoDevice);
  const Topology::DeviceId bad[] = {Topology::kNoDevice, -7, Topology::DeviceId(t.device_count()),
                                    1 << 30};
  std::vector<Topology::DeviceId> out{1, 2};
  for (auto d : bad) {
    EXPECT_EQ(t.id_str(d), "");
    EXPECT_FALSE(t.related(Relation::same, d, d));
    EXPECT_FALSE(t.related(Relation::same_host, gpu, d));
    EXPECT_FALSE(t.related(Relation::same_host, d, gpu));
    EXPECT_TRUE(t.related(Relation::any, d, gpu));  // as for names: any holds
    t.related_device_ids(Relation::same_host, d, true, DeviceKind::gpu, &out);
    EXPECT_TRUE(out.empty());
  }
}

TEST(DeviceIds, UidTellsTopologiesApart) {
  TopologyError err;
  auto a = Topology::load_file(kData + "/two_hosts.json", &err);
  auto b = Topology::load_file(kData + "/two_hosts.json", &err);
  ASSERT_TRUE(a && b) << err.str();
  EXPECT_NE(a->uid(), b->uid());
  EXPECT_NE(a->uid(), Topology::empty()->uid());
  uint64_t before = a->uid();
  Topology moved = std::move(*a);
  EXPECT_EQ(moved.uid(), before);  // the uid belongs to the loaded content
}

}  // namespace
}  // namespace reflex
