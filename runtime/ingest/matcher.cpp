#include "matcher.h"

#include "block_factor.h"

#include "reflex/artifact.h"
#include "reflex/huge_pages.h"
#include "reflex/ingest.h"
#include "reflex/pattern.h"

#include <hs.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

namespace reflex::ingest {

namespace {
// A serialised database made usable in memory of our own rather than
// Hyperscan's plain malloc: a database of 256 KiB or more is put in huge
// pages (reflex/huge_pages.h). The cache's two databases are ~0.9 MB each,
// ~450 fresh pages faulted as Hyperscan filled them, all before the first
// line is read; with huge pages, a fault each, for ~1 MB more resident each.
// hs_free_database frees it with free(), Hyperscan's default allocator.
hs_database_t* deserialize_database(const char* bytes, size_t len) {
  size_t size = 0;
  if (hs_serialized_database_size(bytes, len, &size) != HS_SUCCESS || size == 0) return nullptr;
  // Either is 16-byte aligned; Hyperscan needs 8.
  void* mem = size >= kHugePage / 8 ? alloc_huge_pages(size) : std::malloc(size);
  if (!mem) return nullptr;
  auto* db = static_cast<hs_database_t*>(mem);
  if (hs_deserialize_database_at(bytes, len, db) != HS_SUCCESS) {
    std::free(mem);
    return nullptr;
  }
  return db;
}
}  // namespace

Matcher::Compiled::~Compiled() {
  if (db) hs_free_database(db);
  if (chunk_db) hs_free_database(chunk_db);
  if (factor_db) hs_free_database(factor_db);
}

Matcher::Matcher() : c_(std::make_shared<Compiled>()) {}

Matcher::~Matcher() {
  if (scratch_) hs_free_scratch(scratch_);
  if (chunk_scratch_) hs_free_scratch(chunk_scratch_);
  if (factor_scratch_) hs_free_scratch(factor_scratch_);
}

bool Matcher::share(const Matcher& origin, std::string* error) {
  c_ = origin.c_;
  auto clone = [&](hs_scratch* from, hs_scratch** to) {
    if (!from || hs_clone_scratch(from, to) == HS_SUCCESS) return true;
    if (error) *error = "cannot allocate Hyperscan scratch";
    return false;
  };
  if (!clone(origin.scratch_, &scratch_) || !clone(origin.chunk_scratch_, &chunk_scratch_) ||
      !clone(origin.factor_scratch_, &factor_scratch_))
    return false;
  seen_.assign(origin.seen_.size(), 0);
  return true;
}

namespace {
// See PatternInfo::context_free. Conservative: any '^' past the first byte
// outside a class, and \A \B \z \Z \G anywhere outside a class, make a
// pattern context-dependent.
bool pattern_context_free(const std::string& text) {
  bool in_class = false;
  for (size_t i = (!text.empty() && text[0] == '^') ? 1 : 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\') {
      if (i + 1 >= text.size()) return false;
      const char n = text[++i];
      if (!in_class && (n == 'A' || n == 'B' || n == 'z' || n == 'Z' || n == 'G')) return false;
      continue;
    }
    if (in_class) {
      if (c == ']') in_class = false;
      continue;
    }
    if (c == '[') {
      in_class = true;
      if (i + 1 < text.size() && text[i + 1] == '^') ++i;
      if (i + 1 < text.size() && text[i + 1] == ']') ++i;
      continue;
    }
    if (c == '^') return false;
  }
  return !in_class;
}
}  // namespace

bool Matcher::hit_survives_context(const std::vector<uint32_t>& hits) const {
  for (uint32_t h : hits)
    if (h < c_->patterns.size() && c_->patterns[h].context_free) return true;
  return false;
}

// Every signature compiled (RE2) and its patterns interned: one PatternInfo per distinct text.
// Whether kb's precompiled pattern database was built for exactly the
// pattern texts this matcher will hold (build_shared's cache key): reflexc
// compiled each of them with RE2 when it built the artifact, so they need
// no check here and are compiled at first use (Patterns::deferred).
bool Matcher::patterns_checked_by_artifact(const KnowledgeBase& kb) {
  if (kb.matcher_cache.empty()) return false;
  std::vector<std::string> texts;
  std::unordered_set<std::string_view> seen;
  for (const Signature& sig : kb.signatures)
    for (const std::string& p : sig.patterns)
      if (seen.insert(p).second) texts.push_back(!p.empty() && p[0] == '^' ? p.substr(1) : p);
  return kb.matcher_cache.key == shared_cache_key(texts);
}

