#include "inputs.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <vector>

#include "reflex/log_format.h"
#include "reflex/modules/archive_api.h"
#include "reflex/sources.h"

namespace reflex::cli {

namespace fs = std::filesystem;

namespace {

// Bounds for an archive: a bundle is logs, not a disk image.
constexpr size_t kMaxArchiveEntries = 200000;

bool ends_with(const std::string& s, const char* suf) {
  const size_t n = std::char_traits<char>::length(suf);
  return s.size() >= n && s.compare(s.size() - n, n, suf) == 0;
}

// A host name from a file name: its stem before the first dot
// ("node-07.log" -> "node-07"). The usual names of logs and tool captures
// ("kern.log", "dmesg.txt", "nvidia-bug-report.log.gz") name no host: then the
// parent directory does ("gpu-07/kern.log"), else "localhost". *how says which.
std::string host_from_name(const std::string& path, std::string* how) {
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
  if (!generic(stem)) {
    *how = "from the file name";
    return stem;
  }
  std::string parent = fs::absolute(p).parent_path().filename().string();
  if (!generic(parent) && parent != "/" && !parent.empty()) {
    *how = "from the name of its directory";
    return parent;
  }
  *how = "no line and no file name names one";
  return "localhost";
}

// A name that can be a host directory: what a host field may hold, and no
// path tricks ("..", a leading dot, '/').
bool usable_host(const std::string& h) {
  if (h.empty() || h.size() > 253 || h[0] == '.' || h[0] == '-') return false;
  for (char c : h)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' ||
          c == ':'))
      return false;
  return true;
}

// Whether a directory is an incident bundle (holds hosts/).
bool is_bundle_dir(const fs::path& d) {
  std::error_code ec;
  return fs::is_directory(d / "hosts", ec);
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

}  // namespace

void add_input_options(CLI::App& app, InputOptions* opts, std::vector<std::string>* inputs) {
  app.add_option("--host", opts->host,
                 "host of the lines of plain files / stdin that carry no host field "
                 "(default: the host the lines name, else the file's name)");
  app.add_option("--year", opts->year,
                 "year of year-less times (syslog, dmesg -H ...); default: from the input's "
                 "dated lines and headers, else the files' modification time")
      ->check(CLI::Range(1970, 9999));
  app.add_option("--timezone", opts->timezone,
                 "zone of zone-less times for hosts without a timezone file: +05:30, UTC or an "
                 "IANA name (default UTC)");
  app.add_option("--kernel-capture", opts->kernel_captures,
                 "declare a file a kernel capture: every line of it is a kernel line (a glob on "
                 "the bundle path or the file name, a file as given, or - for standard input; "
                 "repeatable). Without it only dmesg*, *kern*, messages*, console*, ... are, and "
                 "a kernel-shaped line elsewhere is refused")
      ->allow_extra_args(false);
  app.add_option("--collector", opts->collectors,
                 "declare a file a central collector (a syslog server's file): its lines may "
                 "name other hosts (a glob, a file as given; repeatable). Without it a line in a "
                 "host's file naming another known host is refused")
      ->allow_extra_args(false);
  app.add_option("--job", opts->job,
                 "the input's hosts are one job of this name: ranks are job/NAME/rankN and the "
                 "diagnosis names the job (without a topology, or one that declares no job; "
                 "with one that declares jobs, one of them)");
  app.add_option("--max-unpack", opts->max_unpack,
                 "largest total an archive may unpack to, in bytes (default 8 GiB; also at most "
                 "1000 times the archive's own size unless raised here)")
      ->check(CLI::PositiveNumber);
  app.add_option("input", *inputs,
                 "an incident bundle directory (interfaces.md §3), a directory of hosts' logs, a "
                 ".tar.gz of either, or log files (- = standard input)");
}

bool is_archive_name(const std::string& p) {
  for (const char* s :
       {".tar", ".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.bz2", ".tbz2", ".tar.zst"})
    if (ends_with(p, s)) return true;
  return false;
}

