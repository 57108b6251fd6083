// One host's collected outputs: a directory of files, each read with bounds
// (regular files only, at most 64 MiB, no binary) and parsed by what it holds.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "reflex/discover.h"
#include "text_kit.h"

namespace reflex::discover {

namespace {

namespace fs = std::filesystem;
constexpr size_t kMaxFile = size_t(64) << 20;

enum class ReadResult { ok, skip, error };

// O_NONBLOCK: a FIFO left in a collected directory must not hang the command.
ReadResult read_bounded(const std::string& path, std::string* text, std::string* why) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    *why = "cannot open";
    return ReadResult::error;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    *why = "not a regular file";
    return ReadResult::skip;
  }
  if (size_t(st.st_size) > kMaxFile) {
    ::close(fd);
    *why = "larger than 64 MiB";
    return ReadResult::error;
  }
  text->clear();
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      ::close(fd);
      *why = "read error";
      return ReadResult::error;
    }
    if (n == 0) break;
    text->append(buf, size_t(n));
    if (text->size() > kMaxFile) {
      ::close(fd);
      *why = "larger than 64 MiB";
      return ReadResult::error;
    }
  }
  ::close(fd);
  if (text->find('\0') != std::string::npos) {
    *why = "binary content";
    return ReadResult::skip;
  }
  return ReadResult::ok;
}

