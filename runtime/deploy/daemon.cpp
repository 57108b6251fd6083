// Logging, the metrics registry and server, signals (reflex/deploy/daemon.h).
#include "reflex/deploy/daemon.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

#include "reflex/bus.h"
#include "reflex/modules/http_api.h"

namespace reflex::deploy {

volatile sig_atomic_t g_daemon_stop = 0;
volatile sig_atomic_t g_daemon_reload = 0;

namespace {

std::shared_ptr<spdlog::logger> g_logger;
bool g_json = false;

std::string json_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 8);
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", c);
          out += b;
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  return out;
}

void on_signal(int sig) {
  if (sig == SIGHUP)
    g_daemon_reload = 1;
  else
    g_daemon_stop = 1;
}

}  // namespace

bool init_logging(const std::string& name, const DaemonOptions& o, std::string* err) {
  // stderr: stdout carries only the documented output.
  auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  g_logger = std::make_shared<spdlog::logger>(name, sink);
  g_json = o.log_format == "json";
  if (g_json)
    g_logger->set_pattern(R"({"ts":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l","logger":"%n",%v})",
                          spdlog::pattern_time_type::utc);
  else
    g_logger->set_pattern("%Y-%m-%dT%H:%M:%S.%fZ %n %l: %v", spdlog::pattern_time_type::utc);
  auto lvl = spdlog::level::from_str(o.log_level);
  if (lvl == spdlog::level::off) {
    *err = "bad --log-level '" + o.log_level + "'";
    return false;
  }
  g_logger->set_level(lvl);
  g_logger->flush_on(spdlog::level::debug);
  return true;
}

void log(Level l, const std::string& msg) {
  if (!g_logger) {
    std::fprintf(stderr, "%s\n", msg.c_str());
    return;
  }
  spdlog::level::level_enum lv = l == Level::debug  ? spdlog::level::debug
                                 : l == Level::info ? spdlog::level::info
                                 : l == Level::warn ? spdlog::level::warn
                                                    : spdlog::level::err;
  if (g_json)
    g_logger->log(lv, "\"msg\":\"{}\"", json_escape(msg));
  else
    g_logger->log(lv, "{}", msg);
}

void log_limited(Level l, const std::string& key, const std::string& msg,
                 std::chrono::seconds every) {
  struct Slot {
    std::chrono::steady_clock::time_point last{};
    uint64_t suppressed = 0;
  };
  static std::mutex mu;
  static std::map<std::string, Slot> slots;
  std::string text;
  {
    std::lock_guard<std::mutex> lk(mu);
    Slot& s = slots[key];
    auto now = std::chrono::steady_clock::now();
    if (s.last != std::chrono::steady_clock::time_point{} && now - s.last < every) {
      ++s.suppressed;
      return;
    }
    text = msg;
    if (s.suppressed) text += " (" + std::to_string(s.suppressed) + " similar suppressed)";
    s.last = now;
    s.suppressed = 0;
  }
  log(l, text);
}

// ---- metrics ----

void Metrics::counter(const std::string& name, const std::string& help) {
  std::lock_guard<std::mutex> lk(mu_);
  families_[name].type = "counter";
  families_[name].help = help;
}
void Metrics::gauge(const std::string& name, const std::string& help) {
  std::lock_guard<std::mutex> lk(mu_);
  families_[name].type = "gauge";
  families_[name].help = help;
}
void Metrics::histogram(const std::string& name, const std::string& help,
                        std::vector<double> bounds) {
  std::lock_guard<std::mutex> lk(mu_);
  Family& f = families_[name];
  f.type = "histogram";
  f.help = help;
  f.bounds = std::move(bounds);
  f.buckets.assign(f.bounds.size(), 0);
}
void Metrics::add(const std::string& name, double v, const std::string& labels) {
  std::lock_guard<std::mutex> lk(mu_);
  families_[name].values[labels] += v;
}
void Metrics::set(const std::string& name, double v, const std::string& labels) {
  std::lock_guard<std::mutex> lk(mu_);
  families_[name].values[labels] = v;
}
void Metrics::observe(const std::string& name, double v) {
  std::lock_guard<std::mutex> lk(mu_);
  Family& f = families_[name];
  for (size_t i = 0; i < f.bounds.size(); ++i)
    if (v <= f.bounds[i]) f.buckets[i] += 1;
  f.sum += v;
  ++f.count;
}

std::string Metrics::label(const std::string& key, const std::string& value) {
  std::string v;
  for (char c : value) {
    if (c == '\\' || c == '"') v.push_back('\\');
    if (c == '\n') {
      v += "\\n";
      continue;
    }
    v.push_back(c);
  }
  return "{" + key + "=\"" + v + "\"}";
}

// Shortest round trip, as Go's strconv.FormatFloat(v, 'g', -1) and
// Python's repr: precision(17) printed 0.05 as 0.050000000000000003.
std::string prom_number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char b[64];
  auto r = std::to_chars(b, b + sizeof b, v);
  return std::string(b, r.ptr);
}

void Metrics::standard(const std::string& version) {
  gauge("reflex_build_info", "The reflex build: its version, as a label; always 1.");
  set("reflex_build_info", 1, label("version", version));
  std::lock_guard<std::mutex> lk(mu_);
  process_ = true;
}

