// The agent's file follower: log files (rotation by rename, truncation, new
// files in a followed directory) and their compressed rotations (.gz, read
// through zlib and recognized by content as the file they were compressed
// from, finished from where that one was read to). Each file's checkpoint
// never passes the first line of a storm fold still open.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent_followed.h"
#include "agent_positions.h"
#include "agent_publisher.h"
#include "agent_reading.h"
#include "agent_types.h"

namespace reflex::deploy::agent {

class FileFollower {
 public:
  FileFollower(Reading& rd, Positions& positions, Publisher& out)
      : rd_(rd), positions_(positions), out_(out) {}

  // Opens the files of the followed paths not open yet (plain files first).
  void discover(const std::vector<std::string>& follows);
  // Reads what is new in every open file, closes those done; true when
  // something was read.
  bool read_files();
  // Folds sent by time or closed by another file's later line: positions
  // held back by them move up to where the files were read.
  void advance();
  // After the ingest finished: every file is safe up to where it was read.
  void mark_read();
  bool is_open(const FileKey& k) const { return files_.count(k) > 0; }
  size_t open_count() const { return files_.size(); }

 private:
  // Plain files (agent_files.cpp).
  void begin_parser(Followed& f);
  void open_file(const std::string& path, const struct stat& st);
  void report_unmatched();
  bool read_file(Followed& f);
  void feed_lines(Followed& f, const std::string& buf, size_t usable);
  void queue_marker(Followed& f);
  void settle_closed(bool all);

  // Compressed files (agent_gz.cpp).
  bool copy_of_open(const std::string& head);
  void open_gz(const std::string& path, const struct stat& st);
  void remember_done(const FileKey& key, const std::string& path, const struct stat& st,
                     const std::string& head, bool gz);
  void gz_error(const FileKey& key, const std::string& path, const struct stat& st, uint64_t at,
                const std::string& err);
  bool read_gz(Followed& f);
  bool gz_failed(Followed& f, const std::string& err);

  Reading& rd_;
  Positions& positions_;
  Publisher& out_;
  std::map<FileKey, Followed> files_;
  std::map<FileKey, Pending> closing_;  // closed, position held back by an open fold
  bool history_scan_ = false;           // the first scan of a first start (open_gz)
  size_t history_skipped_ = 0;
  bool first_scan_ = true;
};

}  // namespace reflex::deploy::agent