namespace {

// The temporary directory, for the signal handler: an interrupted run (an
// unpack of gigabytes, a long diagnosis) must not leave it behind.
char g_tmp_dir[4096];

extern "C" void remove_tmp_and_die(int sig) {
  // Only async-signal-safe calls: fork, execve, waitpid, signal, raise.
  if (g_tmp_dir[0]) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      char rm[] = "/bin/rm", rf[] = "-rf", dd[] = "--";
      char* argv[] = {rm, rf, dd, g_tmp_dir, nullptr};
      char* envp[] = {nullptr};
      ::execve(rm, argv, envp);
      ::_exit(127);
    }
    if (pid > 0) ::waitpid(pid, nullptr, 0);
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void remove_tmp_on_signals(const std::string& dir) {
  if (dir.size() >= sizeof g_tmp_dir) return;  // left to the destructor alone
  std::memcpy(g_tmp_dir, dir.c_str(), dir.size() + 1);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction sa {};
    sa.sa_handler = remove_tmp_and_die;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
  }
}

}  // namespace

InputSet::~InputSet() {
  if (!tmp_.empty()) {
    std::error_code ec;
    fs::remove_all(tmp_, ec);
    g_tmp_dir[0] = '\0';
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
  remove_tmp_on_signals(tmp_);
  return true;
}

// A free name for `name` in hosts/<host>/ (two files of one name on one host).
std::string InputSet::place(const std::string& host, const std::string& name) {
  fs::path dir = fs::path(tmp_) / "hosts" / host;
  std::error_code ec;
  fs::create_directories(dir, ec);
  std::string n = name;
  for (int i = 2; fs::exists(dir / n, ec) || fs::is_symlink(dir / n, ec); ++i)
    n = fs::path(name).stem().string() + "-" + std::to_string(i) +
        fs::path(name).extension().string();
  return n;
}

namespace {

// Standard input into `dst`, every write checked up to the close: a full
// temporary disk must be an error, not a shorter input read in silence.
bool copy_stdin(const std::string& dst, std::string* error) {
  FILE* out = std::fopen(dst.c_str(), "wb");
  if (!out) {
    *error = "cannot copy standard input to " + dst + ": " + std::strerror(errno);
    return false;
  }
  std::vector<char> buf(1 << 16);
  uint64_t total = 0;
  bool write_failed = false;
  for (;;) {
    const size_t n = std::fread(buf.data(), 1, buf.size(), stdin);
    if (n && std::fwrite(buf.data(), 1, n, out) != n) {
      write_failed = true;
      break;
    }
    total += n;
    if (n < buf.size()) break;
  }
  int write_errno = errno;
  const bool read_failed = std::ferror(stdin) != 0;
  if (std::fclose(out) != 0 && !write_failed) {  // buffered bytes that did not fit
    write_failed = true;
    write_errno = errno;
  }
  if (write_failed) {
    *error = "cannot copy standard input to " + dst + ": " + std::strerror(write_errno) +
             " (after " + std::to_string(total) + " bytes; set TMPDIR to a disk with room)";
    return false;
  }
  if (read_failed) {
    *error = "cannot read standard input: " + std::string(std::strerror(errno));
    return false;
  }
  if (total == 0) {
    *error = "no input: standard input is empty";
    return false;
  }
  return true;
}

}  // namespace

// One log file (or stdin, "-"): placed on --host, else the host its lines
// name, else its name's (host_from_name); `shown` is how evidence names it.
bool InputSet::add_file(const std::string& path, const std::string& shown, std::string* error) {
  const bool stdin_input = path == "-";
  std::string src = path;
  std::error_code ec;
  if (stdin_input) {  // copied first: its lines are read twice
    fs::create_directories(fs::path(tmp_) / "stdin", ec);
    src = (fs::path(tmp_) / "stdin" / "stdin").string();
    if (!copy_stdin(src, error)) return false;
  }
  const std::string name = stdin_input ? "stdin" : fs::path(path).filename().string();
  std::string h, how;
  if (!opts_.host.empty()) {
    h = opts_.host;
    how = "--host";
  } else if (auto named = host_named_in(src, name); named && usable_host(named->host)) {
    h = named->host;
    how = "named by " + named->how;
    if (named->hosts > 1)
      how += ", the most frequent of the " + std::to_string(named->hosts) + " hosts they name";
  } else if (stdin_input) {
    h = "stdin";
    how = "no line names a host; --host sets it";
  } else {
    h = host_from_name(path, &how);
    how += "; no line names a host; --host sets it";
  }
  const std::string placed = place(h, name);
  fs::path dst = fs::path(tmp_) / "hosts" / h / placed;
  if (stdin_input)
    fs::rename(src, dst, ec);
  else
    fs::create_symlink(fs::absolute(path), dst, ec);
  if (ec) {
    *error = "cannot place " + shown + ": " + ec.message();
    return false;
  }
  evidence_["hosts/" + h + "/" + placed] = shown;
  notes_.push_back((stdin_input ? std::string("standard input") : shown) +
                   ": lines without a host field are placed on '" + h + "' (" + how + ")");
  return true;
}

// `<dir>/<host>/...`: one host's files, under the host its lines name (the
// first file that names one), else the directory's name.
bool InputSet::add_host_dir(const std::string& dir, const std::string& shown, std::string* error) {
  std::vector<std::string> files;  // relative to dir, sorted
  std::error_code ec;
  for (auto it =
           fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->path().filename().string()[0] == '.') {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file(ec))
      files.push_back(it->path().lexically_relative(dir).generic_string());
  }
  std::sort(files.begin(), files.end());
  const std::string dname = fs::path(dir).filename().string();
  std::string h = dname, how = "the directory's name";
  for (const std::string& f : files) {
    if (f == "boot_time" || f == "timezone") continue;
    auto named = host_named_in((fs::path(dir) / f).string(), fs::path(f).filename().string());
    if (named && usable_host(named->host)) {
      h = named->host;
      how = "named by " + named->how + " in " + f;
      break;
    }
  }
  if (host_dirs_.count(h) && h != dname) {  // two directories name one host: keep them apart
    h = dname;
    how = "the directory's name";
  }
  if (!usable_host(h) || host_dirs_.count(h)) {
    notes_.push_back(shown + ": not a usable host directory name; skipped");
    return true;
  }
  host_dirs_[h] = shown;
  fs::path hdir = fs::path(tmp_) / "hosts" / h;
  fs::create_directories(hdir, ec);
  for (const std::string& f : files) {
    fs::create_directories((hdir / f).parent_path(), ec);
    fs::create_symlink(fs::absolute(fs::path(dir) / f), hdir / f, ec);
    if (ec) {
      *error = "cannot link " + shown + "/" + f + ": " + ec.message();
      return false;
    }
  }
  prefixes_["hosts/" + h + "/"] = shown + "/";
  notes_.push_back(shown + "/: a host's logs, placed on '" + h + "' (" + how + ")");
  return true;
}

