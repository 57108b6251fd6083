// The naive baseline of bench/ingest_bench.sh: every pattern (POSIX ERE as
// exported by `reflex events --export-patterns ere`) tried with std::regex on
// every line, as a straightforward implementation would. It is slow, so it
// reads at most --sample-mb of the input and reports lines/s and MB/s over
// what it read (the script extrapolates).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <regex>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: reflex-naive-regex PATTERNS FILE... [--sample-mb N]\n");
    return 2;
  }
  double sample_mb = 16;
  std::vector<std::string> files;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--sample-mb") == 0 && i + 1 < argc) {
      sample_mb = std::atof(argv[++i]);
    } else {
      files.push_back(argv[i]);
    }
  }
  std::vector<std::regex> res;
  std::ifstream pf(argv[1]);
  for (std::string p; std::getline(pf, p);) {
    if (p.empty()) continue;
    try {
      res.emplace_back(p, std::regex::extended | std::regex::optimize);
    } catch (const std::regex_error& e) {
      std::fprintf(stderr, "skipping pattern (std::regex: %s): %s\n", e.what(), p.c_str());
    }
  }
  const size_t budget = static_cast<size_t>(sample_mb * 1048576);
  size_t bytes = 0, lines = 0, hits = 0;
  auto t0 = std::chrono::steady_clock::now();
  // Sample evenly: the same share of every file.
  for (const auto& f : files) {
    std::ifstream in(f);
    size_t per_file = budget / files.size();
    size_t read = 0;
    for (std::string line; read < per_file && std::getline(in, line);) {
      read += line.size() + 1;
      ++lines;
      for (const auto& re : res)
        if (std::regex_search(line, re)) {
          ++hits;
          break;
        }
    }
    bytes += read;
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%zu %zu %zu %.6f\n", lines, bytes, hits, s);  // lines bytes hits seconds
  return 0;
}
