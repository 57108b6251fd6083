// One followed file's state and what reads its bytes: at an offset (plain
// files), through zlib (compressed ones), and the print that recognizes its
// content at a position whatever its inode.
#pragma once

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "agent_types.h"
#include "reflex/log_format.h"

namespace reflex::deploy::agent {

struct Followed {
  FileKey key;
  std::string path;      // current name
  std::string evidence;  // the absolute path it was first read by, kept across renames
  int fd = -1;
  Position read;          // next byte to read, lines consumed
  bool rotated = false;   // renamed away from a followed path: read to EOF, then close
  bool skipping = false;  // inside a line longer than kMaxLine
  std::unique_ptr<LineParser> parser;
  std::string head_bytes;  // the first min(size, kPrint) bytes, once known
  // A compressed file (.gz): read through zlib; offsets and lines count its
  // uncompressed text, as they did in the file it was compressed from.
  bool gz = false;
  gzFile gzf = nullptr;
  std::string carry;               // decompressed, not yet consumed; starts at read.offset
  uint64_t carry_at = 0;           // stream offset of carry[0]
  std::optional<Position> target;  // a known file's position: pass the bytes before it
  std::string want_tail;           // that position's tail print ("" = not checked)
  std::string window;              // the last kPrint bytes passed on the way to target
  bool complete = false;           // the stream ended with its trailer
  bool waiting_said = false;
  std::optional<FileKey> supersedes;  // the file whose position this one continues
  uint64_t sent_line = 0;  // lines up to it were published before a restart (Pending::sent_line)
};

// Up to n bytes of a plain file from offset at.
std::string pread_at(int fd, uint64_t at, size_t n);

// The content print of f at pos (its tail only for plain files: a .gz is
// recognized again by its inode and head).
Print print_at(Followed& f, const Position& pos);

// Decompressed bytes onto f.carry, up to `want` more. A stream cut short
// (gzip still writing it) is tried again later (gzclearerr, as zlib
// documents for a file written concurrently); the trailer read = complete.
enum class Pull { more, waiting, complete, corrupt };
Pull gz_pull(Followed& f, size_t want, std::string* err);

}  // namespace reflex::deploy::agent