// A directory that is not a bundle: its subdirectories are hosts
// (`<dir>/<host>/<files>`), its plain files are log files.
bool InputSet::add_dir(const std::string& dir, const std::string& shown, std::string* error) {
  std::vector<fs::path> entries;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec))
    if (it->path().filename().string()[0] != '.') entries.push_back(it->path());
  if (ec) {
    *error = shown + ": cannot list: " + ec.message();
    return false;
  }
  std::sort(entries.begin(), entries.end());
  size_t used = 0;
  for (const fs::path& e : entries) {
    const std::string sub =
        shown + (shown.back() == ':' ? "" : "/") + e.filename().string();  // "x.tgz:" + name
    if (fs::is_directory(e, ec)) {
      if (!add_host_dir(e.string(), sub, error)) return false;
      ++used;
    } else if (e.filename() == "topology.json" || e.filename() == "truth.json") {
      // a bundle's root files beside hosts' directories: the topology is used
      if (e.filename() == "topology.json" && !fs::exists(fs::path(tmp_) / "topology.json", ec))
        fs::create_symlink(fs::absolute(e), fs::path(tmp_) / "topology.json", ec);
    } else if (fs::is_regular_file(e, ec)) {
      if (!add_file(e.string(), sub, error)) return false;
      ++used;
    }
  }
  if (used == 0) {
    *error = shown + ": neither an incident bundle (no hosts/) nor a directory of logs";
    return false;
  }
  return true;
}

