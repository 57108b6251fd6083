// What the long-running commands (agent, watch --redis) share: spdlog
// logging to stderr (text or JSON, repeats rate-limited), a Prometheus
// metrics registry served over HTTP (cpp-httplib), stop/reload signals.
// The one-shot commands keep their own clang-style messages. The command
// line that fills DaemonOptions stays with the commands (no CLI parser here).
#pragma once

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace reflex::deploy {

struct DaemonOptions {
  std::string log_level = "info";
  std::string log_format = "text";
  std::string metrics;  // "127.0.0.1:9464"; empty = none
};
// Sets up the logger ("reflex-agent", "reflex-watch"). False + *err on a bad level.
bool init_logging(const std::string& name, const DaemonOptions& o, std::string* err);

enum class Level { debug, info, warn, error };
void log(Level l, const std::string& msg);
// At most one message per `key` every `every`; the next one says how many were suppressed.
void log_limited(Level l, const std::string& key, const std::string& msg,
                 std::chrono::seconds every = std::chrono::seconds(10));

// Prometheus text exposition (version 0.0.4). Thread-safe.
class Metrics {
 public:
  void counter(const std::string& name, const std::string& help);
  void gauge(const std::string& name, const std::string& help);
  void histogram(const std::string& name, const std::string& help, std::vector<double> bounds);
  void add(const std::string& name, double v = 1, const std::string& labels = "");
  void set(const std::string& name, double v, const std::string& labels = "");
  void observe(const std::string& name, double v);
  std::string render() const;
  // Label text: {key="value"} with the value escaped.
  static std::string label(const std::string& key, const std::string& value);
  // What every exporter shows: reflex_build_info{version} 1 and the
  // process_* metrics of this process (read from /proc/self at each render).
  void standard(const std::string& version);

 private:
  struct Family {
    std::string type, help;
    std::map<std::string, double> values;  // labels -> value
    std::vector<double> bounds, buckets;
    double sum = 0;
    uint64_t count = 0;
  };
  mutable std::mutex mu_;
  std::map<std::string, Family> families_;
  bool process_ = false;
};

// The process metrics (process_cpu_seconds_total, _resident_memory_bytes,
// _virtual_memory_bytes, _start_time_seconds, _open_fds, _max_fds) from
// /proc/self, in the text format; what cannot be read is left out.
std::string render_process_metrics();
// A sample value or bucket bound as Prometheus clients print it: the
// shortest text that reads back as the same double ("0.05", "1e+20", "+Inf").
std::string prom_number(double v);

// The probes: /healthz (live: the main loop went round within the stall
// limit) and /readyz (live, and the command says it does its work: a
// diagnoser reaches the bus and holds or waits for leases, an agent
// publishes). Thread-safe: the loop writes, the HTTP thread reads.
class Health {
 public:
  explicit Health(std::chrono::seconds stall_limit = std::chrono::seconds(60))
      : stall_(stall_limit) {}
  void beat();  // the loop went round
  void set_ready(bool ready, const std::string& why);
  struct Answer {
    int status;
    std::string body;
  };
  Answer live() const;
  Answer ready() const;

 private:
  mutable std::mutex mu_;
  std::chrono::seconds stall_;
  std::chrono::steady_clock::time_point last_beat_{};
  bool beaten_ = false, ready_ = false;
  std::string why_ = "starting";
};

// Serves GET /metrics, /healthz and /readyz (when health is given) on
// addr:port in its own thread until destroyed.
class MetricsServer {
 public:
  MetricsServer();
  ~MetricsServer();
  // False + *err when addr:port cannot be bound.
  bool start(const std::string& addr_port, const Metrics* m, const Health* health,
             std::string* err);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// SIGTERM/SIGINT -> stop, SIGHUP -> reload; no SA_RESTART.
extern volatile sig_atomic_t g_daemon_stop;
extern volatile sig_atomic_t g_daemon_reload;
void install_daemon_signals();

// Sleeps up to `d`, in slices, returning early on a stop signal.
void sleep_unless_stopped(std::chrono::milliseconds d);

// Exponential backoff with a cap, for an unreachable Redis or Alertmanager.
class Backoff {
 public:
  Backoff(std::chrono::milliseconds first, std::chrono::milliseconds cap)
      : first_(first), cap_(cap) {}
  bool ready() const { return std::chrono::steady_clock::now() >= next_; }
  void failed();
  void succeeded() {
    delay_ = std::chrono::milliseconds(0);
    next_ = {};
  }

 private:
  std::chrono::milliseconds first_, cap_, delay_{0};
  std::chrono::steady_clock::time_point next_{};
};

// A secret (a password, a key) from a file: a regular file of at most 4 KiB
// that other users cannot read, its surrounding whitespace dropped. False
// and *err (naming the file) otherwise: a secret readable by every user is
// refused, not used.
bool read_secret_file(const std::string& path, std::string* out, std::string* err);
// The data servers' password: --redis-password-file when given, else
// $REFLEX_REDIS_PASSWORD, else "" (the URL's own, or none). Never from argv:
// a URL in argv that holds a password is warned about (/proc/PID/cmdline is
// readable by every user).
bool redis_password(const std::string& url, const std::string& password_file,
                    std::string* password, std::string* err);

std::string default_owner_name();  // hostname-pid
double now_seconds();              // wall clock, seconds since the epoch

}  // namespace reflex::deploy
