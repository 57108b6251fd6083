// Replays files (or every file of directories) through the fuzz entry point
// without libFuzzer, so the normal build exercises seeds and corpus in CI.
// REFLEX_REPLAY_TIMES=FILE writes "CPU-nanoseconds bytes path" per input to
// FILE (which inputs cost a fuzzer its executions per second; CPU time, as
// wall time says little on a shared machine).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    std::error_code ec;
    if (fs::is_directory(argv[i], ec)) {
      for (const auto& e : fs::recursive_directory_iterator(argv[i]))
        if (e.is_regular_file()) files.push_back(e.path());
    } else if (fs::is_regular_file(argv[i], ec)) {
      files.push_back(argv[i]);
    }
  }
  std::sort(files.begin(), files.end());
  const char* times_path = std::getenv("REFLEX_REPLAY_TIMES");
  std::FILE* times = times_path != nullptr ? std::fopen(times_path, "w") : nullptr;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    std::string s = ss.str();
    timespec t0{}, t1{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size());
    if (times != nullptr) {
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
      const long long ns = (t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec);
      std::fprintf(times, "%lld %zu %s\n", ns, s.size(), f.c_str());
    }
  }
  if (times != nullptr) std::fclose(times);
  std::printf("replayed %zu inputs\n", files.size());
  return files.empty() ? 1 : 0;
}