namespace {

// A tar bomb is refused by size and by ratio: at most `max_unpack` bytes,
// and at most kMaxUnpackRatio times the archive's own size (logs compress
// 5-50x; a storm more) unless --max-unpack was raised past the default.
constexpr uint64_t kMaxUnpackRatio = 1000;
constexpr uint64_t kDefaultMaxUnpack = uint64_t(8) << 30;

uint64_t unpack_cap(const std::string& archive, uint64_t max_unpack) {
  if (max_unpack != kDefaultMaxUnpack) return max_unpack;
  std::error_code ec;
  const uint64_t size = fs::file_size(archive, ec);
  if (ec || size == 0) return max_unpack;
  const uint64_t by_ratio = std::max<uint64_t>(size * kMaxUnpackRatio, uint64_t(64) << 20);
  return std::min(max_unpack, by_ratio);
}

}  // namespace

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
  // Members are dated by the archive (the reader gives no member times): a
  // year-less log without a dated line takes the year the archive was made.
  std::optional<fs::file_time_type> archive_time;
  {
    std::error_code tec;
    auto t = fs::last_write_time(archive, tec);
    if (!tec) archive_time = t;
  }
  const uint64_t cap = unpack_cap(archive, opts_.max_unpack);
  uint64_t bytes = 0;
  size_t entries = 0, skipped = 0;
  bool ok = true;
  std::vector<char> buf(1 << 16);
  std::string name;
  MemberType type = MemberType::other;
  int64_t declared = -1;
  std::set<std::string> members;
  int r;
  while ((r = ar->next(a, &name, &type, &declared, &why)) == 1) {
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
    // tar keeps the last of two members of one name: which one was meant
    // (a second topology.json) is not for the reader to guess.
    if (!members.insert(rel).second) {
      *error = archive + ": '" + rel + "' is in the archive twice";
      ok = false;
      break;
    }
    // Refused on its header, before a byte of it is written.
    if (declared > 0 && bytes + uint64_t(declared) > cap) {
      *error = archive + ": '" + rel + "' would unpack past " + std::to_string(cap) +
               " bytes (the archive's total so far " + std::to_string(bytes) + " + " +
               std::to_string(declared) + "); --max-unpack raises the limit";
      ok = false;
      break;
    }
    fs::path dst = fs::path(tmp_) / "unpacked" / rel;
    std::error_code ec;
    fs::create_directories(dst.parent_path(), ec);
    std::ofstream out(dst, std::ios::binary);
    long n;
    while ((n = ar->read(a, buf.data(), buf.size(), &why)) > 0) {
      bytes += static_cast<uint64_t>(n);
      if (bytes > cap) break;  // a header that declared less than its data
      out.write(buf.data(), n);
    }
    out.close();
    if (archive_time) fs::last_write_time(dst, *archive_time, ec);  // the year of last resort
    if (n < 0 || bytes > cap || !out) {
      *error = archive + ": " +
               (bytes > cap ? "more than " + std::to_string(cap) +
                                  " bytes unpacked; --max-unpack raises the limit"
                : n < 0 ? why
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
  // A bundle is the unpacked directory holding hosts/, at the top or one
  // level down (`tar czf b.tgz incident/`); else bundle_ stays empty.
  fs::path root = fs::path(tmp_) / "unpacked";
  std::error_code ec;
  if (is_bundle_dir(root)) {
    bundle_ = root.string();
    return true;
  }
  for (auto it = fs::directory_iterator(root, ec); !ec && it != fs::directory_iterator();
       it.increment(ec))
    if (it->is_directory(ec) && is_bundle_dir(it->path())) {
      bundle_ = it->path().string();
      return true;
    }
  return true;
}

// Members of an archive that holds no bundle: the directory of hosts or of
// files at its top (or one level down: `tar czf x.tgz multihost/`).
bool InputSet::take_unpacked(const std::string& archive, std::string* error) {
  fs::path root = fs::path(tmp_) / "unpacked";
  std::error_code ec;
  std::vector<fs::path> top;
  for (auto it = fs::directory_iterator(root, ec); !ec && it != fs::directory_iterator();
       it.increment(ec))
    top.push_back(it->path());
  std::string shown = archive + ":";
  if (top.size() == 1 && fs::is_directory(top[0], ec)) {
    shown += top[0].filename().string();
    root = top[0];
  }
  if (!add_dir(root.string(), shown, error)) {
    *error = archive + ": no incident bundle, directory of hosts or log file inside";
    return false;
  }
  bundle_ = tmp_;
  return true;
}

// A bundle read as it is, with --year/--timezone/... beside it: a bundle of
// links to its hosts/, topology.json and sources.json, with the files the
// options make.
bool InputSet::mirror_bundle(const std::string& dir, std::string* error) {
  std::error_code ec;
  fs::create_directory_symlink(fs::absolute(fs::path(dir) / "hosts"), fs::path(tmp_) / "hosts", ec);
  for (const char* name : {"topology.json", "sources.json"})
    if (!ec && fs::exists(fs::path(dir) / name, ec))
      fs::create_symlink(fs::absolute(fs::path(dir) / name), fs::path(tmp_) / name, ec);
  if (ec) {
    *error = "cannot link " + dir + ": " + ec.message();
    return false;
  }
  aliases_.emplace_back(tmp_, dir);
  bundle_ = tmp_;
  return true;
}

// A declared file as the bundle names it: - is standard input, a file given
// by path is where it was placed; anything else is a glob as written.
std::string InputSet::declared_glob(const std::string& given) const {
  const std::string shown = given == "-" ? "<stdin>" : given;
  for (const auto& [placed, user] : evidence_)
    if (user == shown) return placed;
  return given;
}

// --year, --timezone, --kernel-capture and --collector as the bundle's
// `year`, `timezone` and `sources.json` files (the last merged into the
// bundle's own, read from `declared_in`, else from root).
bool InputSet::write_defaults(const std::string& root, std::string* error,
                              const std::string& declared_in) {
  auto put = [&](const char* name, const std::string& v) {
    std::ofstream out(fs::path(root) / name, std::ios::binary);
    out << v << "\n";
    if (!out) *error = "cannot write " + (fs::path(root) / name).string();
    return bool(out);
  };
  if (opts_.year && !put("year", std::to_string(*opts_.year))) return false;
  if (!opts_.timezone.empty() && !put("timezone", opts_.timezone)) return false;
  if (opts_.kernel_captures.empty() && opts_.collectors.empty()) return true;
  SourceDeclarations d;
  const fs::path own = fs::path(declared_in.empty() ? root : declared_in) / "sources.json";
  std::error_code ec;
  if (fs::exists(own, ec) && !read_source_declarations(own.string(), &d, error)) return false;
  for (const std::string& g : opts_.kernel_captures) d.kernel_capture.push_back(declared_glob(g));
  for (const std::string& g : opts_.collectors) d.collector.push_back(declared_glob(g));
  fs::remove(fs::path(root) / "sources.json", ec);  // an unpacked bundle's own: replaced
  return put("sources.json", d.to_json());
}

bool InputSet::add_any(const std::string& a, std::string* error) {
  std::error_code ec;
  if (a == "-") return add_file(a, "<stdin>", error);
  if (fs::is_directory(a, ec)) {
    std::string shown = a;
    while (shown.size() > 1 && shown.back() == '/') shown.pop_back();
    return add_dir(a, shown, error);
  }
  return add_file(a, a, error);
}

bool InputSet::prepare(const std::vector<std::string>& args, const InputOptions& opts,
                       std::string* error) {
  opts_ = opts;
  std::error_code ec;
  if (args.empty()) {
    *error = "missing input: an incident bundle directory, a .tar.gz of one, log files or -";
    return false;
  }
  const bool defaults = opts.year || !opts.timezone.empty() || !opts.kernel_captures.empty() ||
                        !opts.collectors.empty();
  if (args.size() == 1 && args[0] != "-" && fs::is_directory(args[0], ec) &&
      is_bundle_dir(args[0])) {
    if (!defaults) {
      bundle_ = args[0];
      return true;
    }
    return make_tmp(error) && mirror_bundle(args[0], error) && write_defaults(tmp_, error, args[0]);
  }
  if (args.size() == 1 && is_archive_name(args[0])) {
    if (!make_tmp(error) || !unpack(args[0], error)) return false;
    if (bundle_.empty() && !take_unpacked(args[0], error)) return false;
    return write_defaults(bundle_, error);
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
      if (args.size() > 1 && is_bundle_dir(a)) {
        *error = a + ": a bundle directory is diagnosed alone, not with other inputs";
        return false;
      }
      continue;
    }
    if (is_archive_name(a)) {
      *error = a + ": an archive is diagnosed alone, not with other inputs";
      return false;
    }
    if (!fs::is_regular_file(a, ec) || access(a.c_str(), R_OK) != 0) {
      *error = a + ": no such readable file";
      return false;
    }
  }
  if (!make_tmp(error)) return false;
  for (const std::string& a : args)
    if (!add_any(a, error)) return false;
  bundle_ = tmp_;
  return write_defaults(tmp_, error);
}

namespace {

// `from` inside text, where it is a whole path (not the start of a longer one).
std::string replace_paths(std::string text, const std::string& from, const std::string& to,
                          bool prefix) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at)) {
    const size_t end = at + from.size();
    const bool whole = prefix || end == text.size() ||
                       !(std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '.' ||
                         text[end] == '-' || text[end] == '_' || text[end] == '/');
    if (!whole) {
      at = end;
      continue;
    }
    text.replace(at, from.size(), to);
    at += to.size();
  }
  return text;
}

}  // namespace

