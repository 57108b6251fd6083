// The agent's journal source (agent_journal.h).
#include "agent_journal.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

namespace reflex::deploy::agent {

namespace {

constexpr size_t kMaxJournalCursors = 200000;

// The entry's "__CURSOR" value (JSON whitespace allowed; cursors need no escapes).
std::string cursor_of(std::string_view line) {
  const std::string_view key = "\"__CURSOR\"";
  auto at = line.find(key);
  if (at == std::string_view::npos) return "";
  size_t i = at + key.size();
  auto skip = [&] {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  };
  skip();
  if (i >= line.size() || line[i] != ':') return "";
  ++i;
  skip();
  if (i >= line.size() || line[i] != '"') return "";
  auto end = line.find('"', ++i);
  return end == std::string_view::npos ? "" : std::string(line.substr(i, end - i));
}

}  // namespace

bool JournalSource::start(std::string cmd, std::string* err) {
  parser_ = rd_.parser(evidence(), rd_.boot_time);
  if (auto r = positions_.resume.find(kJournalKey); r != positions_.resume.end()) {
    line_ = r->second.pos.line;
    safe_ = r->second.pos;
    safe_cursor_ = last_cursor_ = r->second.cursor;
    positions_.resume.erase(r);
  }
  // Cursors are journald's own text ("s=...;i=...;b=..."), never a quote.
  if (!safe_cursor_.empty() && safe_cursor_.find('\'') == std::string::npos)
    cmd += " --after-cursor='" + safe_cursor_ + "'";
  int fds[2];
  if (::pipe(fds) != 0) {
    *err = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    *err = std::string("fork: ") + std::strerror(errno);
    return false;
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // an agent killed -9 takes journalctl with it
    ::dup2(fds[1], 1);
    ::close(fds[0]);
    ::close(fds[1]);
    ::execl("/bin/sh", "sh", "-c", ("exec " + cmd).c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(fds[1]);
  ::fcntl(fds[0], F_SETFL, ::fcntl(fds[0], F_GETFL) | O_NONBLOCK);
  ::fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  pid_ = pid;
  fd_ = fds[0];
  log(Level::info, "reading the journal: " + cmd);
  return true;
}

bool JournalSource::read() {
  if (fd_ < 0) return false;
  bool any = false;
  char chunk[1 << 16];
  for (int round = 0; round < 64 && !out_.full(); ++round) {
    ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n == 0) {
      log(Level::info, "the journal reader exited");
      ::close(fd_);
      fd_ = -1;
      int st = 0;
      ::waitpid(pid_, &st, 0);
      pid_ = -1;
      break;
    }
    if (n < 0) break;  // EAGAIN
    any = true;
    buf_.append(chunk, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t nl; (nl = buf_.find('\n', start)) != std::string::npos; start = nl + 1) {
      std::string_view raw(buf_.data() + start, nl - start);
      if (raw.size() > kMaxLine) raw = raw.substr(0, kMaxLine);
      ++line_;
      std::string c = cursor_of(raw);
      if (!c.empty()) last_cursor_ = c;
      cursors_.emplace_back(line_, last_cursor_);
      if (cursors_.size() > kMaxJournalCursors) cursors_.pop_front();
      LogRecord rec;
      if (parser_->parse(raw, line_, &rec)) rd_.ing.feed_record(rec);
      rd_.metrics.add("reflex_agent_journal_entries_total");
    }
    buf_.erase(0, start);
    if (buf_.size() > kMaxLine) buf_.clear();  // refuses a runaway line
  }
  if (!any) return false;
  // Checkpoint: the cursor of the last entry before the first open fold.
  auto open = rd_.first_open_line(evidence());
  if (!open) {
    safe_ = {0, line_};
    safe_cursor_ = last_cursor_;
    cursors_.clear();
  } else {
    while (!cursors_.empty() && cursors_.front().first < *open - 1) cursors_.pop_front();
    if (!cursors_.empty() && cursors_.front().first == *open - 1) {
      safe_ = {0, *open - 1};
      safe_cursor_ = cursors_.front().second;
    }
  }
  queue_marker();
  return true;
}

void JournalSource::queue_marker() {
  Pending m;
  m.marker = true;
  m.key = kJournalKey;
  m.pos = safe_;
  m.cursor = safe_cursor_;
  m.evidence = evidence();
  out_.add_marker(std::move(m));
}

void JournalSource::stop() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    int st = 0;
    ::waitpid(pid_, &st, 0);
  }
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  pid_ = -1;
}

void JournalSource::advance() {
  if (parser_ && safe_.line != line_ && !rd_.first_open_line(evidence())) {
    safe_ = {0, line_};
    safe_cursor_ = last_cursor_;
    cursors_.clear();
    queue_marker();
  }
}

void JournalSource::mark_read() {
  if (parser_) {
    safe_ = {0, line_};
    safe_cursor_ = last_cursor_;
    queue_marker();
  }
}

}  // namespace reflex::deploy::agent