void Matcher::add_signatures(const KnowledgeBase& kb, std::vector<std::string>* notes) {
  std::unordered_map<std::string, uint32_t> by_text;
  auto intern = [&](const std::string& text, uint32_t sig, uint32_t part) {
    auto [it, fresh] = by_text.emplace(text, static_cast<uint32_t>(c_->patterns.size()));
    if (fresh) {
      PatternInfo p;
      p.text = text;
      p.rep_sig = sig;
      p.rep_part = part;
      p.context_free = pattern_context_free(text);
      c_->patterns.push_back(std::move(p));
    }
    return it->second;
  };
  const auto patterns = patterns_checked_by_artifact(kb) ? CompiledSignature::Patterns::deferred
                                                         : CompiledSignature::Patterns::checked;
  for (const Signature& sig : kb.signatures) {
    if (sig.patterns.empty()) {
      if (notes) notes->push_back("signature " + sig.name + " has no pattern; it never fires");
      continue;
    }
    std::string why;
    auto compiled = CompiledSignature::compile(sig, &why, patterns);
    if (!compiled) {
      if (notes) notes->push_back("signature " + sig.name + " left out: " + why);
      continue;
    }
    uint32_t si = static_cast<uint32_t>(c_->sigs.size());
    SigInfo info;
    info.sig = &sig;
    info.compiled = std::move(compiled);
    for (size_t i = 0; i < sig.patterns.size(); ++i) {
      uint32_t p = intern(sig.patterns[i], si, static_cast<uint32_t>(i));
      info.part_pattern.push_back(p);
      if (i == 0) {
        c_->patterns[p].first_of.push_back(si);
        c_->patterns[p].first_sources |= sig.sources;
      } else {
        c_->patterns[p].is_continuation = true;
      }
    }
    if (sig.patterns.size() > 1) {
      c_->has_multiline = true;
      c_->patterns[info.part_pattern[0]].starts_multiline = true;
      c_->join_window = std::max<uint64_t>(c_->join_window, std::max(1, sig.join_within_lines));
    }
    c_->sigs.push_back(std::move(info));
  }
}

// The per-line database of every pattern (scan()), in one compile; when
// Hyperscan names a pattern it refuses, retry that one as a prefilter, then
// leave it to RE2 alone.
void Matcher::compile_line_database(std::vector<std::string>* notes) {
  std::vector<unsigned> flags(c_->patterns.size(), hyperscan_pattern_flags(/*prefilter=*/false));
  for (int attempt = 0; attempt < static_cast<int>(c_->patterns.size()) * 2 + 2; ++attempt) {
    std::vector<const char*> exprs;
    std::vector<unsigned> fl, ids;
    c_->db_ids.clear();
    for (uint32_t i = 0; i < c_->patterns.size(); ++i) {
      if (!c_->patterns[i].in_database) continue;
      exprs.push_back(c_->patterns[i].text.c_str());
      fl.push_back(flags[i]);
      ids.push_back(static_cast<unsigned>(c_->db_ids.size()));
      c_->db_ids.push_back(i);
    }
    if (exprs.empty()) break;
    hs_compile_error_t* cerr = nullptr;
    hs_database_t* db = nullptr;
    hs_error_t rc =
        hs_compile_multi(exprs.data(), fl.data(), ids.data(), static_cast<unsigned>(exprs.size()),
                         HS_MODE_BLOCK, nullptr, &db, &cerr);
    if (rc == HS_SUCCESS) {
      c_->db = db;
      break;
    }
    int bad = cerr ? cerr->expression : -1;
    std::string msg = cerr && cerr->message ? cerr->message : "unknown error";
    if (cerr) hs_free_compile_error(cerr);
    if (bad < 0 || static_cast<size_t>(bad) >= c_->db_ids.size()) {
      // Not attributable to one pattern (e.g. resource limits): RE2 does all.
      if (notes) notes->push_back("Hyperscan database failed (" + msg + "); using RE2 only");
      for (auto& p : c_->patterns) p.in_database = false;
      c_->db_ids.clear();
      break;
    }
    uint32_t pi = c_->db_ids[bad];
    if (!(flags[pi] & HS_FLAG_PREFILTER)) {
      flags[pi] = hyperscan_pattern_flags(/*prefilter=*/true);
      c_->patterns[pi].prefilter = true;
    } else {
      c_->patterns[pi].in_database = false;
      c_->patterns[pi].prefilter = false;
      if (notes)
        notes->push_back("pattern /" + c_->patterns[pi].text + "/ is not Hyperscan-compatible (" +
                         msg + "); checked with RE2 on every line");
    }
  }
}

