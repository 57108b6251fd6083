// The compiled knowledge base on disk: magic + CBOR (nlohmann::json).
// Every struct is written field by field with defaults on read, so a newer
// reader tolerates an older artifact of the same format version.
#include "reflex/artifact.h"

#include "cbor_members.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#ifndef REFLEX_VERSION
#define REFLEX_VERSION "0.0.0"
#endif

namespace reflex {

using nlohmann::json;

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(SourceLoc, file, line, col)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(FieldDecl, name, type)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Condition, op, field, values, children)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Locator, kind, field, binding)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Aggregation, count_at_least, within_s)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Dedup, window_s, by_fields)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Baseline, field, factor, window, below)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Example, line, source, expect, loc)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(OddOneOut, event, field, among)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Latent, name, loc, kind, fault_class, severity,
                                                nature, description, action, remediation, check,
                                                silent, quorum_devices, quorum_share, odd_one_out)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(DeviceRef, side, binding)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RelationConstraint, lhs, rel, rhs)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Rule, name, loc, cause, effect, where, min_s, max_s,
                                                skew_s, lasting_s, strength)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(FaultClass, name, parent, description, loc)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Nature, name, description, evicts, loc)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(TestLog, host, source, line)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(TestExpect, kind, device, fault_class, event, rank,
                                                loc)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(KbTest, name, loc, topology_path, topology_json,
                                                bundle_dir, logs, expects)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(KbMeta, language_version, name, version,
                                                requires_engine)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ArtifactInfo, format_version, compiler_version,
                                                source_hash)

// Signature has an optional<Condition>, which nlohmann 3.11 does not map itself.
void to_json(json& j, const Signature& s) {
  j = json{{"name", s.name},
           {"loc", s.loc},
           {"kind", s.kind},
           {"sources", s.sources},
           {"patterns", s.patterns},
           {"join_within_lines", s.join_within_lines},
           {"fields", s.fields},
           {"locators", s.locators},
           {"fault_class", s.fault_class},
           {"severity", s.severity},
           {"nature", s.nature},
           {"description", s.description},
           {"action", s.action},
           {"check", s.check},
           {"remediation", s.remediation},
           {"symptom", s.symptom},
           {"aggregate", s.aggregate},
           {"dedup", s.dedup},
           {"baseline", s.baseline},
           {"cleared_by", s.cleared_by},
           {"clear_within_s", s.clear_within_s},
           {"examples", s.examples},
           {"near_misses", s.near_misses},
           {"suspect", s.suspect},
           {"background", s.background}};
  if (s.when) j["when"] = *s.when;
}

void from_json(const json& j, Signature& s) {
  Signature d;
  s.name = j.value("name", d.name);
  s.loc = j.value("loc", d.loc);
  s.kind = j.value("kind", d.kind);
  s.sources = j.value("sources", d.sources);
  s.patterns = j.value("patterns", d.patterns);
  s.join_within_lines = j.value("join_within_lines", d.join_within_lines);
  s.fields = j.value("fields", d.fields);
  s.locators = j.value("locators", d.locators);
  s.fault_class = j.value("fault_class", d.fault_class);
  s.severity = j.value("severity", d.severity);
  s.nature = j.value("nature", d.nature);
  s.description = j.value("description", d.description);
  s.action = j.value("action", d.action);
  s.check = j.value("check", d.check);
  s.remediation = j.value("remediation", d.remediation);
  s.symptom = j.value("symptom", d.symptom);
  s.aggregate = j.value("aggregate", d.aggregate);
  s.dedup = j.value("dedup", d.dedup);
  s.baseline = j.value("baseline", d.baseline);
  s.cleared_by = j.value("cleared_by", d.cleared_by);
  s.clear_within_s = j.value("clear_within_s", d.clear_within_s);
  s.examples = j.value("examples", d.examples);
  s.near_misses = j.value("near_misses", d.near_misses);
  s.suspect = j.value("suspect", d.suspect);
  s.background = j.value("background", d.background);
  if (j.contains("when")) s.when = j.at("when").get<Condition>();
}

// A CBOR byte string, not an array of numbers: the database is ~0.5 MB.
void to_json(json& j, const MatcherCache& c) {
  j = json{{"key", c.key},
           {"data", json::binary(std::vector<uint8_t>(c.data.begin(), c.data.end()))}};
}
void from_json(const json& j, MatcherCache& c) {
  c.key = j.value("key", std::string());
  c.data.clear();
  if (auto it = j.find("data"); it != j.end() && it->is_binary())
    c.data.assign(it->get_binary().begin(), it->get_binary().end());
}

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(KnowledgeBase, meta, artifact, matcher_cache,
                                                classes, natures, signatures, latents, rules, tests)

