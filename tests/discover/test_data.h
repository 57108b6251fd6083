// The recorded tool outputs of tests/discover/data, read whole.
#pragma once
#include <fstream>
#include <sstream>
#include <string>

inline std::string data(const std::string& rel) {
  std::ifstream in(std::string(REFLEX_DISCOVER_TEST_DATA) + "/" + rel);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
