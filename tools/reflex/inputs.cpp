#include "inputs.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "reflex/modules/archive_api.h"

namespace reflex::cli {

namespace fs = std::filesystem;

namespace {

// Bounds for an archive: a bundle is logs, not a disk image.
constexpr uint64_t kMaxArchiveBytes = 8ull << 30;
constexpr size_t kMaxArchiveEntries = 200000;

bool ends_with(const std::string& s, const char* suf) {
  const size_t n = std::char_traits<char>::length(suf);
  return s.size() >= n && s.compare(s.size() - n, n, suf) == 0;
}

// A host name from a file name: its stem before the first dot
// ("node-07.log" -> "node-07"). The usual names of logs and tool captures
// ("kern.log", "dmesg.txt", "nvidia-bug-report.log.gz") name no host: then the
// parent directory does ("gpu-07/kern.log"), else "localhost".
std::string host_from_name(const std::string& path) {
  auto generic = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const char* g : {"kern",
                          "kernel",
                          "dmesg",
                          "messages",
                          "syslog",
                          "console",
                          "journal",
                          "journalctl",
                          "train",
                          "training",
                          "log",
                          "logs",
                          "output",
                          "out",
                          "stdout",
                          "stderr",
                          "nvidia-bug-report",
                          "nvidia-smi",
                          "lspci",
                          "ibstat",
                          "dcgmi",
                          "var",
                          "tmp",
                          "fabricmanager",
                          "incident",
                          "capture"})
      if (s == g) return true;
    return s.empty();
  };
  fs::path p(path);
  std::string base = p.filename().string();
  std::string stem = base.substr(0, base.find('.'));
  if (!generic(stem)) return stem;
  std::string parent = fs::absolute(p).parent_path().filename().string();
  if (!generic(parent) && parent != "/" && !parent.empty()) return parent;
  return "localhost";
}

// An archive member's path, or "" when it must not be written (absolute,
// "..", empty).
std::string safe_member(const char* name) {
  if (!name || !*name) return "";
  fs::path p(name);
  if (p.is_absolute()) return "";
  fs::path out;
  for (const auto& part : p) {
    if (part == "..") return "";
    if (part == "." || part.empty()) continue;
    out /= part;
  }
  return out.string();
}

std::string local_host() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0 || !buf[0]) return "localhost";
  std::string h(buf);
  return h.substr(0, h.find('.'));
}

}  // namespace

void add_input_options(CLI::App& app, std::string* host, std::vector<std::string>* inputs) {
  app.add_option("--host", *host,
                 "host of the lines of plain files / stdin that carry no host field "
                 "(default: the file's name)");
  app.add_option("input", *inputs,
                 "an incident bundle directory (interfaces.md §3), a .tar.gz of one, or log files "
                 "(- = standard input)");
}

bool is_archive_name(const std::string& p) {
  for (const char* s :
       {".tar", ".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.bz2", ".tbz2", ".tar.zst"})
    if (ends_with(p, s)) return true;
  return false;
}

InputSet::~InputSet() {
  if (!tmp_.empty()) {
    std::error_code ec;
    fs::remove_all(tmp_, ec);
  }
}

bool InputSet::make_tmp(std::string* error) {
  if (!tmp_.empty()) return true;
  std::string base = (fs::temp_directory_path() / "reflex-input-XXXXXX").string();
  if (!mkdtemp(base.data())) {
    *error = "cannot create a temporary directory under " + fs::temp_directory_path().string();
    return false;
  }
  tmp_ = base;
  return true;
}

bool InputSet::add_file(const std::string& path, const std::string& host, std::string* error) {
  const bool stdin_input = path == "-";
  // Piped input comes from this machine (`dmesg -T | reflex diagnose -`).
  std::string h = !host.empty() ? host : stdin_input ? local_host() : host_from_name(path);
  fs::path dir = fs::path(tmp_) / "hosts" / h;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    *error = "cannot create " + dir.string() + ": " + ec.message();
    return false;
  }
  std::string name = stdin_input ? "stdin" : fs::path(path).filename().string();
  for (int i = 2; fs::exists(dir / name, ec); ++i)  // two files of one name on one host
    name = fs::path(name).stem().string() + "-" + std::to_string(i) +
           fs::path(name).extension().string();
  fs::path dst = dir / name;
  if (stdin_input) {
    std::ofstream out(dst, std::ios::binary);
    out << std::cin.rdbuf();
    if (!out) {
      *error = "cannot copy standard input to " + dst.string();
      return false;
    }
  } else {
    fs::create_symlink(fs::absolute(path), dst, ec);
    if (ec) {
      *error = "cannot link " + path + ": " + ec.message();
      return false;
    }
  }
  evidence_["hosts/" + h + "/" + name] = stdin_input ? "<stdin>" : path;
  notes_.push_back(std::string(stdin_input ? "standard input" : path) +
                   ": lines without a host field are placed on '" + h + "'" +
                   (host.empty() ? " (from the file name; --host sets it)" : ""));
  return true;
}