std::string InputSet::map_text(std::string text) const {
  for (const auto& [rel, user] : evidence_) text = replace_paths(std::move(text), rel, user, false);
  for (const auto& [rel, user] : prefixes_) text = replace_paths(std::move(text), rel, user, true);
  for (const auto& [tmp, user] : aliases_) text = replace_paths(std::move(text), tmp, user, false);
  return text;
}

std::string InputSet::map_evidence(const std::string& ev) const {
  auto colon = ev.rfind(':');
  if (colon == std::string::npos) return ev;
  const std::string file = ev.substr(0, colon);
  if (auto it = evidence_.find(file); it != evidence_.end()) return it->second + ev.substr(colon);
  // hosts/<h>/<rest> of a directory of hosts
  if (size_t slash = file.find('/', 6); file.rfind("hosts/", 0) == 0 && slash != std::string::npos)
    if (auto it = prefixes_.find(file.substr(0, slash + 1)); it != prefixes_.end())
      return it->second + file.substr(slash + 1) + ev.substr(colon);
  return ev;
}

bool apply_job_option(Topology* topo, const std::string& name, std::string* error) {
  if (name.empty()) return true;
  if (name.find_first_of("/{} \t") != std::string::npos) {
    *error = "--job " + name + ": a job name has no '/', braces or spaces";
    return false;
  }
  const std::vector<std::string> declared = topo->devices_of_kind(DeviceKind::job);
  if (declared.empty()) {
    topo->assume_one_job(name);
    return true;
  }
  std::string list;
  for (const std::string& j : declared) {
    if (j == "job/" + name) return true;
    list += (list.empty() ? "" : ", ") + j.substr(4);
  }
  *error = "--job " + name + ": the topology declares the jobs " + list + "; not " + name;
  return false;
}

}  // namespace reflex::cli