// The chunk database: every pattern, as a prefilter over raw lines.
void Matcher::compile_chunk_database() {
  std::vector<std::string> texts;
  std::vector<const char*> exprs;
  std::vector<unsigned> fl, ids;
  for (uint32_t i = 0; i < c_->patterns.size(); ++i) {
    std::string t = c_->patterns[i].text;
    if (!t.empty() && t[0] == '^') t.erase(0, 1);  // msg start is not line start
    texts.push_back(std::move(t));
  }
  for (uint32_t i = 0; i < c_->patterns.size(); ++i) {
    exprs.push_back(texts[i].c_str());
    fl.push_back(HS_FLAG_MULTILINE | (c_->patterns[i].prefilter ? HS_FLAG_PREFILTER : 0u));
    ids.push_back(i);
  }
  hs_compile_error_t* cerr = nullptr;
  hs_database_t* db = nullptr;
  // Fails e.g. for a pattern that matches the empty string: then no chunk mode.
  if (hs_compile_multi(exprs.data(), fl.data(), ids.data(), static_cast<unsigned>(exprs.size()),
                       HS_MODE_BLOCK, nullptr, &db, &cerr) == HS_SUCCESS) {
    if (hs_alloc_scratch(db, &chunk_scratch_) == HS_SUCCESS) {
      c_->chunk_db = db;
    } else {
      hs_free_database(db);
    }
  } else if (cerr) {
    hs_free_compile_error(cerr);
  }
}

bool Matcher::build(const KnowledgeBase& kb, std::string* error, std::vector<std::string>* notes) {
  add_signatures(kb, notes);
  if (c_->patterns.empty()) return true;  // an empty KB matches nothing; fine
  if (build_shared(kb.matcher_cache, notes)) return true;
  compile_line_database(notes);
  for (uint32_t i = 0; i < c_->patterns.size(); ++i)
    if (!c_->patterns[i].in_database) c_->fallback.push_back(i);
  if (c_->db && hs_alloc_scratch(c_->db, &scratch_) != HS_SUCCESS) {
    if (error) *error = "cannot allocate Hyperscan scratch";
    return false;
  }
  if (c_->fallback.empty()) compile_chunk_database();
  return true;
}

namespace {
// Cache data layout: u32 pattern count, that many u32 Hyperscan flags (the
// prefilter retries are in them), u32 length and hs_serialize_database's
// bytes of the exact database; then, if some pattern is cut, one byte per
// pattern (1 = cut) and the factor database's serialized bytes.
template <class Bytes>
void put_u32(Bytes* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<uint8_t>(v >> (8 * i)));
}
uint32_t get_u32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}
}  // namespace

std::string Matcher::shared_cache_key(const std::vector<std::string>& texts) {
  hs_platform_info_t plat{};
  std::string material = std::string("reflex-matcher-2\n") + hs_version() + "\n";
  if (hs_populate_platform(&plat) == HS_SUCCESS)
    material += std::to_string(plat.tune) + " " + std::to_string(plat.cpu_features) + "\n";
  for (const std::string& t : texts) {
    material += t;
    material.push_back('\0');
  }
  return sha256_hex(material);
}

