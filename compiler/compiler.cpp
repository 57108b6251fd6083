// The library entry points: load a unit (files, directories, imports), parse,
// run the semantic pipeline, lower. Nothing escapes as an exception.
#include "reflex/compiler.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "diagnostics.h"
#include "parser.h"
#include "reflex/artifact.h"
#include "sema.h"

#ifndef REFLEX_VERSION
#define REFLEX_VERSION "0.0.0"
#endif

namespace reflex {

namespace fs = std::filesystem;
using namespace compiler;

namespace {

std::string kind_of(fs::file_type t) {
  switch (t) {
    case fs::file_type::directory:
      return "a directory";
    case fs::file_type::fifo:
      return "a FIFO";
    case fs::file_type::socket:
      return "a socket";
    case fs::file_type::character:
      return "a character device";
    case fs::file_type::block:
      return "a block device";
    case fs::file_type::not_found:
      return "not found";
    default:
      return "not a plain file";
  }
}

struct Loader {
  const CompileOptions& options;
  std::vector<SourceFile> files;
  std::set<std::string> seen;  // canonical paths
  std::string io_message;

  static std::string canonical(const fs::path& p) {
    std::error_code ec;
    auto c = fs::weakly_canonical(p, ec);
    return ec ? fs::absolute(p, ec).lexically_normal().string() : c.string();
  }

  // Reads one file; too-large files are not read (the parser reports them).
  bool add_file(const fs::path& p, bool from_import) {
    std::string canon = canonical(p);
    if (!seen.insert(canon).second) return true;
    SourceFile f;
    f.path = p.lexically_normal().string();
    f.abs_path = canon;
    f.from_import = from_import;
    std::error_code ec;
    // A device, FIFO or socket never ends or blocks (`reflexc check /dev/zero`
    // grew without bound): sources are regular files.
    const auto st = fs::status(p, ec);
    if (ec || !fs::is_regular_file(st)) {
      io_message = "cannot read '" + f.path +
                   "': " + (ec ? ec.message() : "not a regular file (" + kind_of(st.type()) + ")");
      return false;
    }
    auto size = fs::file_size(p, ec);
    if (!ec && size > options.max_file_bytes) {
      // Not read at all; parse_file reports E001.
      f.too_large = static_cast<size_t>(size);
      files.push_back(std::move(f));
      return true;
    }
    std::ifstream in(p, std::ios::binary);
    if (!in) {
      io_message = "cannot read '" + f.path + "': " + std::strerror(errno);
      return false;
    }
    // Bounded even if the file grew since its size was taken.
    f.text.resize(options.max_file_bytes + 1);
    in.read(f.text.data(), static_cast<std::streamsize>(f.text.size()));
    if (in.bad()) {
      io_message = "cannot read '" + f.path + "': read error";
      return false;
    }
    f.text.resize(static_cast<size_t>(in.gcount()));
    if (f.text.size() > options.max_file_bytes) {
      f.too_large = f.text.size();
      f.text.clear();
    }
    files.push_back(std::move(f));
    return true;
  }

  bool add_path(const std::string& arg) {
    fs::path p(arg);
    std::error_code ec;
    auto st = fs::status(p, ec);
    if (ec || !fs::exists(st)) {
      io_message = "no such file or directory: '" + arg + "'";
      return false;
    }
    if (fs::is_directory(st)) {
      std::vector<fs::path> found;
      fs::recursive_directory_iterator it(p, fs::directory_options::skip_permission_denied, ec);
      if (ec) {
        io_message = "cannot read directory '" + arg + "': " + ec.message();
        return false;
      }
      for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (ec) {
          io_message = "cannot read directory '" + arg + "': " + ec.message();
          return false;
        }
        if (it->path().extension() == ".rfx" && it->is_regular_file(ec))
          found.push_back(it->path());
      }
      if (found.empty()) {
        io_message = "no .rfx files in directory '" + arg + "'";
        return false;
      }
      std::sort(found.begin(), found.end());
      for (const auto& f : found)
        if (!add_file(f, false)) return false;
      return true;
    }
    return add_file(p, false);
  }
};

std::string source_hash(const std::vector<SourceFile>& files) {
  std::string all;
  for (const auto& f : files) all += f.text;
  return sha256_hex(all);
}

}  // namespace

