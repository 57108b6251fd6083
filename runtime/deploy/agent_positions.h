// The agent's read positions and the state file that keeps them across
// restarts: the durable positions (those whose events the bus or the spool
// took), the ones to resume from, those whose inode now holds another file
// (kept so its compressed rotation is still recognized), and the storm folds
// of file lines open as of the durable positions.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent_types.h"

namespace reflex::deploy::agent {

struct Positions {
  std::string state_path;                // "" = none kept
  std::map<FileKey, Pending> committed;  // durable positions (state file)
  std::map<FileKey, Pending> resume;     // from the state file at start, and closed files
  std::vector<Pending> ghosts;           // positions whose inode now holds other content
  std::shared_ptr<const std::vector<Event>> folds;  // open folds of file lines (Pending::folds)
  bool loaded = false;  // a state file was there: not the agent's first start
  bool dirty = false;

  // The state file, when there is one; false + *err when it is not an agent's
  // (a saved fold that is not an event is skipped and said).
  bool load(std::string* err);
  // Writes the state file when a position changed (write, fsync, rename).
  // is_open: whether a position's file is being followed now (open_count of them).
  void write(const std::function<bool(const FileKey&)>& is_open, size_t open_count);
  // A position made durable; the file it continues (a .gz of it) is then
  // recognized by this one.
  void apply_marker(const Pending& m);
  void add_ghost(const Pending& p);
  // A position whose file this compressed text continues: the known file
  // with the same first bytes, read furthest (its tail is checked once the
  // stream gets there).
  std::optional<Pending> match_known(const std::string& head) const;
  // That position is taken over by the compressed file that continues it.
  void drop_known(const Pending& p);

 private:
  // Each committed position as state-file text, kept until it changes: a
  // log server's agent saves thousands of positions after every round in
  // which a few files grew.
  std::map<FileKey, std::string> text_;
};

}  // namespace reflex::deploy::agent
