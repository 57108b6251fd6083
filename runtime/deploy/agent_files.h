// The agent's file follower: log files (rotation by rename, truncation, new
// files in a followed directory) and their compressed rotations (.gz, read
// through zlib and recognized by content as the file they were compressed
// from, finished from where that one was read to). A file's checkpoint is
// where it was read to, with the storm folds of file lines still open then;
// a restart opens those folds again before it reads on.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "agent_followed.h"
#include "agent_positions.h"
#include "agent_publisher.h"
#include "agent_reading.h"
#include "agent_types.h"

namespace reflex::deploy::agent {

// The storm folds of file lines open at a file checkpoint (Pending::folds),
// and at a restart those of the last durable one opened again.
class FileFolds {
 public:
  // The open files' evidence names, asked for only when the storms changed
  // (a log server's agent follows thousands of files).
  using OpenEvidence = std::function<std::set<std::string>()>;
  FileFolds(Reading& rd, Positions& positions, Publisher& out)
      : rd_(rd), positions_(positions), out_(out) {}
  // The folds of file lines open now (the open files' evidence names), for
  // a file checkpoint about to be queued.
  std::shared_ptr<const std::vector<Event>> take(const OpenEvidence& open);
  // A checkpoint of the folds alone, when they changed since the last one
  // queued (closed by time, grown by another source's line).
  void queue(const OpenEvidence& open);
  // At a restart, before a line is read.
  void reopen();

 private:
  std::shared_ptr<const std::vector<Event>> now(const OpenEvidence& open);
  void reopen_fold(const Event& ev, uint64_t count);

  Reading& rd_;
  Positions& positions_;
  Publisher& out_;
  // Evidence names of closed or reopened files while a fold of theirs is open.
  std::set<std::string> sources_;
  std::shared_ptr<const std::vector<Event>> last_;  // as last queued
  std::shared_ptr<const std::vector<Event>> now_;   // as of generation_
  uint64_t generation_ = 0;                         // OpenStorms::generation()
};

class FileFollower {
 public:
  FileFollower(Reading& rd, Positions& positions, Publisher& out)
      : rd_(rd), positions_(positions), out_(out), folds_(rd, positions, out) {}

  // Opens the files of the followed paths not open yet (plain files first).
  void discover(const std::vector<std::string>& follows);
  // Reads what is new in every open file, closes those done; true when
  // something was read.
  bool read_files();
  // Folds sent by time or grown by another source's line: the saved open
  // folds follow (a checkpoint without a position).
  void advance();
  // After the ingest finished: no fold is open any more.
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
  std::set<std::string> open_evidence() const;

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
  FileFolds folds_;
  std::map<FileKey, Followed> files_;
  bool history_scan_ = false;  // the first scan of a first start (open_gz)
  size_t history_skipped_ = 0;
  bool first_scan_ = true;
  bool check_gone_ = true;  // a directory scan ran: followed names may lead elsewhere now
};

}  // namespace reflex::deploy::agent
