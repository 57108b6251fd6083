// Reading a followed file's bytes (agent_followed.h).
#include "agent_followed.h"

#include <unistd.h>

#include <algorithm>
#include <string_view>

namespace reflex::deploy::agent {

std::string pread_at(int fd, uint64_t at, size_t n) {
  std::string b(n, '\0');
  ssize_t got = ::pread(fd, b.data(), n, static_cast<off_t>(at));
  b.resize(got > 0 ? static_cast<size_t>(got) : 0);
  return b;
}

Print print_at(Followed& f, const Position& pos) {
  Print p;
  size_t hl = static_cast<size_t>(std::min<uint64_t>(pos.offset, kPrint));
  if (f.head_bytes.size() < hl && !f.gz) f.head_bytes = pread_at(f.fd, 0, kPrint);
  if (f.head_bytes.size() < hl) return p;
  p.head_len = hl;
  p.head = sha(std::string_view(f.head_bytes).substr(0, hl));
  if (!f.gz && hl > 0) {
    std::string t = pread_at(f.fd, pos.offset - hl, hl);
    if (t.size() == hl) p.tail = sha(t);
  }
  return p;
}

Pull gz_pull(Followed& f, size_t want, std::string* err) {
  size_t old = f.carry.size();
  f.carry.resize(old + want);
  int n = gzread(f.gzf, f.carry.data() + old, static_cast<unsigned>(want));
  f.carry.resize(old + static_cast<size_t>(std::max(n, 0)));
  int errnum = Z_OK;
  const char* msg = gzerror(f.gzf, &errnum);
  if (n < 0 || (errnum != Z_OK && errnum != Z_BUF_ERROR)) {
    *err = msg ? msg : "gzip error";
    return Pull::corrupt;
  }
  if (static_cast<size_t>(n) == want) return Pull::more;
  if (errnum == Z_BUF_ERROR) {
    gzclearerr(f.gzf);
    return n > 0 ? Pull::more : Pull::waiting;
  }
  return gzeof(f.gzf) ? Pull::complete : (n > 0 ? Pull::more : Pull::waiting);
}

}  // namespace reflex::deploy::agent