std::vector<std::string> sorted_entries(const std::string& dir, bool want_dirs,
                                        std::string* error) {
  std::vector<std::string> out;
  std::error_code ec;
  fs::directory_iterator it(dir, ec), end;
  if (ec) {
    *error = dir + ": cannot list: " + ec.message();
    return out;
  }
  for (; it != end; it.increment(ec)) {
    if (ec) {
      *error = dir + ": cannot list: " + ec.message();
      return {};
    }
    std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    std::error_code e2;
    if (it->is_directory(e2) == want_dirs) out.push_back(it->path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

void merge_ib(std::vector<IbPort>* all, const std::vector<IbPort>& more) {
  for (const IbPort& p : more) {
    auto it = std::find_if(all->begin(), all->end(), [&](const IbPort& q) {
      return q.device == p.device && q.port == p.port;
    });
    if (it == all->end()) {
      all->push_back(p);
      continue;
    }
    if (it->bdf.empty()) it->bdf = p.bdf;
    if (it->netdev.empty()) it->netdev = p.netdev;
    if (it->state.empty()) it->state = p.state;
  }
}

template <class T>
bool parsed(std::optional<T> r, const std::string& path, OutputKind k, const ParseError& pe,
            std::optional<T>* slot, std::map<OutputKind, std::string>* seen, std::string* error) {
  if (auto it = seen->find(k); it != seen->end()) {
    *error =
        path + ": a second " + output_kind_name(k) + " output (the first is " + it->second + ")";
    return false;
  }
  (*seen)[k] = path;
  if (!r) {
    *error = path + (pe.line ? ":" + std::to_string(pe.line) : std::string()) + ": " +
             output_kind_name(k) + ": " + pe.message;
    return false;
  }
  *slot = std::move(r);
  return true;
}

// The two nvidia-smi GPU lists joined by address: the CSV's explicit indexes
// win, -q fills a serial or UUID the CSV lacks, and a disagreement is noted.
std::vector<GpuRecord> join_gpu_lists(const std::string& dir, std::vector<GpuRecord> csv,
                                      const std::vector<GpuRecord>& query,
                                      std::vector<std::string>* notes) {
  int unmatched = 0;
  for (const GpuRecord& q : query) {
    auto it = std::find_if(csv.begin(), csv.end(),
                           [&](const GpuRecord& c) { return !c.bdf.empty() && c.bdf == q.bdf; });
    if (it == csv.end() || it->index != q.index) {
      ++unmatched;
      continue;
    }
    if (it->serial.empty()) it->serial = q.serial;
    if (it->uuid.empty()) it->uuid = q.uuid;
  }
  if (unmatched || query.size() != csv.size())
    notes->push_back(dir + ": nvidia-smi -q and --query-gpu disagree (" +
                     std::to_string(unmatched) + " of " + std::to_string(query.size()) +
                     " -q GPUs not at the same index and address): the --query-gpu list is used");
  return csv;
}

}  // namespace

bool read_host_dir(const std::string& dir, HostOutputs* out, std::vector<std::string>* notes,
                   std::string* error) {
  out->dir = dir;
  std::vector<std::string> files = sorted_entries(dir, false, error);
  if (!error->empty()) return false;
  std::map<OutputKind, std::string> seen;
  std::optional<PciTree> tree, verbose;
  std::optional<std::vector<IbPort>> dev2net, ibstat;
  std::optional<std::vector<GpuRecord>> query, csv;
  for (const std::string& path : files) {
    std::string text, why;
    ReadResult rr = read_bounded(path, &text, &why);
    if (rr == ReadResult::error) {
      *error = path + ": " + why;
      return false;
    }
    if (rr == ReadResult::skip) {
      notes->push_back(path + ": skipped (" + why + ")");
      continue;
    }
    OutputKind k = sniff(path, text);
    ParseError pe;
    bool ok = true;
    switch (k) {
      case OutputKind::lspci_tree:
        ok = parsed(parse_lspci_tree(text, &pe), path, k, pe, &tree, &seen, error);
        break;
      case OutputKind::lspci_verbose:
        ok = parsed(parse_lspci_verbose(text, &pe), path, k, pe, &verbose, &seen, error);
        break;
      case OutputKind::nvsmi_query:
        ok = parsed(parse_nvsmi_query(text, &pe), path, k, pe, &query, &seen, error);
        break;
      case OutputKind::nvsmi_csv:
        ok = parsed(parse_nvsmi_csv(text, &pe), path, k, pe, &csv, &seen, error);
        break;
      case OutputKind::nvsmi_nvlink:
        ok = parsed(parse_nvsmi_nvlink(text, &pe), path, k, pe, &out->nvlinks, &seen, error);
        break;
      case OutputKind::nvsmi_topo:
        ok = parsed(parse_nvsmi_topo(text, &pe), path, k, pe, &out->topo, &seen, error);
        break;
      case OutputKind::ibdev2netdev:
        ok = parsed(parse_ibdev2netdev(text, &pe), path, k, pe, &dev2net, &seen, error);
        break;
      case OutputKind::ibstat:
        ok = parsed(parse_ibstat(text, &pe), path, k, pe, &ibstat, &seen, error);
        break;
      case OutputKind::hostname:
        for (std::string_view l : kit::lines(text))
          if (out->name.empty()) out->name = std::string(kit::trim(l));
        break;
      case OutputKind::unknown:
        notes->push_back(path + ": not a recognised tool output: skipped");
        break;
    }
    if (!ok) return false;
  }
  if (tree && verbose)
    out->pci = merge_trees(*tree, *verbose);
  else if (tree)
    out->pci = std::move(tree);
  else if (verbose)
    out->pci = std::move(verbose);
  if (csv && query)
    out->gpus = join_gpu_lists(dir, std::move(*csv), *query, notes);
  else if (csv)
    out->gpus = std::move(csv);
  else if (query)
    out->gpus = std::move(query);
  if (dev2net) merge_ib(&out->ib, *dev2net);
  if (ibstat) merge_ib(&out->ib, *ibstat);
  out->has_ib = dev2net || ibstat;
  if (out->name.empty()) {
    out->name = fs::path(dir).lexically_normal().filename().string();
    if (out->name.empty())
      out->name = fs::path(dir).lexically_normal().parent_path().filename().string();
    notes->push_back(dir + ": no hostname file: the host is named '" + out->name +
                     "' after its directory");
  }
  if (seen.empty()) {
    *error = dir + ": no recognised tool output (lspci, nvidia-smi -q, --query-gpu, topo -m, " +
             "nvlink -s, ibdev2netdev, ibstat)";
    return false;
  }
  return true;
}

std::vector<std::string> host_dirs_of(const std::string& dir, std::string* error) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    *error = dir + ": not a directory";
    return {};
  }
  std::vector<std::string> files = sorted_entries(dir, false, error);
  if (!error->empty()) return {};
  for (const std::string& f : files) {
    std::string text, why;
    if (read_bounded(f, &text, &why) == ReadResult::ok && sniff(f, text) != OutputKind::unknown &&
        sniff(f, text) != OutputKind::hostname)
      return {dir};
  }
  std::vector<std::string> dirs = sorted_entries(dir, true, error);
  if (error->empty() && dirs.empty())
    *error = dir + ": neither a host's outputs nor directories of hosts";
  return dirs;
}

}  // namespace reflex::discover
