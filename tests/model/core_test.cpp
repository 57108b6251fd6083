// reflex_model: value normalisation, times, artifact round trip and refusal.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include "reflex/artifact.h"
#include "reflex/huge_pages.h"
#include "reflex/time.h"
#include "reflex/values.h"

using namespace reflex;

struct BdfCase {
  const char* in;
  const char* want;  // nullptr = not a BDF
};

class BdfTest : public ::testing::TestWithParam<BdfCase> {};

TEST_P(BdfTest, Normalises) {
  auto got = normalize_bdf(GetParam().in);
  if (GetParam().want == nullptr) {
    EXPECT_FALSE(got.has_value()) << *got;
  } else {
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(*got, GetParam().want);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Core, BdfTest,
    ::testing::Values(BdfCase{"PCI:0000:18:00",
                              "0000:18:00.0"},  // Xid line form (interfaces.md §1)
                      BdfCase{"0000:B3:00.0", "0000:b3:00.0"}, BdfCase{"18:00.0", "0000:18:00.0"},
                      BdfCase{"0009:01:00", "0009:01:00.0"},
                      BdfCase{"00000000:86:00.0", "0000:86:00.0"},  // Fabric Manager
                      BdfCase{"0000:00:08.0", "0000:00:08.0"}, BdfCase{"hello", nullptr},
                      BdfCase{"0000:18:00.9", nullptr}, BdfCase{"1:2:3:4", nullptr},
                      BdfCase{"", nullptr}, BdfCase{"12345678a:00:00.0", nullptr}));

TEST(Values, TypedNormalisation) {
  EXPECT_EQ(normalize_value(FieldType::int_, "079"), "79");
  EXPECT_FALSE(normalize_value(FieldType::int_, "7x").has_value());
  EXPECT_EQ(normalize_value(FieldType::hex, "0x1F"), "0x1f");
  EXPECT_EQ(normalize_value(FieldType::ip, "10.2.17.1"), "10.2.17.1");
  EXPECT_FALSE(normalize_value(FieldType::ip, "10.2.17.256").has_value());
  EXPECT_FALSE(normalize_value(FieldType::ip, "10.2.17").has_value());
  EXPECT_EQ(parse_duration_s("500ms"), 0.5);
  EXPECT_EQ(parse_duration_s("10m"), 600);
  EXPECT_FALSE(parse_duration_s("10 parsecs").has_value());
}

TEST(Time, Rfc3339RoundTrip) {
  auto t = parse_rfc3339("2026-03-05T10:11:12.345678Z");
  ASSERT_TRUE(t);
  EXPECT_EQ(format_time_us(*t), "2026-03-05T10:11:12.345678Z");
  EXPECT_EQ(parse_rfc3339("2026-03-05T12:11:12.345678+02:00"), t);
  EXPECT_EQ(parse_rfc3339("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(format_time_us(-1), "1969-12-31T23:59:59.999999Z");
  EXPECT_FALSE(parse_rfc3339("2026-13-05T10:11:12Z"));
  EXPECT_FALSE(parse_rfc3339("2026-03-05T10:11:12Zjunk"));
  EXPECT_EQ(civil_to_time_us(2026, 3, 5, 10, 11, 12, 345678), *t);
}

// Years 0000-9999 are what the text can hold; past them nothing reads it back.
TEST(Time, Rfc3339RangeIsFourDigitYears) {
  EXPECT_EQ(format_time_us(kMaxRfc3339Us), "9999-12-31T23:59:59.999999Z");
  EXPECT_EQ(format_time_us(kMinRfc3339Us), "0000-01-01T00:00:00.000000Z");
  EXPECT_EQ(parse_rfc3339(format_time_us(kMaxRfc3339Us)), kMaxRfc3339Us);
  EXPECT_EQ(parse_rfc3339(format_time_us(kMinRfc3339Us)), kMinRfc3339Us);
  EXPECT_FALSE(in_rfc3339_range(kMaxRfc3339Us + 1));
  EXPECT_FALSE(in_rfc3339_range(kMinRfc3339Us - 1));
  EXPECT_EQ(format_time_us(kMaxRfc3339Us + 1), "10000-01-01T00:00:00.000000Z");
  // An offset can carry a four-digit text out of the range: refused.
  EXPECT_FALSE(parse_rfc3339("9999-12-31T23:30:00-01:00"));
  EXPECT_FALSE(parse_rfc3339("9999-12-31T23:59:60Z"));
  EXPECT_FALSE(parse_rfc3339("0000-01-01T00:30:00+01:00"));
  EXPECT_TRUE(parse_rfc3339("9999-12-31T23:30:00+01:00"));
}

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(std::string(1000, 'a')),
            "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
}

namespace {
KnowledgeBase sample_kb() {
  KnowledgeBase kb;
  kb.meta.name = "t";
  kb.meta.requires_engine = ">= 0.0.1";
  kb.artifact.format_version = kArtifactFormatVersion;
  kb.classes.push_back({"gpu_hw", "", "GPU", {}});
  kb.classes.push_back({"gsp", "gpu_hw", "GSP", {}});
  Signature s;
  s.name = "a";
  s.kind = DeviceKind::gpu;
  s.patterns = {"x(?P<n>\\d+)"};
  s.fields = {{"n", FieldType::int_}};
  Condition c;
  c.op = Condition::Op::in;
  c.field = "n";
  c.values = {"1", "2"};
  s.when = c;
  s.fault_class = "gsp";
  kb.signatures.push_back(s);
  Rule r;
  r.name = "r";
  r.cause = "a";
  r.effect = "a";
  r.where.push_back({{DeviceRef::Side::effect, ""}, Relation::below, {DeviceRef::Side::cause, ""}});
  kb.rules.push_back(r);
  return kb;
}
}  // namespace

TEST(Artifact, RoundTripAndRefusals) {
  KnowledgeBase kb = sample_kb();
  EXPECT_EQ(kb.standard_class("gsp"), "gpu_hw");
  std::string path = ::testing::TempDir() + "/kb.rfxc";
  std::string err;
  ASSERT_TRUE(save_artifact(kb, path, &err)) << err;
  EXPECT_TRUE(is_artifact_file(path));
  auto back = load_artifact(path, &err);
  ASSERT_TRUE(back) << err;
  EXPECT_EQ(kb_to_cbor(*back), kb_to_cbor(kb));
  ASSERT_TRUE(back->signatures[0].when);
  EXPECT_EQ(back->signatures[0].when->values[1], "2");
  EXPECT_EQ(back->rules[0].where[0].rel, Relation::below);

  // A KB that needs a newer engine is refused with a message that says so.
  kb.meta.requires_engine = ">= 99.0.0";
  ASSERT_TRUE(save_artifact(kb, path, &err));
  EXPECT_FALSE(load_artifact(path, &err));
  EXPECT_NE(err.find("requires engine >= 99.0.0"), std::string::npos) << err;

  // Truncated artifact.
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    auto body = kb_to_cbor(sample_kb());
    const char head[8] = {'R', 'F', 'X', 'K', 'B', '\0', '\0', char(kArtifactFormatVersion)};
    out.write(head, 8);
    out.write(reinterpret_cast<const char*>(body.data()),
              static_cast<std::streamsize>(body.size() / 2));
  }
  EXPECT_FALSE(load_artifact(path, &err));
  EXPECT_NE(err.find("truncated"), std::string::npos) << err;

  // Another format version.
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write("RFXKB\0\0\7", 8);
  }
  EXPECT_FALSE(load_artifact(path, &err));
  EXPECT_NE(err.find("format 7"), std::string::npos) << err;

  // Not an artifact at all.
  {
    std::ofstream out(path, std::ios::trunc);
    out << "reflex 1\n";
  }
  EXPECT_FALSE(is_artifact_file(path));
  EXPECT_FALSE(load_artifact(path, &err));
  std::remove(path.c_str());
}

