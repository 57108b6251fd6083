// Who speaks through which file (docs/formats.md, "Who speaks for what"):
// the declarations a bundle's `sources.json`, `reflex diagnose
// --kernel-capture/--collector` and the agent's flags make. Without one, a
// file's name says what it is.
#pragma once

#include <string>
#include <vector>

#include "reflex/log_format.h"

namespace reflex {

// Shell globs (fnmatch) matched against a file's bundle-relative path
// ("hosts/*/console.txt"), or against its name alone when the glob holds no
// '/' ("alerts.log"). A file matched by several kinds takes the first of
// kernel_capture, system_log, job_output.
struct SourceDeclarations {
  std::vector<std::string> kernel_capture;  // every line a kernel line
  std::vector<std::string> system_log;      // lines carry their own transport
  std::vector<std::string> job_output;      // no line a kernel line
  std::vector<std::string> collector;       // lines may name other hosts
  bool empty() const {
    return kernel_capture.empty() && system_log.empty() && job_output.empty() && collector.empty();
  }
  // Sets ctx->source and ctx->collector for the file at `path`.
  void apply(const std::string& path, FileContext* ctx) const;
  // The declarations as sources.json holds them.
  std::string to_json() const;
};

// Reads a sources.json: {"kernel_capture": [globs], "system_log": [...],
// "job_output": [...], "collector": [...]}; every key optional, no other
// key. A regular file of at most 1 MB. False and *error (naming the file and
// the key) otherwise.
bool read_source_declarations(const std::string& path, SourceDeclarations* out, std::string* error);
// The same from text (`origin` names it in errors).
bool parse_source_declarations(const std::string& text, const std::string& origin,
                               SourceDeclarations* out, std::string* error);

}  // namespace reflex
