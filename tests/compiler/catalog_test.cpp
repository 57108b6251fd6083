// The diagnostic catalog: stable codes, and a golden file for every code.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "reflex/compiler.h"

namespace reflex {
namespace {

TEST(Catalog, CodesUniqueAndDescribed) {
  std::set<std::string> codes, names;
  for (const auto& d : diagnostic_catalog()) {
    EXPECT_TRUE(codes.insert(d.code).second) << d.code;
    EXPECT_TRUE(std::regex_match(d.code, std::regex("[EW][0-9]{3}"))) << d.code;
    EXPECT_FALSE(d.title.empty()) << d.code;
    EXPECT_FALSE(d.description.empty()) << d.code;
    if (d.severity == DiagSeverity::warning) {
      EXPECT_TRUE(names.insert(d.name).second) << d.name;
      EXPECT_TRUE(is_warning_name(d.name));
    } else {
      EXPECT_TRUE(d.name.empty()) << d.code;
    }
  }
  EXPECT_FALSE(is_warning_name("no-such-warning"));
}

TEST(Catalog, EveryCodeHasAGoldenFile) {
  std::string all;
  for (const auto& e : std::filesystem::directory_iterator(REFLEX_GOLDEN_DIR)) {
    if (e.path().extension() != ".err") continue;
    std::ifstream in(e.path());
    std::ostringstream ss;
    ss << in.rdbuf();
    all += ss.str();
  }
  for (const auto& d : diagnostic_catalog()) {
    std::string tag =
        std::string(d.severity == DiagSeverity::error ? "error[" : "warning[") + d.code + "]";
    EXPECT_NE(all.find(tag), std::string::npos) << "no golden file shows " << tag;
  }
}

}  // namespace
}  // namespace reflex