namespace {
// A whole artifact file, mapped read-only for the length of the load: the
// page cache's own pages, no copy (a 4.4 MB read into fresh memory cost
// ~1,100 page faults or, populated ahead, the kernel zeroing them first;
// each is ~10 us on a VM). Whatever outlives the load is copied out of it.
// save_artifact replaces a file by rename, so a mapped artifact is not
// rewritten under its reader (truncating it in place would fault the read).
class MappedFile {
 public:
  MappedFile(int fd, size_t n) : n_(n) {
    void* p = mmap(nullptr, n_, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (p != MAP_FAILED) p_ = static_cast<const uint8_t*>(p);
  }
  ~MappedFile() {
    if (p_) munmap(const_cast<uint8_t*>(p_), n_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const uint8_t* data() const { return p_; }

 private:
  size_t n_;
  const uint8_t* p_ = nullptr;
};
}  // namespace

namespace {
// "RFXKB\0" and the format version, big-endian, in the last two bytes.
constexpr char kMagic[8] = {'R',
                            'F',
                            'X',
                            'K',
                            'B',
                            '\0',
                            char(kArtifactFormatVersion >> 8),
                            char(kArtifactFormatVersion & 0xff)};
}  // namespace

const char* engine_version() {
  return REFLEX_VERSION;
}

std::vector<uint8_t> kb_to_cbor(const KnowledgeBase& kb) {
  return json::to_cbor(json(kb));
}

namespace {
// The DOM builder with a nesting limit: nlohmann's CBOR reader recurses once
// per level, so a hostile artifact of nested arrays overflowed the stack
// (found by the artifact fuzz target). A compiled KB nests a few levels deep.
class DepthLimitedSax : public nlohmann::json_sax<json> {
 public:
  // drop_examples: the signatures' examples and near misses are read past,
  // not built (38% of the signatures' bytes; only reflexc reads them).
  // Decodes one top-level member's value (its key given) as if inside the
  // document's object, which is depth 1.
  DepthLimitedSax(json& out, bool drop_examples, std::string_view top_key)
      : dom_(out, /*allow_exceptions=*/false),
        depth_(1),
        drop_examples_(drop_examples),
        top_key_(top_key) {}
  bool null() override { return dropped() || dom_.null(); }
  bool boolean(bool v) override { return dropped() || dom_.boolean(v); }
  bool number_integer(number_integer_t v) override { return dropped() || dom_.number_integer(v); }
  bool number_unsigned(number_unsigned_t v) override {
    return dropped() || dom_.number_unsigned(v);
  }
  bool number_float(number_float_t v, const string_t& s) override {
    return dropped() || dom_.number_float(v, s);
  }
  bool string(string_t& v) override { return dropped() || dom_.string(v); }
  bool binary(binary_t& v) override { return dropped() || dom_.binary(v); }
  bool start_object(std::size_t n) override {
    if (++depth_ > kMaxDepth) return false;
    return opened() || dom_.start_object(n);
  }
  bool key(string_t& v) override {
    if (skip_depth_ > 0) return true;
    if (drop_examples_ && depth_ == 3 && top_key_ == "signatures" &&
        (v == "examples" || v == "near_misses")) {
      skip_value_ = true;
      return true;
    }
    return dom_.key(v);
  }
  bool end_object() override {
    --depth_;
    return closed() || dom_.end_object();
  }
  bool start_array(std::size_t n) override {
    if (++depth_ > kMaxDepth) return false;
    return opened() || dom_.start_array(n);
  }
  bool end_array() override {
    --depth_;
    return closed() || dom_.end_array();
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  // A scalar value that is dropped (inside a dropped value, or the value of
  // a dropped key itself).
  bool dropped() {
    if (skip_depth_ > 0) return true;
    return std::exchange(skip_value_, false);
  }
  bool opened() {
    if (skip_depth_ > 0 || std::exchange(skip_value_, false)) {
      ++skip_depth_;
      return true;
    }
    return false;
  }
  bool closed() {
    if (skip_depth_ == 0) return false;
    --skip_depth_;
    return true;
  }
  static constexpr int kMaxDepth = 64;
  nlohmann::detail::json_sax_dom_parser<json> dom_;
  int depth_ = 0;
  bool drop_examples_;
  std::string top_key_;
  bool skip_value_ = false;
  int skip_depth_ = 0;
};

bool wanted(std::string_view key, KbParts parts) {
  if (!parts.tests && key == "tests") return false;
  if (!parts.rules && (key == "rules" || key == "latents")) return false;
  return true;
}

// {"data": bytes, "key": text}, as to_json(MatcherCache) writes it, taken in
// place; false for any other shape (then nlohmann decodes it).
bool matcher_cache_in_place(const CborMember& m, MatcherCache* out) {
  std::vector<CborMember> inner;
  if (!cbor_map_members(m.value, m.value_size, &inner) || inner.size() != 2) return false;
  const uint8_t *data = nullptr, *key = nullptr;
  size_t data_size = 0, key_size = 0;
  for (const CborMember& f : inner) {
    if (f.key == "data" && cbor_string(f.value, f.value_size, 2, &data, &data_size)) continue;
    if (f.key == "key" && cbor_string(f.value, f.value_size, 3, &key, &key_size)) continue;
    return false;
  }
  if (!data || !key) return false;
  out->key.assign(reinterpret_cast<const char*>(key), key_size);
  out->data.assign(data, data + data_size);
  return true;
}

std::optional<KnowledgeBase> kb_from_cbor_bytes(const uint8_t* begin, const uint8_t* end,
                                                std::string* error, KbParts parts) {
  const char* const corrupt =
      "the artifact's contents are not a valid knowledge base (truncated or corrupt)";
  // The members are found first (their structure checked to the last byte);
  // those a caller needs are decoded, the matcher database in place.
  std::vector<CborMember> members;
  if (!cbor_map_members(begin, static_cast<size_t>(end - begin), &members)) {
    if (error) *error = corrupt;
    return std::nullopt;
  }
  std::optional<MatcherCache> cache;
  std::vector<const CborMember*> kept;
  for (const CborMember& m : members) {
    if (!wanted(m.key, parts)) continue;
    MatcherCache c;
    if (m.key == "matcher_cache" && matcher_cache_in_place(m, &c)) {
      cache = std::move(c);
      continue;
    }
    kept.push_back(&m);
  }
  // Each kept member's value decoded where it lies (the scan bounded it), into
  // the document's object. allow_exceptions=false is not enough: nlohmann
  // 3.11's DOM builder still throws out_of_range for a declared array size
  // beyond max_size (found by the artifact fuzz target), so a hostile
  // artifact is caught here as well.
  json j = json::object();
  for (const CborMember* m : kept) {
    json value;
    bool ok = false;
    try {
      DepthLimitedSax sax(value, !parts.examples, m->key);
      ok = json::sax_parse(m->value, m->value + m->value_size, &sax, json::input_format_t::cbor,
                           /*strict=*/true);
    } catch (const json::exception&) {
      ok = false;
    }
    if (!ok || value.is_discarded()) {
      if (error) *error = corrupt;
      return std::nullopt;
    }
    j[std::string(m->key)] = std::move(value);
  }
  try {
    KnowledgeBase kb = j.get<KnowledgeBase>();
    if (cache) kb.matcher_cache = std::move(*cache);
    return kb;
  } catch (const std::exception& e) {
    if (error) *error = std::string("the artifact's contents do not fit this engine: ") + e.what();
    return std::nullopt;
  }
}
}  // namespace

std::optional<KnowledgeBase> kb_from_cbor(const std::vector<uint8_t>& bytes, std::string* error,
                                          KbParts parts) {
  return kb_from_cbor_bytes(bytes.data(), bytes.data() + bytes.size(), error, parts);
}

bool save_artifact(const KnowledgeBase& kb, const std::string& path, std::string* error) {
  std::vector<uint8_t> body = kb_to_cbor(kb);
  // Write to a temporary name and rename, so a reader never sees half a file.
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      if (error) *error = "cannot write '" + tmp + "': " + std::strerror(errno);
      return false;
    }
    out.write(kMagic, sizeof kMagic);
    out.write(reinterpret_cast<const char*>(body.data()),
              static_cast<std::streamsize>(body.size()));
    if (!out) {
      if (error) *error = "cannot write '" + tmp + "': " + std::strerror(errno);
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    if (error) *error = "cannot rename '" + tmp + "' to '" + path + "': " + std::strerror(errno);
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

bool is_artifact_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[8] = {};
  if (!in.read(head, sizeof head)) return false;
  return std::memcmp(head, kMagic, 6) == 0;  // "RFXKB\0": any format version
}

namespace {
constexpr size_t kMaxStreamedArtifact = size_t(1) << 30;  // the shipped KB is ~10 MB
}  // namespace

std::optional<KnowledgeBase> load_artifact(const std::string& path, std::string* error,
                                           KbParts parts) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (error) *error = "cannot open '" + path + "': " + std::strerror(errno);
    return std::nullopt;
  }
  std::optional<MappedFile> mapped;
  std::vector<uint8_t> streamed;
  const uint8_t* bytes = nullptr;
  size_t n = 0;
  struct stat st {};
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    mapped.emplace(fd, static_cast<size_t>(st.st_size));
    if (mapped->data()) {
      bytes = mapped->data();
      n = static_cast<size_t>(st.st_size);
    }
  }
  if (!bytes) {  // not a regular file (a pipe), or not mappable: read it
    char chunk[1 << 16];
    for (;;) {
      const ssize_t got = ::read(fd, chunk, sizeof chunk);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) {
        if (error) *error = "cannot read '" + path + "': " + std::strerror(errno);
        ::close(fd);
        return std::nullopt;
      }
      if (got == 0) break;
      streamed.insert(streamed.end(), chunk, chunk + got);
      // A pipe of anything else (/dev/zero) is refused early, not read to
      // the end of memory.
      const bool bad_magic = streamed.size() >= 6 && std::memcmp(streamed.data(), kMagic, 6) != 0;
      if (bad_magic || streamed.size() > kMaxStreamedArtifact) {
        if (error)
          *error = "'" + path + "' is not a Reflex knowledge-base artifact" +
                   (bad_magic ? std::string() : " (over 1 GiB)");
        ::close(fd);
        return std::nullopt;
      }
    }
    bytes = streamed.data();
    n = streamed.size();
  }
  ::close(fd);
  if (n < sizeof kMagic || std::memcmp(bytes, kMagic, 6) != 0) {
    if (error) *error = "'" + path + "' is not a Reflex knowledge-base artifact";
    return std::nullopt;
  }
  int format = bytes[6] << 8 | bytes[7];
  if (format != kArtifactFormatVersion) {
    if (error)
      *error = "'" + path + "' has artifact format " + std::to_string(format) +
               ", this engine reads format " + std::to_string(kArtifactFormatVersion) +
               "; rebuild it with this version's reflexc";
    return std::nullopt;
  }
  std::string why;
  auto kb = kb_from_cbor_bytes(bytes + sizeof kMagic, bytes + n, &why, parts);
  if (!kb) {
    if (error) *error = "'" + path + "': " + why;
    return std::nullopt;
  }
  if (kb->artifact.format_version != kArtifactFormatVersion) {
    if (error)
      *error = "'" + path + "' records format version " +
               std::to_string(kb->artifact.format_version) + ", expected " +
               std::to_string(kArtifactFormatVersion);
    return std::nullopt;
  }
  if (!engine_version_satisfies(engine_version(), kb->meta.requires_engine, &why)) {
    if (error) *error = "'" + path + "': " + why;
    return std::nullopt;
  }
  return kb;
}

