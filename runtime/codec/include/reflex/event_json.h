// Events as JSON, the one codec for every place an Event crosses a process or
// a file: the `reflex events` line (interfaces.md §7) read by `diagnose --events` and
// the C API, and the store's lossless record. One reader takes both.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "reflex/event.h"

namespace reflex {

class Topology;

// One `reflex events` output line (no newline). With a KB the line names the
// signature's fault class (standard class, and the KB's own as "subclass").
class EventLineWriter {
 public:
  explicit EventLineWriter(const KnowledgeBase* kb = nullptr);
  // `evidence` replaces ev.evidence when given (inputs named on the command line).
  std::string line(const Event& ev, const std::string* evidence = nullptr) const;
  // The same line built as a JSON tree (repeated keys; the reference in tests).
  std::string line_via_tree(const Event& ev, const std::string* evidence = nullptr) const;

 private:
  struct Class {
    std::string standard, subclass;
  };
  std::unordered_map<std::string, Class> classes_;
};

// Every Event member, lossless (the store's JSON column). Never throws;
// invalid UTF-8 is replaced.
std::string event_to_record_json(const Event& ev);

// Either form back into an Event. The KB and topology, when given, supply what
// a line leaves out: the device kind (signature, then topology), the transport
// (kernel-only signatures) and the clock ("<host>/kernel" or "<host>/app").
// nullopt + *error on a line that is not an event.
std::optional<Event> parse_event_json(std::string_view text, std::string* error,
                                      const KnowledgeBase* kb = nullptr,
                                      const Topology* topo = nullptr);

}  // namespace reflex
