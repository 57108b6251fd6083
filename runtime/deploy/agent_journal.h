// The agent's journal source: entries read from `journalctl -f -o json` (or
// --journal-command) through a pipe. Its lines are numbered across restarts
// (the count is saved with the cursor), so a line re-read after a restart
// gets the same evidence and the same id; the checkpoint is the cursor of the
// last entry before the first open storm fold.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "agent_positions.h"
#include "agent_publisher.h"
#include "agent_reading.h"
#include "agent_types.h"

namespace reflex::deploy::agent {

class JournalSource {
 public:
  JournalSource(Reading& rd, Positions& positions, Publisher& out)
      : rd_(rd), positions_(positions), out_(out) {}

  // Starts the reader after the saved cursor; false + *err when it cannot be.
  bool start(std::string cmd, std::string* err);
  // Reads what the reader printed; true when something was read.
  bool read();
  // The reader is still running (its pipe open).
  bool running() const { return fd_ >= 0; }
  // Folds closed by time or by other sources: the checkpoint moves up to
  // the last entry read.
  void advance();
  // After the ingest finished: every entry read is safe.
  void mark_read();
  void stop();

 private:
  std::string evidence() const { return "hosts/" + rd_.host + "/journal"; }
  void queue_marker();

  Reading& rd_;
  Positions& positions_;
  Publisher& out_;
  pid_t pid_ = -1;
  int fd_ = -1;
  std::string buf_, last_cursor_;
  uint64_t line_ = 0;
  // (line, cursor) from the safe point on, for checkpoints behind open folds;
  // bounded: past it the checkpoint just stays where it was (re-read, not lost).
  std::deque<std::pair<uint64_t, std::string>> cursors_;
  Position safe_;
  std::string safe_cursor_;
  std::unique_ptr<LineParser> parser_;
};

}  // namespace reflex::deploy::agent
