// The floor of bench/ingest_bench.sh for any Hyperscan-based matcher: the KB's
// first-line patterns (as `reflex events --export-patterns unnamed` prints
// them) in one block-mode database with the flags Reflex's matcher uses
// (leading '^' dropped, multi-line anchors, prefilter where Hyperscan needs
// it), scanned over every file in 1 MiB blocks of whole lines read with
// read(2). No parsing, no captures, no events. It reports the CPU time of the
// read + scan loop alone (compile excluded): whatever Reflex does on top of
// this costs more.
#include <fcntl.h>
#include <hs.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

namespace {
double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
int count_match(unsigned, unsigned long long, unsigned long long, unsigned, void* ctx) {
  ++*static_cast<size_t*>(ctx);
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: reflex-hs-scan-floor PATTERNS FILE...\n");
    return 2;
  }
  std::vector<std::string> pats;
  std::ifstream pf(argv[1]);
  for (std::string p; std::getline(pf, p);)
    if (!p.empty()) pats.push_back(p[0] == '^' ? p.substr(1) : p);
  std::vector<unsigned> flags(pats.size(), HS_FLAG_MULTILINE), ids;
  std::vector<const char*> exprs;
  for (size_t i = 0; i < pats.size(); ++i) {
    exprs.push_back(pats[i].c_str());
    ids.push_back(static_cast<unsigned>(i));
  }
  hs_database_t* db = nullptr;
  for (size_t attempt = 0; attempt <= pats.size(); ++attempt) {
    hs_compile_error_t* err = nullptr;
    if (hs_compile_multi(exprs.data(), flags.data(), ids.data(),
                         static_cast<unsigned>(exprs.size()), HS_MODE_BLOCK, nullptr, &db,
                         &err) == HS_SUCCESS)
      break;
    int bad = err ? err->expression : -1;
    std::fprintf(stderr, "hyperscan: %s (pattern %d)\n", err ? err->message : "?", bad);
    if (err) hs_free_compile_error(err);
    if (bad < 0 || (flags[static_cast<size_t>(bad)] & HS_FLAG_PREFILTER)) return 1;
    flags[static_cast<size_t>(bad)] |= HS_FLAG_PREFILTER;
  }
  hs_scratch_t* scratch = nullptr;
  if (!db || hs_alloc_scratch(db, &scratch) != HS_SUCCESS) return 1;

  double t0 = cpu_seconds();
  size_t matches = 0, bytes = 0;
  std::vector<char> buf(1 << 20);
  for (int i = 2; i < argc; ++i) {
    int fd = open(argv[i], O_RDONLY);
    if (fd < 0) {
      std::perror(argv[i]);
      return 1;
    }
    size_t carry = 0;
    for (;;) {
      ssize_t n = read(fd, buf.data() + carry, buf.size() - carry);
      size_t len = carry + static_cast<size_t>(n > 0 ? n : 0);
      if (len == 0) break;
      size_t cut = len;  // whole lines only, as Reflex scans them
      if (n > 0)
        while (cut > 0 && buf[cut - 1] != '\n') --cut;
      if (cut == 0) cut = len;  // a line longer than the buffer
      hs_scan(db, buf.data(), static_cast<unsigned>(cut), 0, scratch, count_match, &matches);
      bytes += cut;
      carry = len - cut;
      std::memmove(buf.data(), buf.data() + cut, carry);
      if (n <= 0) break;
    }
    close(fd);
  }
  double secs = cpu_seconds() - t0;
  std::printf("%zu %zu %.6f\n", bytes, matches, secs);  // bytes matches cpu-seconds
  hs_free_scratch(scratch);
  hs_free_database(db);
  return 0;
}