hs_database* Matcher::load_cached(std::span<const uint8_t> data, std::vector<unsigned>* flags,
                                  std::string* why) const {
  const size_t n = c_->patterns.size();
  if (data.size() < 4 || get_u32(data.data()) != n || data.size() < 8 + 4 * n ||
      get_u32(data.data() + 4 + 4 * n) > data.size() - 8 - 4 * n) {
    *why = "its header does not fit this knowledge base";
    return nullptr;
  }
  for (size_t i = 0; i < n; ++i) (*flags)[i] = get_u32(data.data() + 4 + 4 * i);
  const char* bytes = reinterpret_cast<const char*>(data.data() + 8 + 4 * n);
  size_t len = get_u32(data.data() + 4 + 4 * n);
  // Hyperscan checks the magic, version, platform and a CRC of the bytes.
  hs_database_t* db = deserialize_database(bytes, len);
  if (!db) {
    *why = "Hyperscan rejected it as damaged or foreign";
    std::fill(flags->begin(), flags->end(), HS_FLAG_MULTILINE);
    return nullptr;
  }
  return db;
}

bool Matcher::export_cache(MatcherCache* out) const {
  if (!c_->shared || !c_->chunk_db) return false;
  char* bytes = nullptr;
  size_t len = 0;
  if (hs_serialize_database(c_->chunk_db, &bytes, &len) != HS_SUCCESS) return false;
  out->key = c_->cache_key;
  out->data.clear();
  put_u32(&out->data, static_cast<uint32_t>(c_->shared_flags.size()));
  for (unsigned f : c_->shared_flags) put_u32(&out->data, f);
  put_u32(&out->data, static_cast<uint32_t>(len));
  out->data.insert(out->data.end(), bytes, bytes + len);
  std::free(bytes);  // hs_serialize_database allocates with the misc allocator (malloc)
  if (!c_->factor_db) return true;
  if (hs_serialize_database(c_->factor_db, &bytes, &len) != HS_SUCCESS) return false;
  for (const PatternInfo& p : c_->patterns) out->data.push_back(p.cut ? 1 : 0);
  out->data.insert(out->data.end(), bytes, bytes + len);
  std::free(bytes);
  return true;
}

// The factor section of a cache (after the exact database): false when it
// is absent, damaged or foreign (then it is compiled).
bool Matcher::load_factor_database(std::span<const uint8_t> data, size_t offset) {
  const size_t n = c_->patterns.size();
  if (offset + n >= data.size()) return false;
  const char* bytes = reinterpret_cast<const char*>(data.data() + offset + n);
  hs_database_t* db = deserialize_database(bytes, data.size() - offset - n);
  if (!db) return false;
  if (hs_alloc_scratch(db, &factor_scratch_) != HS_SUCCESS) {
    hs_free_database(db);
    return false;
  }
  c_->factor_db = db;
  for (size_t i = 0; i < n; ++i) c_->patterns[i].cut = data[offset + i] != 0;
  return true;
}

// hs_compile_multi over texts (ids 0..n-1): the database, or null with *bad
// the expression Hyperscan refused (-1 when it named none).
static hs_database_t* compile_block_db(const std::vector<std::string>& texts,
                                       const std::vector<unsigned>& flags, int* bad) {
  std::vector<const char*> exprs;
  std::vector<unsigned> ids;
  for (size_t i = 0; i < texts.size(); ++i) {
    exprs.push_back(texts[i].c_str());
    ids.push_back(static_cast<unsigned>(i));
  }
  hs_database_t* db = nullptr;
  hs_compile_error_t* cerr = nullptr;
  if (hs_compile_multi(exprs.data(), flags.data(), ids.data(), static_cast<unsigned>(texts.size()),
                       HS_MODE_BLOCK, nullptr, &db, &cerr) == HS_SUCCESS)
    return db;
  *bad = cerr ? cerr->expression : -1;
  if (cerr) hs_free_compile_error(cerr);
  return nullptr;
}

