// The per-line matcher: every distinct pattern of the knowledge base (first
// lines and `then` continuations) in ONE Hyperscan block-mode database, RE2
// (through CompiledSignature) only on the lines Hyperscan reports.
//
// Many signatures share one pattern and differ only in `when` (one Xid
// pattern, 170 codes): the database holds each distinct pattern text once, RE2
// runs once per distinct pattern hit, and every signature sharing it gets a
// copy of the captures for its own typing + `when` (accept()).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reflex/kb.h"
#include "reflex/signature_match.h"

struct hs_database;
struct hs_scratch;

namespace reflex::ingest {

struct PatternInfo {
  std::string text;
  bool prefilter = false;   // compiled with HS_FLAG_PREFILTER (hits are only candidates)
  bool in_database = true;  // false: Hyperscan refused it even as prefilter; RE2 checks every line
  // Signatures whose part 0 is this pattern, and the union of their transports
  // (a line through another transport skips RE2 entirely).
  std::vector<uint32_t> first_of;
  uint8_t first_sources = 0;
  // A signature + part index that carries this text, to run RE2 once for all.
  uint32_t rep_sig = 0;
  uint32_t rep_part = 0;
  bool is_continuation = false;   // used as part >= 1 of some signature
  bool starts_multiline = false;  // part 0 of a signature with more parts
  // Its leading '^' was dropped for the shared database (a hit is then only
  // a candidate for RE2, like a prefilter, but not counted as a prefilter reject).
  bool anchor_dropped = false;
  // No assertion that looks left of the match's start or at the buffer's
  // ends (an inner '^', \A, \B, \z, \Z; a leading '^' is dropped): a hit of
  // it in a message alone is then also a hit in any line that ends with that
  // message after an ASCII non-word byte (Ingestor's memo-first blocks).
  bool context_free = false;
  // The block database holds a factor of it (block_factor.h), not its text:
  // a block hit of it is only a candidate, rechecked on the line alone.
  bool cut = false;
};

struct SigInfo {
  const Signature* sig = nullptr;
  std::unique_ptr<CompiledSignature> compiled;
  std::vector<uint32_t> part_pattern;  // pattern index of each part
};

class Matcher {
 public:
  Matcher();
  ~Matcher();
  Matcher(const Matcher&) = delete;
  Matcher& operator=(const Matcher&) = delete;

  // Compiles every signature (RE2) and the Hyperscan database. Signatures that
  // do not compile are left out with a note; false only when nothing usable
  // could be built while there were patterns (error says why).
  bool build(const KnowledgeBase& kb, std::string* error, std::vector<std::string>* notes);
  // Instead of build(), on a new matcher: `origin`'s compiled patterns and
  // databases, shared (read-only), with scratch of its own, so another thread
  // can scan and confirm while `origin` does (a --threads worker: its own
  // build was 6% of the threaded CPU). `origin` may be destroyed first.
  bool share(const Matcher& origin, std::string* error);

  // Pattern ids whose Hyperscan pattern (or prefilter) hit `text`, sorted
  // ascending, plus the patterns Hyperscan could not take. Allocates nothing
  // once `hits` has grown to the pattern count (call reserve_hits()).
  void scan(std::string_view text, std::vector<uint32_t>* hits) const;
  void reserve_hits(std::vector<uint32_t>* hits) const { hits->reserve(c_->patterns.size() + 1); }

  const std::vector<PatternInfo>& patterns() const { return c_->patterns; }
  const std::vector<SigInfo>& signatures() const { return c_->sigs; }
  size_t database_patterns() const { return c_->db_ids.size(); }
  bool has_multiline() const { return c_->has_multiline; }
  // The most lines a multi-line signature's next part may follow its last
  // (max(1, join_within_lines) over them); 0 without such signatures.
  uint64_t join_window() const { return c_->join_window; }
  // One Hyperscan database serves both scan() and scan_block() (compiling two
  // costs ~0.3 s CPU per 130 patterns at every start).
  bool shared_database() const { return c_->shared; }

  // Chunk mode (bundle files): one scan over a block of raw lines (no
  // SINGLEMATCH, multi-line anchors, leading '^' dropped: a superset
  // prefilter) reports which lines can match at all; only those lines are
  // parsed and matched exactly. False when some pattern cannot be used that
  // way (then every line is parsed).
  bool chunk_mode() const { return c_->chunk_db != nullptr; }

