// A bundle's sources.json and the flags that declare what a file is
// (reflex/sources.h).
#include "reflex/sources.h"

#include <fnmatch.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

namespace reflex {

namespace {

constexpr off_t kMaxSourcesBytes = 1 << 20;

bool glob_matches(const std::string& glob, const std::string& path) {
  if (glob.find('/') != std::string::npos) return ::fnmatch(glob.c_str(), path.c_str(), 0) == 0;
  const size_t slash = path.rfind('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  return ::fnmatch(glob.c_str(), name.c_str(), 0) == 0;
}

bool any_matches(const std::vector<std::string>& globs, const std::string& path) {
  for (const std::string& g : globs)
    if (glob_matches(g, path)) return true;
  return false;
}

}  // namespace

void SourceDeclarations::apply(const std::string& path, FileContext* ctx) const {
  if (any_matches(kernel_capture, path))
    ctx->source = FileSource::kernel_capture;
  else if (any_matches(system_log, path))
    ctx->source = FileSource::system_log;
  else if (any_matches(job_output, path))
    ctx->source = FileSource::job_output;
  if (any_matches(collector, path)) ctx->collector = true;
}

std::string SourceDeclarations::to_json() const {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  auto put = [&](const char* key, const std::vector<std::string>& v) {
    if (!v.empty()) j[key] = v;
  };
  put("kernel_capture", kernel_capture);
  put("system_log", system_log);
  put("job_output", job_output);
  put("collector", collector);
  return j.dump(2) + "\n";
}

bool parse_source_declarations(const std::string& text, const std::string& origin,
                               SourceDeclarations* out, std::string* error) {
  // A key given twice is an error, as in topology.json: the last would win in silence.
  std::string dup;
  std::vector<std::string> seen;  // the top object's keys
  auto cb = [&](int depth, nlohmann::json::parse_event_t ev, nlohmann::json& parsed) {
    if (depth == 1 && ev == nlohmann::json::parse_event_t::key) {
      const std::string k = parsed.get<std::string>();
      for (const auto& s : seen)
        if (s == k && dup.empty()) dup = k;
      seen.push_back(k);
    }
    return true;
  };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text, cb);
  } catch (const nlohmann::json::exception& e) {
    *error = origin + ": not JSON: " + e.what();
    return false;
  }
  if (!dup.empty()) {
    *error = origin + ": key '" + dup + "' given twice";
    return false;
  }
  if (!j.is_object()) {
    *error = origin + ": expected an object of glob lists";
    return false;
  }
  SourceDeclarations d;
  for (auto& [key, v] : j.items()) {
    std::vector<std::string>* into = key == "kernel_capture" ? &d.kernel_capture
                                     : key == "system_log"   ? &d.system_log
                                     : key == "job_output"   ? &d.job_output
                                     : key == "collector"    ? &d.collector
                                                             : nullptr;
    if (!into) {
      *error = origin + ": unknown key '" + key +
               "' (kernel_capture, system_log, job_output, collector)";
      return false;
    }
    if (!v.is_array()) {
      *error = origin + ": " + key + ": expected a list of globs";
      return false;
    }
    for (auto& g : v) {
      if (!g.is_string() || g.get<std::string>().empty()) {
        *error = origin + ": " + key + ": each glob is a non-empty string";
        return false;
      }
      into->push_back(g.get<std::string>());
    }
  }
  *out = std::move(d);
  return true;
}

bool read_source_declarations(const std::string& path, SourceDeclarations* out,
                              std::string* error) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    *error = path + ": " + std::strerror(errno);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    *error = path + ": not a regular file";
    return false;
  }
  if (st.st_size > kMaxSourcesBytes) {
    *error = path + ": over the limit of " + std::to_string(kMaxSourcesBytes) + " bytes";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  std::string text;
  text.resize(static_cast<size_t>(kMaxSourcesBytes) + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) {
    *error = path + ": cannot read";
    return false;
  }
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > static_cast<size_t>(kMaxSourcesBytes)) {
    *error = path + ": grew past the limit while it was read";
    return false;
  }
  return parse_source_declarations(text, path, out, error);
}

}  // namespace reflex