// The block scan's database: each context-free, exact (not prefilter)
// pattern whose block_factor() differs is replaced by it; a factor
// Hyperscan refuses is put back as the pattern. No database when nothing is cut.
bool Matcher::compile_factor_database(const std::vector<std::string>& texts,
                                      const std::vector<unsigned>& flags) {
  const size_t n = c_->patterns.size();
  std::vector<std::string> fac(texts);
  std::vector<unsigned> fl(flags);
  std::vector<bool> cut(n, false);
  for (size_t i = 0; i < n; ++i) {
    if ((flags[i] & HS_FLAG_PREFILTER) || !c_->patterns[i].context_free) continue;
    std::string f = block_factor(texts[i]);
    if (f == texts[i]) continue;
    fac[i] = std::move(f);
    fl[i] = HS_FLAG_MULTILINE;
    cut[i] = true;
  }
  hs_database_t* db = nullptr;
  for (size_t attempt = 0; attempt <= n; ++attempt) {
    if (std::find(cut.begin(), cut.end(), true) == cut.end()) return true;
    int bad = -1;
    if ((db = compile_block_db(fac, fl, &bad))) break;
    if (bad < 0 || static_cast<size_t>(bad) >= n || !cut[bad]) return false;
    fac[bad] = texts[bad];
    fl[bad] = flags[bad];
    cut[bad] = false;
  }
  if (!db) return false;
  if (hs_alloc_scratch(db, &factor_scratch_) != HS_SUCCESS) {
    hs_free_database(db);
    return false;
  }
  c_->factor_db = db;
  for (size_t i = 0; i < n; ++i) c_->patterns[i].cut = cut[i];
  return true;
}

// The chunk database (leading '^' dropped, multi-line anchors, no
// SINGLEMATCH) also serves per-line scans: on one line it reports a superset
// of the exact database's hits, and RE2 confirms every hit anyway. Only when
// some pattern cannot go in (even as a prefilter) are two databases built.
bool Matcher::build_shared(const MatcherCache& cache, std::vector<std::string>* notes) {
  const size_t n = c_->patterns.size();
  std::vector<std::string> texts(n);
  std::vector<bool> stripped(n, false);
  for (size_t i = 0; i < n; ++i) {
    texts[i] = c_->patterns[i].text;
    if (!texts[i].empty() && texts[i][0] == '^') {
      texts[i].erase(0, 1);  // msg start is not line start
      stripped[i] = true;
    }
  }
  c_->cache_key = shared_cache_key(texts);
  std::vector<unsigned> flags(n, HS_FLAG_MULTILINE);
  hs_database_t* db = nullptr;
  if (!cache.empty()) {
    std::string why;
    if (cache.key != c_->cache_key)
      why = "it was built for other patterns, another Hyperscan version or another CPU";
    else
      db = load_cached(cache.data, &flags, &why);
    if (db && hs_alloc_scratch(db, &chunk_scratch_) != HS_SUCCESS) {
      hs_free_database(db);
      db = nullptr;
      std::fill(flags.begin(), flags.end(), HS_FLAG_MULTILINE);
      why = "Hyperscan cannot run it on this CPU";
    }
    const size_t end = db ? 8 + 4 * n + get_u32(cache.data.data() + 4 + 4 * n) : 0;
    if (db && cache.data.size() != end && !load_factor_database(cache.data, end)) {
      hs_free_database(db);
      db = nullptr;
      std::fill(flags.begin(), flags.end(), HS_FLAG_MULTILINE);
      why = "Hyperscan rejected its factor database as damaged or foreign";
    }
    if (db)
      c_->from_cache = true;
    else if (notes)
      notes->push_back("precompiled pattern database not used (" + why + "); compiled instead");
  }
  for (size_t attempt = 0; !db && attempt <= n; ++attempt) {
    int bad = -1;
    if ((db = compile_block_db(texts, flags, &bad))) break;
    if (bad < 0 || static_cast<size_t>(bad) >= n || (flags[bad] & HS_FLAG_PREFILTER)) return false;
    flags[bad] |= HS_FLAG_PREFILTER;
  }
  if (!db) return false;
  if (hs_alloc_scratch(db, &chunk_scratch_) != HS_SUCCESS) {
    hs_free_database(db);
    return false;
  }
  c_->chunk_db = db;
  c_->shared = true;
  c_->shared_flags = flags;
  c_->db_ids.clear();
  for (uint32_t i = 0; i < n; ++i) {
    c_->patterns[i].prefilter = (flags[i] & HS_FLAG_PREFILTER) != 0;
    c_->patterns[i].in_database = true;
    c_->patterns[i].anchor_dropped = stripped[i];
    c_->db_ids.push_back(i);
  }
  seen_.assign(n, 0);
  if (!c_->from_cache) compile_factor_database(texts, flags);
  return true;
}

