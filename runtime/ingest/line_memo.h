// The memos that let a storm's repeated lines skip matching: the line memo
// (what matching a message did, replayed for its repeats) and the `when`
// memo (a pattern's conditions looked up by the values they read). Both are
// exact: what they store is a pure function of their key.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "matcher.h"
#include "reflex/kb.h"
#include "reflex/log_record.h"
#include "reflex/signature_match.h"

namespace reflex::ingest {

// The first-line matching of a line (LineProcessor::match_line), its
// effects recorded for the line memo.
struct Outcome {
  uint64_t transport_mismatch = 0, prefilter_rejects = 0, rejected_by_when = 0;
  bool matched = false, recognised = false, refused = false;
  uint32_t suspect = UINT32_MAX;
  struct Act {
    uint32_t si = 0;
    bool pending = false;  // start_pending, else emit_event
    FieldValues fields;
  };
  std::vector<Act> acts;
  void clear() { *this = Outcome{}; }
};

// Longer messages are matched every time (rarely repeated, costly to key).
inline constexpr size_t kMemoMsgBytes = 512;

struct MemoEntry {
  Transport transport;
  std::string msg;
  Outcome outcome;
  uint64_t hash = 0;  // memo_hash(msg, transport), the map's key
  int8_t skip = -1;   // memo-first: -1 not yet known, 1 the message's hits prove the line's
  std::vector<uint32_t> msg_hits{};  // scan() of msg, once skip is known
};

inline uint64_t memo_hash(std::string_view msg, Transport t) {
  return std::hash<std::string_view>{}(msg) ^ (static_cast<uint64_t>(t) * 0x9E3779B97F4A7C15ull);
}

// An entry a memo-first lookup found, the bytes of the line it compared
// equal to it and the memo's generation then (so process() need not hash
// and compare that line's message again).
struct KnownMemo {
  const MemoEntry* entry = nullptr;
  std::string_view msg;
  uint64_t generation = 0;
};

// Outcomes by the message's hash. A seen-filter in front of it keeps lines
// seen once from being recorded: unique lines pay one hash only.
class LineMemo {
 public:
  static constexpr size_t kEntries = 4096, kSeen = 1 << 14;

  // Marks h seen; true when it was not (first sight, or another message
  // took its slot since).
  bool first_sight(uint64_t h) {
    uint64_t& slot = seen_[h & (kSeen - 1)];
    const uint64_t tag = h | 1;
    if (slot == tag) return false;
    slot = tag;
    return true;
  }
  MemoEntry* find(uint64_t h) {
    auto it = entries_.find(h);
    return it == entries_.end() ? nullptr : &it->second;
  }
  // A full memo starts over (its entries freed: the generation changes).
  void store(uint64_t h, Transport t, std::string_view msg, Outcome&& outcome) {
    if (entries_.size() >= kEntries) {
      entries_.clear();
      ++generation_;
    }
    entries_.emplace(h, MemoEntry{t, std::string(msg), std::move(outcome), h});
  }
  KnownMemo known(const MemoEntry* en, std::string_view msg) const {
    return KnownMemo{en, msg, generation_};
  }
  // k's entry when it is still alive and was found for rec's very message.
  const MemoEntry* still_known(const KnownMemo& k, const LogRecord& rec) const {
    if (!k.entry || k.generation != generation_ || k.entry->transport != rec.transport ||
        rec.msg.data() != k.msg.data() || rec.msg.size() != k.msg.size())
      return nullptr;
    return k.entry;
  }

 private:
  std::unordered_map<uint64_t, MemoEntry> entries_;
  uint64_t generation_ = 0;  // bumped when entries_ is cleared
  std::vector<uint64_t> seen_ = std::vector<uint64_t>(kSeen, 0);
};

// Per pattern: the `when` results of its signatures, memoised on the typed
// values of the fields those conditions read (a storm repeats one Xid: ~50
// conditions per line become one lookup). A condition is a pure function of
// the first capture of each field it names, so the memo is exact.
class WhenMemo {
 public:
  void build(const Matcher& matcher);
  // The `when` results for the first_of slots of pattern p whose typing
  // class is `cls` (typed captures in `typed`); nullptr = evaluate directly.
  // typing_class: each signature's class (same field declarations, same class).
  const std::vector<uint8_t>* row(const Matcher& matcher, const std::vector<uint32_t>& typing_class,
                                  uint32_t p, uint32_t cls, const FieldValues& typed);

 private:
  struct PatternMemo {
    bool on = false;
    std::vector<std::string> fields;  // every field any condition of the pattern reads
    std::unordered_map<std::string, std::vector<uint8_t>> rows;  // key -> result per first_of slot
    uint64_t lookups = 0, misses = 0;
  };
  static constexpr size_t kRows = 4096;
  std::vector<PatternMemo> patterns_;
  std::string key_;
  std::vector<uint8_t> scratch_row_;
};

// Memo-first blocks: where messages start in a file's lines (the prefix is
// the format's: time, host, tag), with their transport.
struct MsgAt {
  size_t off = 0;
  Transport transport = kTransportApp;
  bool known = false;
  bool operator==(const MsgAt& o) const {
    return off == o.off && transport == o.transport && known == o.known;
  }
};

}  // namespace reflex::ingest