namespace {

// Parses the loaded files (following imports), runs the passes, lowers.
void compile_loaded(Loader& loader, const CompileOptions& options, CompileResult& result) {
  DiagEngine diags(options);
  // Parse; follow imports (relative to the importing file) breadth first.
  std::map<std::pair<std::string, size_t>, std::string> import_paths;  // (file, decl idx)
  for (size_t i = 0; i < loader.files.size(); ++i) {
    SourceFile& f = loader.files[i];
    if (!f.too_large) diags.add_source(f.path, f.text);
    parse_file(f, diags, options);
    std::vector<std::pair<size_t, Value>> imports;
    for (size_t k = 0; k < f.decls.size(); ++k)
      if (f.decls[k].kind == Decl::Kind::import && !f.decls[k].values.empty())
        imports.push_back({k, f.decls[k].values[0]});
    // `f` may dangle once an import is appended: copy what we need.
    std::string from_path = f.path, from_abs = f.abs_path;
    for (const auto& [k, v] : imports) {
      if (!options.allow_imports) {
        diags.report(DiagId::import_not_found, v.range,
                     "cannot import '" + v.text + "': imports are disabled");
        continue;
      }
      fs::path target = fs::path(from_abs).parent_path() / v.text;
      fs::path display = (fs::path(from_path).parent_path() / v.text).lexically_normal();
      std::error_code ec;
      if (v.text.empty() || !fs::is_regular_file(target, ec)) {
        diags.report(
            DiagId::import_not_found, v.range,
            "cannot import '" + v.text + "': no such file (looked for '" + display.string() + "')");
        continue;
      }
      std::string canon = Loader::canonical(target);
      if (!loader.seen.count(canon)) {
        if (!loader.add_file(display, true)) {
          diags.report(DiagId::import_not_found, v.range,
                       "cannot import '" + v.text + "': " + loader.io_message);
          continue;
        }
      }
      // The display path under which the target is known in the unit.
      for (const auto& g : loader.files)
        if (g.abs_path == canon) import_paths[{from_path, k}] = g.path;
    }
  }
  std::vector<SourceFile> files = std::move(loader.files);
  std::sort(files.begin(), files.end(),
            [](const SourceFile& a, const SourceFile& b) { return a.path < b.path; });
  for (const auto& f : files) result.files.push_back(f.path);

  Sema sema(files, diags, options);
  run_pipeline(sema);
  std::map<const Decl*, std::string> import_targets;
  for (const auto& f : files)
    for (size_t k = 0; k < f.decls.size(); ++k)
      if (auto it = import_paths.find({f.path, k}); it != import_paths.end())
        import_targets[&f.decls[k]] = it->second;
  pass_usage(sema, import_targets);

  result.diagnostics = diags.take();
  if (result.errors() == 0) {
    KnowledgeBase kb = lower(sema);
    kb.artifact.format_version = kArtifactFormatVersion;
    kb.artifact.compiler_version = REFLEX_VERSION;
    kb.artifact.source_hash = source_hash(files);
    result.kb = std::move(kb);
  }
}

void internal_error(CompileResult& result, const char* what) {
  result.io_error = true;
  result.io_message = std::string("internal compiler error: ") + what;
}

}  // namespace

CompileResult compile(const std::vector<std::string>& paths, const CompileOptions& options) {
  CompileResult result;
  try {
    if (paths.empty()) {
      result.io_error = true;
      result.io_message = "no input files";
      return result;
    }
    Loader loader{options, {}, {}, {}};
    for (const auto& p : paths) {
      if (!loader.add_path(p)) {
        result.io_error = true;
        result.io_message = loader.io_message;
        return result;
      }
    }
    compile_loaded(loader, options, result);
  } catch (const std::exception& e) {
    internal_error(result, e.what());
  } catch (...) {
    internal_error(result, "unknown exception");
  }
  return result;
}

CompileResult compile_text(const std::string& path, const std::string& text,
                           const CompileOptions& options) {
  CompileResult result;
  try {
    Loader loader{options, {}, {}, {}};
    SourceFile f;
    f.path = fs::path(path).lexically_normal().string();
    f.abs_path = Loader::canonical(path);
    f.text = text;
    loader.seen.insert(f.abs_path);
    loader.files.push_back(std::move(f));
    compile_loaded(loader, options, result);
  } catch (const std::exception& e) {
    internal_error(result, e.what());
  } catch (...) {
    internal_error(result, "unknown exception");
  }
  return result;
}

std::optional<KnowledgeBase> load_kb(const std::string& path, std::string* error, KbParts parts) {
  std::string scratch;
  if (error == nullptr) error = &scratch;
  try {
    std::optional<KnowledgeBase> kb;
    std::error_code ec;
    if (fs::is_regular_file(path, ec) && is_artifact_file(path)) {
      kb = load_artifact(path, error, parts);
      if (!kb) return std::nullopt;
    } else {
      // Loading for the runtime: validity only (cycles included). Inline
      // examples and the Hyperscan dry run are `reflexc check`'s job; the
      // runtime compiles its own Hyperscan database and reports what it rejects.
      CompileOptions options;
      options.check_examples = false;
      options.check_hyperscan = false;
      CompileResult r = compile({path}, options);
      if (r.io_error) {
        *error = r.io_message;
        return std::nullopt;
      }
      if (!r.kb) {
        *error = render_diagnostics(r, DiagFormat::text);
        return std::nullopt;
      }
      kb = std::move(r.kb);
    }
    const std::string& req = kb->meta.requires_engine;
    if (!req.empty()) {
      std::string err;
      if (!engine_version_satisfies(engine_version(), req, &err)) {
        *error = err.empty() ? std::string("knowledge base '") + path + "' requires engine " + req +
                                   "; this is " + engine_version()
                             : "knowledge base '" + path + "': " + err;
        return std::nullopt;
      }
    }
    return kb;
  } catch (const std::exception& e) {
    *error = std::string("cannot load knowledge base '") + path + "': " + e.what();
    return std::nullopt;
  }
}

}  // namespace reflex