namespace {
struct SharedCtx {
  std::vector<uint32_t>* hits;
  uint8_t* seen;
};
int on_shared_match(unsigned id, unsigned long long, unsigned long long, unsigned, void* p) {
  auto* c = static_cast<SharedCtx*>(p);
  if (!c->seen[id]) {  // no SINGLEMATCH here: report each pattern once
    c->seen[id] = 1;
    c->hits->push_back(id);
  }
  return 0;
}

struct BlockCtx {
  const char* buf;
  size_t size;
  std::vector<Matcher::BlockLine>* lines;
  std::vector<uint32_t>* hits;
  uint8_t* seen;
  uint64_t cur_begin = 1, cur_nl = 0;  // the last reported line, its '\n' included
  bool unsorted = false;
};
void close_line(BlockCtx* c) {  // sort the last line's pattern ids, clear their marks
  if (c->lines->empty()) return;
  Matcher::BlockLine& l = c->lines->back();
  auto b = c->hits->begin() + l.hit_begin, e = c->hits->end();
  for (auto it = b; it != e; ++it) c->seen[*it] = 0;
  std::sort(b, e);
  l.hit_count = static_cast<uint32_t>(e - b);
}
int on_block_match(unsigned id, unsigned long long, unsigned long long to, unsigned, void* p) {
  auto* c = static_cast<BlockCtx*>(p);
  uint64_t last = to ? to - 1 : 0;  // offset of the match's last byte
  if (!(last >= c->cur_begin && last <= c->cur_nl)) {
    // A new line: the one holding `last` (a '\n' belongs to the line it ends).
    close_line(c);
    const void* prev = last ? memrchr(c->buf, '\n', last) : nullptr;
    uint64_t begin = prev ? static_cast<uint64_t>(static_cast<const char*>(prev) - c->buf) + 1 : 0;
    const void* nl = std::memchr(c->buf + last, '\n', c->size - last);
    uint64_t end = nl ? static_cast<uint64_t>(static_cast<const char*>(nl) - c->buf) : c->size;
    if (!c->lines->empty() && begin < c->lines->back().begin) c->unsorted = true;
    c->lines->push_back({static_cast<uint32_t>(begin), static_cast<uint32_t>(end),
                         static_cast<uint32_t>(c->hits->size()), 0});
    c->cur_begin = begin;
    c->cur_nl = end;
  }
  if (!c->seen[id]) {  // no SINGLEMATCH: each pattern once per line
    c->seen[id] = 1;
    c->hits->push_back(id);
  }
  return 0;
}
}  // namespace

void Matcher::scan_block(std::string_view buf, std::vector<BlockLine>* lines,
                         std::vector<uint32_t>* hits) const {
  lines->clear();
  hits->clear();
  if (!c_->chunk_db || buf.empty()) return;
  if (block_seen_.size() != c_->patterns.size()) block_seen_.assign(c_->patterns.size(), 0);
  const bool factors = c_->factor_db != nullptr;
  BlockCtx ctx{buf.data(), buf.size(), lines, hits, block_seen_.data()};
  hs_scan(factors ? c_->factor_db : c_->chunk_db, buf.data(), static_cast<unsigned>(buf.size()), 0,
          factors ? factor_scratch_ : chunk_scratch_, on_block_match, &ctx);
  close_line(&ctx);
  if (factors && ctx.unsorted) {  // rare: redo it as without factors, to get the same lines
    lines->clear();
    hits->clear();
    ctx = BlockCtx{buf.data(), buf.size(), lines, hits, block_seen_.data()};
    hs_scan(c_->chunk_db, buf.data(), static_cast<unsigned>(buf.size()), 0, chunk_scratch_,
            on_block_match, &ctx);
    close_line(&ctx);
  } else if (factors) {
    recheck_cut_lines(buf, lines, hits);
  }
  if (ctx.unsorted) {  // Hyperscan may report some matches out of end-offset order
    auto by_begin = [](const BlockLine& a, const BlockLine& b) { return a.begin < b.begin; };
    auto same = [](const BlockLine& a, const BlockLine& b) { return a.begin == b.begin; };
    std::sort(lines->begin(), lines->end(), by_begin);
    lines->erase(std::unique(lines->begin(), lines->end(), same), lines->end());
    for (BlockLine& l : *lines) l.hit_count = kUnknownHits;  // a line's ids may be split
  }
}