namespace {
bool parse_semver(const std::string& s, int v[3]) {
  v[0] = v[1] = v[2] = 0;
  int n = std::sscanf(s.c_str(), "%d.%d.%d", &v[0], &v[1], &v[2]);
  return n >= 1;
}
}  // namespace

bool engine_version_satisfies(const std::string& engine, const std::string& req,
                              std::string* error) {
  std::string r = req;
  while (!r.empty() && r.front() == ' ') r.erase(r.begin());
  if (r.empty()) return true;
  std::string op;
  while (!r.empty() && (r.front() == '>' || r.front() == '<' || r.front() == '=')) {
    op.push_back(r.front());
    r.erase(r.begin());
  }
  while (!r.empty() && r.front() == ' ') r.erase(r.begin());
  if (op.empty()) op = ">=";
  int want[3], have[3];
  if (!parse_semver(r, want) || !parse_semver(engine, have)) {
    if (error) *error = "cannot read engine requirement '" + req + "'";
    return false;
  }
  int cmp = 0;
  for (int i = 0; i < 3 && cmp == 0; ++i) cmp = (have[i] > want[i]) - (have[i] < want[i]);
  bool ok = op == ">="                  ? cmp >= 0
            : op == ">"                 ? cmp > 0
            : (op == "=" || op == "==") ? cmp == 0
            : op == "<"                 ? cmp < 0
            : op == "<="                ? cmp <= 0
                                        : false;
  if (!ok && error)
    *error = "the knowledge base requires engine " + req + ", this is engine " + engine;
  return ok;
}

}  // namespace reflex
