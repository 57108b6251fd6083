// Reading /dev/kmsg records (kmsg_reader.h).
#include "kmsg_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace reflex::deploy {

KmsgReader::~KmsgReader() {
  if (fd_ >= 0) ::close(fd_);
}

bool KmsgReader::open(const std::string& path, std::string* err) {
  path_ = path;
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) {
    *err = path + ": " + std::strerror(errno);
    return false;
  }
  struct stat st {};
  device_ = ::fstat(fd_, &st) == 0 && S_ISCHR(st.st_mode);
  return true;
}

void KmsgReader::read(size_t max, std::vector<std::string>* out, uint64_t* overwritten) {
  out->clear();
  if (fd_ < 0) return;
  if (device_) {
    // One record per read(); the kernel caps a record well below this.
    std::string buf(16384, '\0');
    while (out->size() < max) {
      ssize_t n = ::read(fd_, buf.data(), buf.size());
      if (n > 0) {
        out->emplace_back(buf.data(), static_cast<size_t>(n));
      } else if (n < 0 && errno == EPIPE) {
        ++*overwritten;  // the next read returns the oldest record still there
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else {
        break;  // EAGAIN: nothing new
      }
    }
    return;
  }
  char chunk[1 << 16];
  for (int round = 0; round < 64; ++round) {
    ssize_t n = ::pread(fd_, chunk, sizeof chunk, static_cast<off_t>(offset_));
    if (n <= 0) break;
    offset_ += static_cast<uint64_t>(n);
    carry_.append(chunk, static_cast<size_t>(n));
    if (carry_.size() > (size_t{4} << 20)) break;
  }
  // Whole records: a record ends where the next one's line begins; the last
  // one once its line is complete (continuation lines written later are lost
  // to it, and it carries no meaning the agent uses).
  size_t start = 0;
  while (out->size() < max) {
    size_t nl = carry_.find('\n', start);
    if (nl == std::string::npos) break;
    size_t end = nl + 1;
    if (carry_[start] == ' ') {  // continuation of a record already passed on
      start = end;
      continue;
    }
    while (end < carry_.size() && carry_[end] == ' ') {
      size_t next = carry_.find('\n', end);
      if (next == std::string::npos) break;
      end = next + 1;
    }
    if (end < carry_.size() && carry_[end] == ' ')
      break;  // a continuation line still being written
    out->emplace_back(carry_, start, end - start);
    start = end;
  }
  carry_.erase(0, start);
}

std::optional<int64_t> proc_boot_time_us() {
  std::ifstream in("/proc/stat");
  std::string line;
  while (std::getline(in, line))
    if (line.compare(0, 6, "btime ") == 0) {
      std::istringstream s(line.substr(6));
      int64_t v = 0;
      if (s >> v) return v * 1000000;
    }
  return std::nullopt;
}

std::string boot_identity(bool device, int64_t boot_us) {
  if (device) {
    std::ifstream in("/proc/sys/kernel/random/boot_id");
    std::string id;
    if (in >> id && !id.empty()) return "boot_id=" + id;
  }
  return "boot_us=" + std::to_string(boot_us);
}

}  // namespace reflex::deploy