// A line with a hit of a cut pattern: its exact hits of the cut patterns
// are those of the line alone (a cut pattern is context-free), scanned with
// the exact database; its other hits are the block's (the same texts).
// A line left with no hit is dropped: lines and hits are then as a block
// scan with the exact database gives them (save a match across a line
// break, as with memo-first blocks).
void Matcher::recheck_cut_lines(std::string_view buf, std::vector<BlockLine>* lines,
                                std::vector<uint32_t>* hits) const {
  size_t kept = 0;
  for (BlockLine l : *lines) {
    uint32_t* h = hits->data() + l.hit_begin;
    bool any_cut = false;
    for (uint32_t k = 0; k < l.hit_count; ++k) any_cut |= c_->patterns[h[k]].cut;
    if (any_cut) {
      line_hits_.clear();
      SharedCtx ctx{&line_hits_, seen_.data()};
      hs_scan(c_->chunk_db, buf.data() + l.begin, l.end - l.begin, 0, chunk_scratch_,
              on_shared_match, &ctx);
      for (uint32_t id : line_hits_) seen_[id] = 0;
      auto not_cut = [this](uint32_t id) { return !c_->patterns[id].cut; };
      const size_t cut_before = l.hit_count - std::count_if(h, h + l.hit_count, not_cut);
      line_hits_.erase(std::remove_if(line_hits_.begin(), line_hits_.end(), not_cut),
                       line_hits_.end());
      if (line_hits_.size() > cut_before) {
        l.hit_count = kUnknownHits;  // cannot happen (a factor hit is implied); scan the message
      } else {
        uint32_t* end = std::stable_partition(h, h + l.hit_count, not_cut);
        std::copy(line_hits_.begin(), line_hits_.end(), end);
        l.hit_count = static_cast<uint32_t>(end - h + line_hits_.size());
        std::sort(h, h + l.hit_count);
        if (l.hit_count == 0) continue;
      }
    }
    (*lines)[kept++] = l;
  }
  lines->resize(kept);
}

namespace {
int on_match(unsigned id, unsigned long long, unsigned long long, unsigned, void* ctx) {
  // SINGLEMATCH: at most one callback per pattern per scan (we scan one line at a time).
  static_cast<std::vector<uint32_t>*>(ctx)->push_back(id);
  return 0;
}
}  // namespace

void Matcher::scan(std::string_view text, std::vector<uint32_t>* hits) const {
  hits->clear();
  if (c_->shared) {
    SharedCtx ctx{hits, seen_.data()};
    hs_scan(c_->chunk_db, text.data(),
            static_cast<unsigned>(std::min<size_t>(text.size(), UINT32_MAX)), 0, chunk_scratch_,
            on_shared_match, &ctx);
    for (uint32_t h : *hits) seen_[h] = 0;
    if (hits->size() > 1) std::sort(hits->begin(), hits->end());
    return;
  }
  if (c_->db) {
    hs_scan(c_->db, text.data(), static_cast<unsigned>(std::min<size_t>(text.size(), UINT32_MAX)),
            0, scratch_, on_match, hits);
    for (auto& h : *hits) h = c_->db_ids[h];
  }
  for (uint32_t f : c_->fallback) hits->push_back(f);
  if (hits->size() > 1) std::sort(hits->begin(), hits->end());
}

bool Matcher::confirm(uint32_t p, std::string_view text, FieldValues* caps) const {
  const PatternInfo& pi = c_->patterns[p];
  return c_->sigs[pi.rep_sig].compiled->match_part(pi.rep_part, text, caps);
}

