// The process metrics every Prometheus exporter has, and the probes' state
// (reflex/deploy/daemon.h).
#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "reflex/deploy/daemon.h"

namespace reflex::deploy {

namespace {

// The fields of /proc/self/stat after the command name (which may hold
// spaces and parentheses, hence the last ')'): field 3 (state) is index 0.
std::vector<std::string> stat_fields() {
  std::ifstream f("/proc/self/stat");
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto close = all.rfind(')');
  std::vector<std::string> out;
  if (close == std::string::npos) return out;
  std::istringstream in(all.substr(close + 1));
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The boot time (/proc/stat btime), seconds since the epoch; 0 if unknown.
double boot_time() {
  std::ifstream f("/proc/stat");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("btime ", 0) == 0) return std::strtod(line.c_str() + 6, nullptr);
  return 0;
}

int open_fds() {
  DIR* d = opendir("/proc/self/fd");
  if (!d) return -1;
  int n = 0;
  while (dirent* e = readdir(d))
    if (e->d_name[0] != '.') ++n;
  closedir(d);
  return n - 1;  // the directory stream's own descriptor
}

void sample(std::string& out, const char* name, const char* type, const char* help, double v) {
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" +
         name + " " + prom_number(v) + "\n";
}

}  // namespace

std::string render_process_metrics() {
  std::string out;
  std::vector<std::string> st = stat_fields();
  double tck = static_cast<double>(sysconf(_SC_CLK_TCK));
  long page = sysconf(_SC_PAGESIZE);
  // stat(5): utime 14, stime 15, starttime 22, vsize 23, rss 24 (1-based).
  if (st.size() > 21 && tck > 0) {
    double cpu =
        (std::strtod(st[11].c_str(), nullptr) + std::strtod(st[12].c_str(), nullptr)) / tck;
    sample(out, "process_cpu_seconds_total", "counter",
           "Total user and system CPU time spent in seconds.", cpu);
    sample(out, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
           std::strtod(st[21].c_str(), nullptr) * static_cast<double>(page));
    double btime = boot_time();
    if (btime > 0)
      sample(out, "process_start_time_seconds", "gauge",
             "Start time of the process since unix epoch in seconds.",
             btime + std::strtod(st[19].c_str(), nullptr) / tck);
    sample(out, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.",
           std::strtod(st[20].c_str(), nullptr));
  }
  int fds = open_fds();
  if (fds >= 0) sample(out, "process_open_fds", "gauge", "Number of open file descriptors.", fds);
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
    sample(out, "process_max_fds", "gauge", "Maximum number of open file descriptors.",
           static_cast<double>(rl.rlim_cur));
  return out;
}

void Health::beat() {
  std::lock_guard<std::mutex> lk(mu_);
  last_beat_ = std::chrono::steady_clock::now();
  beaten_ = true;
}

void Health::set_ready(bool ready, const std::string& why) {
  std::lock_guard<std::mutex> lk(mu_);
  ready_ = ready;
  why_ = why;
}

Health::Answer Health::live() const {
  std::lock_guard<std::mutex> lk(mu_);
  if (!beaten_) return {503, "starting: the main loop has not run yet"};
  auto idle = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() -
                                                               last_beat_);
  if (idle > stall_)
    return {503, "stalled: the main loop last went round " + std::to_string(idle.count()) +
                     " s ago (limit " + std::to_string(stall_.count()) + " s)"};
  return {200, "ok"};
}

Health::Answer Health::ready() const {
  Answer a = live();
  if (a.status != 200) return a;
  std::lock_guard<std::mutex> lk(mu_);
  return {ready_ ? 200 : 503, (ready_ ? "ready: " : "not ready: ") + why_};
}

}  // namespace reflex::deploy