// An artifact that is not a regular file is read, not mapped: the same KB
// through a FIFO; an empty file, a missing one and a directory are refused
// with a message.
TEST(Artifact, ReadThroughAPipeAndRefusedWhenEmptyOrMissing) {
  const KnowledgeBase kb = sample_kb();
  const std::string dir = ::testing::TempDir();
  const std::string path = dir + "/kb-pipe.rfxc", fifo = dir + "/kb-pipe.fifo";
  std::string err;
  ASSERT_TRUE(save_artifact(kb, path, &err)) << err;
  std::remove(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  std::thread writer([&] {
    std::ifstream in(path, std::ios::binary);
    std::ofstream out(fifo, std::ios::binary);  // blocks until the reader opens it
    out << in.rdbuf();
  });
  auto back = load_artifact(fifo, &err);
  writer.join();
  ASSERT_TRUE(back) << err;
  EXPECT_EQ(kb_to_cbor(*back), kb_to_cbor(kb));

  { std::ofstream empty(path, std::ios::trunc); }
  EXPECT_FALSE(load_artifact(path, &err));
  EXPECT_NE(err.find("not a Reflex knowledge-base artifact"), std::string::npos) << err;
  std::remove(path.c_str());
  std::remove(fifo.c_str());
  EXPECT_FALSE(load_artifact(path, &err));
  EXPECT_NE(err.find("cannot open"), std::string::npos) << err;
  EXPECT_FALSE(load_artifact(dir, &err));  // a directory: opened, but not readable
  EXPECT_NE(err.find("cannot read"), std::string::npos) << err;
}

// Whole 2 MiB pages, aligned, freed by std::free; the allocator (the
// artifact's matcher database) holds bytes like any vector's.
TEST(HugePages, WholeAlignedPagesAndAVectorOfThem) {
  size_t cap = 0;
  void* p = alloc_huge_pages(1, &cap);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(cap, kHugePage);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % kHugePage, 0u);
  std::free(p);
  p = alloc_huge_pages(kHugePage + 1, &cap);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(cap, 2 * kHugePage);
  std::free(p);

  std::vector<uint8_t, HugePageAllocator<uint8_t>> v;
  for (size_t i = 0; i < 3 * kHugePage; ++i) v.push_back(static_cast<uint8_t>(i * 31));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(v.data()) % kHugePage, 0u);
  const auto copy = v;
  EXPECT_EQ(copy, v);
  for (size_t i : {size_t{0}, kHugePage - 1, kHugePage, 3 * kHugePage - 1})
    EXPECT_EQ(copy[i], static_cast<uint8_t>(i * 31)) << i;
}

TEST(EngineVersion, Requirements) {
  std::string err;
  EXPECT_TRUE(engine_version_satisfies("0.1.0", ">= 0.1.0", &err));
  EXPECT_TRUE(engine_version_satisfies("0.2.0", "> 0.1.9", &err));
  EXPECT_FALSE(engine_version_satisfies("0.1.0", "< 0.1.0", &err));
  EXPECT_TRUE(engine_version_satisfies("0.1.0", "", &err));
  EXPECT_FALSE(engine_version_satisfies("0.1.0", ">= banana", &err));
}