namespace {
// RE2 syntax -> POSIX ERE good enough for `grep -E` (benchmark comparisons
// only): named and non-capturing groups become plain groups, \d becomes [0-9],
// lazy quantifiers become greedy, inline flags are dropped.
std::string to_ere(const std::string& re) {
  std::string out;
  bool in_class = false;
  for (size_t i = 0; i < re.size(); ++i) {
    char c = re[i];
    if (c == '\\' && i + 1 < re.size()) {
      char n = re[i + 1];
      if (n == 'd') {
        out += in_class ? "0-9" : "[0-9]";
      } else if (n == 'D' && !in_class) {
        out += "[^0-9]";
      } else {
        out += c;
        out += n;
      }
      ++i;
      continue;
    }
    if (in_class) {
      if (c == ']') in_class = false;
      out += c;
      continue;
    }
    if (c == '[') {
      in_class = true;
      out += c;
      if (i + 1 < re.size() && re[i + 1] == '^') out += re[++i];
      if (i + 1 < re.size() && re[i + 1] == ']') out += re[++i];
      continue;
    }
    if (c == '(' && i + 1 < re.size() && re[i + 1] == '?') {
      if (re.compare(i, 4, "(?P<") == 0) {
        size_t close = re.find('>', i);
        out += '(';
        i = close == std::string::npos ? re.size() : close;
        continue;
      }
      if (re.compare(i, 3, "(?:") == 0) {
        out += '(';
        i += 2;
        continue;
      }
      size_t close = re.find(')', i);
      size_t colon = re.find(':', i);
      if (close != std::string::npos && (colon == std::string::npos || close < colon)) {
        i = close;  // (?i) and friends
        continue;
      }
      if (colon != std::string::npos) {  // (?i:...)
        out += '(';
        i = colon;
        continue;
      }
    }
    if (c == '?' && !out.empty() &&
        (out.back() == '*' || out.back() == '+' || out.back() == '?' || out.back() == '}')) {
      if (!(out.size() >= 2 && out[out.size() - 2] == '\\')) continue;  // lazy -> greedy
    }
    out += c;
  }
  return out;
}
// (?P<name>...) -> (...), leaving everything else (escapes, classes) alone.
std::string strip_group_names(const std::string& re) {
  std::string out;
  bool in_class = false;
  for (size_t i = 0; i < re.size(); ++i) {
    char c = re[i];
    if (c == '\\' && i + 1 < re.size()) {
      out += c;
      out += re[++i];
      continue;
    }
    if (in_class) {
      if (c == ']') in_class = false;
    } else if (c == '[') {
      in_class = true;
      out += c;
      if (i + 1 < re.size() && re[i + 1] == '^') out += re[++i];
      if (i + 1 < re.size() && re[i + 1] == ']') out += re[++i];
      continue;
    } else if (re.compare(i, 4, "(?P<") == 0) {
      size_t close = re.find('>', i);
      if (close != std::string::npos) {
        out += '(';
        i = close;
        continue;
      }
    }
    out += c;
  }
  return out;
}

}  // namespace

std::vector<std::string> export_first_line_patterns(const KnowledgeBase& kb, int mode) {
  std::vector<std::string> out;
  std::unordered_map<std::string, bool> seen;
  for (const Signature& s : kb.signatures) {
    if (s.patterns.empty()) continue;
    std::string p = mode == 2   ? to_ere(s.patterns[0])
                    : mode == 1 ? strip_group_names(s.patterns[0])
                                : s.patterns[0];
    if (seen.emplace(p, true).second) out.push_back(std::move(p));
  }
  return out;
}

}  // namespace reflex::ingest

namespace reflex {
std::vector<std::string> export_patterns(const KnowledgeBase& kb, PatternDialect dialect) {
  return ingest::export_first_line_patterns(kb, dialect == PatternDialect::posix_ere ? 2
                                                : dialect == PatternDialect::unnamed ? 1
                                                                                     : 0);
}

bool precompile_patterns(KnowledgeBase* kb, std::string* error) {
  kb->matcher_cache = {};  // never build from a stale cache
  ingest::Matcher m;
  std::vector<std::string> notes;
  if (!m.build(*kb, error, &notes)) return false;
  if (m.patterns().empty()) {
    if (error) *error = "the knowledge base has no patterns";
    return false;
  }
  if (!m.export_cache(&kb->matcher_cache)) {
    if (error) *error = "some pattern needs a second database; it is compiled at every start";
    return false;
  }
  return true;
}

}  // namespace reflex