  // Block mode (bundle files): one scan over a block of whole lines, each
  // ending in '\n'; reports the lines the chunk database hits, ascending,
  // deduplicated. Line bounds are found with memchr/memrchr around each hit
  // only, so lines without a hit cost nothing beyond the scan itself.
  // With each line come the pattern ids that hit it (ascending, in *hits at
  // [hit_begin, hit_begin + hit_count)): a superset of what scan() reports
  // for the line's message (the prefix is scanned too). hit_count is
  // kUnknownHits when Hyperscan reported matches out of order (then scan()).
  static constexpr uint32_t kUnknownHits = UINT32_MAX;
  struct BlockLine {
    uint32_t begin = 0, end = 0;  // [begin, end): the line without its '\n'
    uint32_t hit_begin = 0, hit_count = 0;
  };
  void scan_block(std::string_view buf, std::vector<BlockLine>* lines,
                  std::vector<uint32_t>* hits) const;

  // The compiled shared database as a MatcherCache for `reflexc build` to
  // store in the artifact; false when there is none (two-database mode).
  bool export_cache(MatcherCache* out) const;
  // The database came from kb.matcher_cache instead of a compile.
  bool from_cache() const { return c_->from_cache; }

  // Some id of `hits` (from scan() of a message) is a context_free pattern.
  bool hit_survives_context(const std::vector<uint32_t>& hits) const;

  // RE2 confirmation of pattern `p` (through its representative signature).
  bool confirm(uint32_t p, std::string_view text, FieldValues* caps) const;

 private:
  // What build() compiles: read-only once built, so matchers of other
  // threads share it (share()); each has its own scratch below.
  struct Compiled {
    std::vector<PatternInfo> patterns;
    std::vector<SigInfo> sigs;
    std::vector<uint32_t> db_ids;    // Hyperscan id -> pattern index
    std::vector<uint32_t> fallback;  // patterns not in the database
    hs_database* db = nullptr;
    hs_database* chunk_db = nullptr;
    // Shared mode: the block scan's database, with factors of the costly
    // patterns (PatternInfo::cut); null when no pattern is cut.
    hs_database* factor_db = nullptr;
    bool has_multiline = false;
    uint64_t join_window = 0;
    bool shared = false;
    std::string cache_key;
    std::vector<unsigned> shared_flags;
    bool from_cache = false;
    ~Compiled();
  };
  std::shared_ptr<Compiled> c_;
  mutable hs_scratch* scratch_ = nullptr;
  mutable hs_scratch* chunk_scratch_ = nullptr;
  mutable hs_scratch* factor_scratch_ = nullptr;
  mutable std::vector<uint32_t> line_hits_;  // recheck_cut_lines' scratch
  mutable std::vector<uint8_t> seen_;        // per-scan dedup of pattern ids (shared database)
  mutable std::vector<uint8_t> block_seen_;  // per-line dedup of pattern ids in scan_block
  bool build_shared(const MatcherCache& cache, std::vector<std::string>* notes);
  bool compile_factor_database(const std::vector<std::string>& texts,
                               const std::vector<unsigned>& flags);
  bool load_factor_database(std::span<const uint8_t> data, size_t offset);
  void recheck_cut_lines(std::string_view buf, std::vector<BlockLine>* lines,
                         std::vector<uint32_t>* hits) const;
  void add_signatures(const KnowledgeBase& kb, std::vector<std::string>* notes);
  void compile_line_database(std::vector<std::string>* notes);
  void compile_chunk_database();
  static std::string shared_cache_key(const std::vector<std::string>& texts);
  static bool patterns_checked_by_artifact(const KnowledgeBase& kb);
  hs_database* load_cached(std::span<const uint8_t> data, std::vector<unsigned>* flags,
                           std::string* why) const;
};

// Every signature's first-line pattern, one per line, for grep -E / rg -f
// benchmarks: RE2's (?P<name> becomes a plain group. Distinct texts only.
// mode: 0 = as written, 1 = named groups made plain, 2 = POSIX ERE.
std::vector<std::string> export_first_line_patterns(const KnowledgeBase& kb, int mode);

}  // namespace reflex::ingest