bool InputSet::unpack(const std::string& archive, std::string* error) {
  std::string why;
  const ArchiveApi* ar = archive_api(&why);
  if (!ar) {
    *error = archive + ": cannot read archives: " + why;
    return false;
  }
  void* a = ar->open(archive, &why);
  if (!a) {
    *error = archive + ": not a readable tar archive (" + why + ")";
    return false;
  }
  uint64_t bytes = 0;
  size_t entries = 0, skipped = 0;
  bool ok = true;
  std::vector<char> buf(1 << 16);
  std::string name;
  MemberType type = MemberType::other;
  int r;
  while ((r = ar->next(a, &name, &type, &why)) == 1) {
    if (++entries > kMaxArchiveEntries) {
      *error = archive + ": more than " + std::to_string(kMaxArchiveEntries) + " entries";
      ok = false;
      break;
    }
    std::string rel = safe_member(name.c_str());
    if (rel.empty() || type != MemberType::file) {
      if (type != MemberType::directory) ++skipped;  // links, devices, "../x"
      continue;
    }
    fs::path dst = fs::path(tmp_) / "unpacked" / rel;
    std::error_code ec;
    fs::create_directories(dst.parent_path(), ec);
    std::ofstream out(dst, std::ios::binary);
    long n;
    while ((n = ar->read(a, buf.data(), buf.size(), &why)) > 0) {
      bytes += static_cast<uint64_t>(n);
      if (bytes > kMaxArchiveBytes) break;
      out.write(buf.data(), n);
    }
    if (n < 0 || bytes > kMaxArchiveBytes || !out) {
      *error = archive + ": " +
               (bytes > kMaxArchiveBytes ? std::string("more than 8 GiB unpacked")
                : n < 0                  ? why
                                         : "cannot write " + dst.string());
      ok = false;
      break;
    }
  }
  if (ok && r < 0) {
    *error = archive + ": damaged archive (" + why + ")";
    ok = false;
  }
  ar->close(a);
  if (!ok) return false;
  if (skipped)
    notes_.push_back(archive + ": " + std::to_string(skipped) +
                     " member(s) that are not plain files inside the archive were skipped");
  // The bundle is the unpacked directory holding hosts/, at the top or one
  // level down (`tar czf b.tgz incident/`).
  fs::path root = fs::path(tmp_) / "unpacked";
  std::error_code ec;
  if (fs::is_directory(root / "hosts", ec)) {
    bundle_ = root.string();
    return true;
  }
  for (auto it = fs::directory_iterator(root, ec); !ec && it != fs::directory_iterator();
       it.increment(ec))
    if (it->is_directory(ec) && fs::is_directory(it->path() / "hosts", ec)) {
      bundle_ = it->path().string();
      return true;
    }
  *error = archive + ": no incident bundle inside (a directory with hosts/, interfaces.md §3)";
  return false;
}

bool InputSet::prepare(const std::vector<std::string>& args, const std::string& host,
                       std::string* error) {
  std::error_code ec;
  if (args.empty()) {
    *error = "missing input: an incident bundle directory, a .tar.gz of one, log files or -";
    return false;
  }
  if (args.size() == 1 && args[0] != "-" && fs::is_directory(args[0], ec)) {
    bundle_ = args[0];
    return true;
  }
  if (args.size() == 1 && is_archive_name(args[0])) {
    return make_tmp(error) && unpack(args[0], error);
  }
  int stdin_count = 0;
  for (const std::string& a : args) {
    if (a == "-") {
      if (++stdin_count > 1) {
        *error = "'-' (standard input) given twice";
        return false;
      }
      continue;
    }
    if (fs::is_directory(a, ec)) {
      *error = a + ": a bundle directory is diagnosed alone, not with other inputs";
      return false;
    }
    if (is_archive_name(a)) {
      *error = a + ": an archived bundle is diagnosed alone, not with other inputs";
      return false;
    }
    if (!fs::is_regular_file(a, ec) || access(a.c_str(), R_OK) != 0) {
      *error = a + ": no such readable file";
      return false;
    }
  }
  if (!make_tmp(error)) return false;
  for (const std::string& a : args)
    if (!add_file(a, host, error)) return false;
  bundle_ = tmp_;
  return true;
}

std::string InputSet::map_text(std::string text) const {
  for (const auto& [rel, user] : evidence_) {
    const std::string key = rel + ":";
    for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + user.size()))
      text.replace(at, rel.size(), user);
  }
  return text;
}

std::string InputSet::map_evidence(const std::string& ev) const {
  auto colon = ev.rfind(':');
  if (colon == std::string::npos) return ev;
  auto it = evidence_.find(ev.substr(0, colon));
  return it == evidence_.end() ? ev : it->second + ev.substr(colon);
}

}  // namespace reflex::cli
