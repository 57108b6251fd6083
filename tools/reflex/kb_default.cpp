// The knowledge base a command uses when --kb is not given, in this order:
//  1. $REFLEX_KB;
//  2. a binary in its build tree (REFLEX_BUILD_BIN_DIR): the build's compiled
//     share/reflex/kb.rfxkb when no source under kb/ is newer, else the
//     source tree's kb/ itself, so a KB edited since the last build is what
//     runs (and an installed KB elsewhere is never picked up by mistake);
//  3. an installed binary: BINDIR/../share/reflex/kb.rfxkb (the artifact
//     `install` puts there), then BINDIR/../share/reflex/kb (the sources).
// The places are compile-time paths or relative to /proc/self/exe, so a copy
// of the binary looks beside where it was copied to.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "cli_common.h"

namespace reflex::cli {

namespace {

namespace fs = std::filesystem;

struct Place {
  fs::path path;
  std::string what;       // said with the path when it is taken
  fs::path sources = {};  // an artifact is taken only when not older than these
};

fs::path exe_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}

bool same_dir(const fs::path& a, const fs::path& b) {
  std::error_code ec1, ec2;
  const fs::path ca = fs::weakly_canonical(a, ec1), cb = fs::weakly_canonical(b, ec2);
  return !ec1 && !ec2 && ca == cb;
}

bool in_build_tree([[maybe_unused]] const fs::path& dir) {
#ifdef REFLEX_BUILD_BIN_DIR
  return !dir.empty() && same_dir(dir, REFLEX_BUILD_BIN_DIR);
#else
  return false;
#endif
}

// The places looked at, in order (none checked yet).
std::vector<Place> places() {
  std::vector<Place> out;
  const fs::path dir = exe_dir();
#if defined(REFLEX_BUILD_KB) && defined(REFLEX_SOURCE_KB)
  if (in_build_tree(dir)) {
    out.push_back({REFLEX_BUILD_KB, "compiled by this build", REFLEX_SOURCE_KB});
    out.push_back({REFLEX_SOURCE_KB, "this build's source kb/"});
    return out;
  }
#endif
#ifdef REFLEX_KB_FROM_BIN
  if (!dir.empty()) {
    const fs::path share = (dir / REFLEX_KB_FROM_BIN).lexically_normal();
    out.push_back({share / "kb.rfxkb", "the installed KB"});
    out.push_back({share / "kb", "the installed KB sources"});
  }
#endif
  return out;
}

// The newest modification time of the .rfx files and directories under dir
// (a directory's time changes when a file is removed from it).
std::optional<fs::file_time_type> newest_source(const fs::path& dir) {
  std::error_code ec;
  fs::file_time_type newest = fs::last_write_time(dir, ec);
  if (ec) return std::nullopt;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code fec;
    const bool counts = it->is_directory(fec) || it->path().extension() == ".rfx";
    if (!counts) continue;
    const fs::file_time_type t = it->last_write_time(fec);
    if (!fec && t > newest) newest = t;
  }
  if (ec) return std::nullopt;
  return newest;
}

// A build's artifact is usable when it exists and kb/ has not changed since.
bool artifact_current(const fs::path& artifact, const fs::path& sources) {
  std::error_code ec;
  const fs::file_time_type built = fs::last_write_time(artifact, ec);
  if (ec) return false;
  const std::optional<fs::file_time_type> src = newest_source(sources);
  return src && *src <= built;
}

}  // namespace

std::string kb_default_help() {
  std::string s = "$REFLEX_KB";
  for (const Place& p : places())
    s += ", else " + p.path.string() + (p.sources.empty() ? "" : " (unless older than kb/)");
  return s;
}

bool resolve_kb(std::string* kb_path, const char* name) {
  if (!kb_path->empty()) return true;
  if (const char* env = std::getenv("REFLEX_KB"); env != nullptr && *env != '\0') {
    *kb_path = env;
    std::fprintf(stderr, "%s: knowledge base %s (from REFLEX_KB)\n", name, env);
    return true;
  }
  const std::vector<Place> ps = places();
  for (const Place& p : ps) {
    std::error_code ec;
    if (!fs::exists(p.path, ec)) continue;
    if (!p.sources.empty() && !artifact_current(p.path, p.sources)) continue;
    *kb_path = p.path.string();
    std::fprintf(stderr, "%s: knowledge base %s (%s; --kb or REFLEX_KB to choose another)\n", name,
                 kb_path->c_str(), p.what.c_str());
    return true;
  }
  std::fprintf(stderr, "%s: no knowledge base: give --kb KB or set REFLEX_KB; looked at:\n", name);
  for (const Place& p : ps) std::fprintf(stderr, "  %s\n", p.path.string().c_str());
  if (ps.empty()) std::fputs("  (no default place known for this binary)\n", stderr);
  return false;
}

}  // namespace reflex::cli
