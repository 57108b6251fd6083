// The agent's kernel-record source (--kmsg): /dev/kmsg, or a file of its
// records. A record's SEQ is its position and its line number SEQ + 1, under
// the evidence name hosts/<host>/kmsg; the checkpoint is the SEQ before the
// first open storm fold, per boot (a new boot counts from SEQ 0 again).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "agent_positions.h"
#include "agent_publisher.h"
#include "agent_reading.h"
#include "kmsg_reader.h"

namespace reflex::deploy::agent {

class KmsgSource {
 public:
  KmsgSource(Reading& rd, Positions& positions, Publisher& out)
      : rd_(rd), positions_(positions), out_(out) {}

  // Opens path after this boot's saved SEQ; false + *err when it cannot be.
  bool start(const std::string& path, std::string* err);
  // Reads the records there are; true when something was read.
  bool read();
  // Folds closed by time or by other sources: the checkpoint moves up to
  // the last record read.
  void advance();
  // After the ingest finished: every record read is safe.
  void mark_read();

 private:
  void feed(const std::string& text);
  void queue_marker();

  Reading& rd_;
  Positions& positions_;
  Publisher& out_;
  KmsgReader reader_;
  std::unique_ptr<LineParser> parser_;
  std::string evidence_, identity_;  // identity: the boot the SEQs belong to
  uint64_t next_seq_ = 0;            // the record expected next
  bool expect_ = false;              // next_seq is known (this boot's saved position)
  uint64_t safe_seq_ = 0;            // checkpoint: every record before it is emitted
};

}  // namespace reflex::deploy::agent
