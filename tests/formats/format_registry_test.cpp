// The format registry's order decides what an ambiguous line parses as, so
// it is pinned here: a new format adds its recogniser to this list where it
// adds it to format_registry.cpp, and the first-byte dispatch must offer
// every line exactly the recognisers of its class, in that order.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../../runtime/formats/format_registry.h"

namespace reflex::formats {
namespace {

TEST(FormatRegistry, OrderOfAttempts) {
  std::vector<std::string> names;
  for (const Recogniser* r = registry_begin(); r != registry_end(); ++r) names.push_back(r->name);
  const std::vector<std::string> expected = {
      "dmesg_stamp",         "dmesg_reltime",      "dmesg_human",           "dmesg_ctime",
      "tool_fabric_manager", "app_rank",           "iso_bracketed",         "syslog_rfc5424",
      "dmesg_priority",      "syslog_priority",    "journal_json_fast",     "journal_json_full",
      "iso_stamped",         "tool_nvsmi_csv_row", "tool_ipmi_sel",         "iso_indented",
      "syslog_bsd",          "dmesg_facility",     "tool_nvsmi_csv_header", "app_glog",
      "tool_header_time",    "syslog_kernel_tag",  "talos_dmesg",           "tool_epoch_counter",
      "syslog_embedded"};
  EXPECT_EQ(names, expected);
}

uint8_t class_of(char c) {
  if (c == '[') return kBracket;
  if (c == '<') return kAngle;
  if (c == '{') return kBrace;
  if (c >= '0' && c <= '9') return kDigit;
  if (c == ' ') return kSpace;
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return kAlpha;
  return kOther;
}

TEST(FormatRegistry, FirstByteOffersItsClassInRegistryOrder) {
  for (int b = 0; b < 256; ++b) {
    const char c = static_cast<char>(b);
    std::vector<Recognise> expected, got;
    for (const Recogniser* r = registry_begin(); r != registry_end(); ++r)
      if (r->first_bytes & class_of(c)) expected.push_back(r->fn);
    for (const Recognise* r = recognisers_for(c); *r; ++r) got.push_back(*r);
    EXPECT_EQ(got, expected) << "first byte " << b;
    // Every line has the quoted-syslog fallback last.
    ASSERT_FALSE(got.empty());
    EXPECT_EQ(got.back(), &syslog_embedded) << "first byte " << b;
  }
}

}  // namespace
}  // namespace reflex::formats