namespace {
std::string num(double v) {
  return prom_number(v);
}
}  // namespace

std::string Metrics::render() const {
  std::lock_guard<std::mutex> lk(mu_);
  std::string out;
  for (const auto& [name, f] : families_) {
    if (f.type.empty()) continue;
    out += "# HELP " + name + " " + f.help + "\n# TYPE " + name + " " + f.type + "\n";
    if (f.type == "histogram") {
      for (size_t i = 0; i < f.bounds.size(); ++i)
        out += name + "_bucket{le=\"" + num(f.bounds[i]) + "\"} " + num(f.buckets[i]) + "\n";
      out += name + "_bucket{le=\"+Inf\"} " + std::to_string(f.count) + "\n";
      out += name + "_sum " + num(f.sum) + "\n" + name + "_count " + std::to_string(f.count) + "\n";
      continue;
    }
    if (f.values.empty()) out += name + " 0\n";
    for (const auto& [labels, v] : f.values) out += name + labels + " " + num(v) + "\n";
  }
  if (process_) out += render_process_metrics();
  return out;
}

struct MetricsServer::Impl {
  void* server = nullptr;  // http_api()'s handle
};

MetricsServer::MetricsServer() : impl_(std::make_unique<Impl>()) {}
MetricsServer::~MetricsServer() {
  if (impl_->server) http_api(nullptr)->stop(impl_->server);
}

bool MetricsServer::start(const std::string& addr_port, const Metrics* m, const Health* health,
                          std::string* err) {
  auto colon = addr_port.rfind(':');
  int port = 0;
  if (colon == std::string::npos || (port = std::atoi(addr_port.c_str() + colon + 1)) <= 0 ||
      port > 65535) {
    *err = "bad --metrics '" + addr_port + "' (expected ADDR:PORT, e.g. 127.0.0.1:9464)";
    return false;
  }
  std::string why;
  const HttpApi* http = http_api(&why);
  if (!http) {
    *err = "--metrics: " + why;
    return false;
  }
  auto handler = [m, health](const std::string& path) {
    HttpAnswer a;
    if (path == "/metrics") {
      a.status = 200;
      a.content_type = "text/plain; version=0.0.4; charset=utf-8";
      a.body = m->render();
    } else if (health && (path == "/healthz" || path == "/readyz")) {
      Health::Answer h = path == "/healthz" ? health->live() : health->ready();
      a.status = h.status;
      a.body = h.body + "\n";
    } else {
      a.body = "not found; try /metrics, /healthz, /readyz\n";
    }
    return a;
  };
  impl_->server = http->serve(addr_port.substr(0, colon), port, handler, &why);
  if (!impl_->server) {
    *err = "cannot listen on " + addr_port + " for --metrics";
    return false;
  }
  return true;
}

void install_daemon_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a Redis or Alertmanager connection closing under a write
}

void sleep_unless_stopped(std::chrono::milliseconds d) {
  auto end = std::chrono::steady_clock::now() + d;
  while (!g_daemon_stop && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(std::min<std::chrono::milliseconds>(
        std::chrono::milliseconds(20), std::chrono::duration_cast<std::chrono::milliseconds>(
                                           end - std::chrono::steady_clock::now()) +
                                           std::chrono::milliseconds(1)));
}

void Backoff::failed() {
  delay_ = delay_.count() == 0 ? first_ : std::min(cap_, delay_ * 2);
  next_ = std::chrono::steady_clock::now() + delay_;
}

bool read_secret_file(const std::string& path, std::string* out, std::string* err) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    *err = path + ": " + std::strerror(errno);
    return false;
  }
  if (!S_ISREG(st.st_mode) || st.st_size > 4096) {
    *err = path + ": not a secret file (a regular file of at most 4 KiB)";
    return false;
  }
  if (st.st_mode & S_IROTH) {
    *err = path + ": readable by every user; a secret must not be (chmod 600)";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.eof() && in.fail()) {
    *err = path + ": cannot read";
    return false;
  }
  const size_t b = text.find_first_not_of(" \t\r\n"), e = text.find_last_not_of(" \t\r\n");
  *out = b == std::string::npos ? "" : text.substr(b, e - b + 1);
  return true;
}

bool redis_password(const std::string& url, const std::string& password_file, std::string* password,
                    std::string* err) {
  password->clear();
  if (!password_file.empty()) {
    if (!read_secret_file(password_file, password, err)) return false;
    if (password->empty()) {
      *err = password_file + ": empty";
      return false;
    }
  } else if (const char* env = std::getenv("REFLEX_REDIS_PASSWORD"); env && *env) {
    *password = env;
  }
  if (bus::redact_url(url) != url)
    log(Level::warn,
        "the --redis URL holds a password, which every user can read in /proc/PID/cmdline: "
        "give it in --redis-password-file or $REFLEX_REDIS_PASSWORD instead");
  return true;
}

std::string default_owner_name() {
  char h[256] = {0};
  gethostname(h, sizeof h - 1);
  return std::string(h) + "-" + std::to_string(getpid());
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace reflex::deploy
