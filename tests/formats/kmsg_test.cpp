// The /dev/kmsg record format (runtime/formats/kmsg.cpp): prefix fields,
// flags, \xNN escapes, continuation lines, later kernels' extra fields, and
// the `dmesg -r` lines the line parser then reads.
#include <gtest/gtest.h>

#include "reflex/kmsg.h"
#include "reflex/log_format.h"
#include "reflex/topology.h"

namespace reflex {
namespace {

TEST(Kmsg, FieldsAndDictionary) {
  // The record shape from the kernel's Documentation/ABI/testing/dev-kmsg.
  KmsgRecord r;
  std::string err;
  ASSERT_TRUE(parse_kmsg_record(
      "7,160,424069,-;pci_root PNP0A03:00: host bridge window [io  0x0000-0x0cf7] (ignored)\n"
      " SUBSYSTEM=acpi\n DEVICE=+acpi:PNP0A03:00\n",
      &r, &err))
      << err;
  EXPECT_EQ(r.priority, 7);
  EXPECT_EQ(r.seq, 160u);
  EXPECT_EQ(r.ts_usec, 424069u);
  EXPECT_EQ(r.flags, '-');
  EXPECT_TRUE(r.from_kernel());
  EXPECT_EQ(r.message, "pci_root PNP0A03:00: host bridge window [io  0x0000-0x0cf7] (ignored)");
  ASSERT_EQ(r.dict.size(), 2u);
  EXPECT_EQ(r.dict[0].first, "SUBSYSTEM");
  EXPECT_EQ(r.dict[1].second, "+acpi:PNP0A03:00");
}

TEST(Kmsg, EscapesFlagsAndExtraFields) {
  KmsgRecord r;
  std::string err;
  // Later kernels append fields after FLAGS (caller=...); a '\' is \x5c.
  ASSERT_TRUE(parse_kmsg_record("14,7,5,c,caller=T1;a\\x5cb\\x0asecond line", &r, &err)) << err;
  EXPECT_EQ(r.flags, 'c');
  EXPECT_FALSE(r.from_kernel());  // facility 1: written by a process
  EXPECT_EQ(r.message, "a\\b\nsecond line");
  auto lines = kmsg_dmesg_lines(r);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "<14>[    0.000005] a\\b");
  EXPECT_EQ(lines[1], "<14>[    0.000005] second line");
  // An escape cut short stays as it is.
  ASSERT_TRUE(parse_kmsg_record("6,8,9;end\\x4", &r, &err));
  EXPECT_EQ(r.message, "end\\x4");
}

TEST(Kmsg, MalformedIsRefused) {
  KmsgRecord r;
  std::string err;
  for (const char* bad : {"", "garbage", "6,1;no timestamp", "6,x,3;m", "192,1,2,-;pri too big",
                          "6,1,2,- no semicolon", "99999999999999999999,1,2;overflow"}) {
    err.clear();
    EXPECT_FALSE(parse_kmsg_record(bad, &r, &err)) << bad;
    EXPECT_FALSE(err.empty()) << bad;
  }
}

TEST(Kmsg, DmesgLineGivesBootTimePlusTimestamp) {
  // A real line (kb/xid.rfx cites github.com/Bumblebee-Project/Bumblebee/issues/677).
  KmsgRecord r;
  std::string err;
  ASSERT_TRUE(parse_kmsg_record(
      "3,1234,24128828315,-;NVRM: Xid (PCI:0000:01:00): 32, Channel ID 00000000 intr 00004000", &r,
      &err));
  auto lines = kmsg_dmesg_lines(r);
  ASSERT_EQ(lines.size(), 1u);
  TopologyError terr;
  auto topo =
      Topology::load_text(R"({"cluster":"c","hosts":[{"name":"h1","gpus":[]}]})", "t.json", &terr);
  ASSERT_TRUE(topo) << terr.str();
  FormatStats st;
  LineParser p(*topo, FormatOptions{}, &st);
  FileContext ctx;
  ctx.host_dir = "h1";
  ctx.file = "hosts/h1/kmsg";
  ctx.boot_time_us = int64_t{1700000000} * 1000000;
  p.begin_file(ctx);
  LogRecord rec;
  ASSERT_TRUE(p.parse(lines[0], 1235, &rec));
  EXPECT_EQ(rec.transport, kTransportKernel);
  ASSERT_TRUE(rec.time.wall);
  EXPECT_EQ(*rec.time.wall, *ctx.boot_time_us + 24128828315);
  EXPECT_EQ(rec.msg, "NVRM: Xid (PCI:0000:01:00): 32, Channel ID 00000000 intr 00004000");
}

}  // namespace
}  // namespace reflex
