// The event codec (reflex/event_json.h).
#include "reflex/event_json.h"

#include <array>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "reflex/json_text.h"
#include "reflex/topology.h"

namespace reflex {

namespace {

using nlohmann::json;
using ojson = nlohmann::ordered_json;

std::string scalar_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number_unsigned()) return std::to_string(v.get<uint64_t>());
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_null()) return "";
  return v.dump();
}

// {"k": v, ...} (the line) or [["k", v], ...] (the record) or
// [{"name": k, "value": v}, ...].
void read_pairs(const json& j, const char* key,
                std::vector<std::pair<std::string, std::string>>* out) {
  auto it = j.find(key);
  if (it == j.end()) return;
  if (it->is_object()) {
    for (auto& [k, v] : it->items()) out->emplace_back(k, scalar_text(v));
  } else if (it->is_array()) {
    for (auto& p : *it) {
      if (p.is_array() && p.size() == 2 && p[0].is_string())
        out->emplace_back(p[0].get<std::string>(), scalar_text(p[1]));
      else if (p.is_object() && p.contains("name") && p["name"].is_string())
        out->emplace_back(p["name"].get<std::string>(),
                          p.contains("value") ? scalar_text(p["value"]) : std::string());
    }
  }
}

// RFC 3339 text (the line) or microseconds (the record); null is absent.
bool read_time(const json& j, const char* key, std::optional<TimeUs>* out, std::string* error) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return true;
  if (it->is_string()) {
    *out = parse_rfc3339(it->get<std::string>());
    if (!*out && error) *error = std::string("bad \"") + key + "\": " + it->get<std::string>();
    return out->has_value();
  }
  if (it->is_number_integer()) {
    // Beyond year 9999 the line form could not write it back: refused
    // like a bad string (the fast path's rule too).
    const bool huge = it->is_number_unsigned() && it->get<uint64_t>() > uint64_t{INT64_MAX};
    const int64_t v = huge ? INT64_MAX : it->get<int64_t>();
    if (!in_rfc3339_range(v)) {
      if (error)
        *error =
            std::string("bad \"") + key + "\": " + it->dump() + " us is outside years 0000-9999";
      return false;
    }
    *out = v;
  }
  return true;
}

json pairs_array(const std::vector<std::pair<std::string, std::string>>& v) {
  json a = json::array();
  for (auto& [k, x] : v) a.push_back(json::array({k, x}));
  return a;
}

// ---- The record's fast path ----
// A diagnoser decodes every stream entry (the agents write records); building
// nlohmann's DOM (a std::map per object, a node per value) was a quarter of
// its CPU. This reader takes the record as event_to_record_json writes it --
// known keys once each, strings that are ASCII, pairs of strings, integer
// times -- straight into the Event. Anything else (another key, a duplicate,
// a number where text belongs, a non-ASCII byte, a \u escape past the BMP's
// plain range, trailing text) returns false and the DOM path above decides,
// so what is accepted, rejected and said stays the DOM path's.
class RecordReader {
 public:
  explicit RecordReader(std::string_view t) : p_(t.data()), end_(t.data() + t.size()) {}

  bool ws() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
    return p_ < end_;
  }
  bool eat(char c) {
    if (!ws() || *p_ != c) return false;
    ++p_;
    return true;
  }
  bool peek(char c) { return ws() && *p_ == c; }
  bool at_end() {
    ws();
    return p_ == end_;
  }
  bool literal(const char* word) {
    size_t n = std::strlen(word);
    if (!ws() || static_cast<size_t>(end_ - p_) < n || std::memcmp(p_, word, n) != 0) return false;
    p_ += n;
    return true;
  }
  // A JSON string of ASCII text into *out.
  bool string(std::string* out) {
    if (!eat('"')) return false;
    out->clear();
    for (;;) {
      const char* run = p_;
      while (p_ < end_ && *p_ != '"' && *p_ != '\\' && static_cast<unsigned char>(*p_) >= 0x20 &&
             static_cast<unsigned char>(*p_) < 0x80)
        ++p_;
      out->append(run, p_);
      if (p_ >= end_) return false;
      if (*p_ == '"') {
        ++p_;
        return true;
      }
      if (*p_ != '\\') return false;  // a control character or a non-ASCII byte
      if (++p_ >= end_) return false;
      const char esc = *p_++;
      if (char c = json_short_escape(esc)) {
        out->push_back(c);
        continue;
      }
      if (esc != 'u' || end_ - p_ < 4) return false;
      unsigned cp = 0;
      auto [q, ec] = std::from_chars(p_, p_ + 4, cp, 16);
      if (ec != std::errc() || q != p_ + 4) return false;
      p_ += 4;
      if (cp >= 0xD800 && cp <= 0xDFFF) return false;  // surrogates: the DOM path
      append_utf8(out, cp);
    }
  }
  // A JSON number's text (its grammar checked), and whether it is an integer.
  bool number(std::string_view* text, bool* integer) {
    if (!ws()) return false;
    const char* b = p_;
    if (p_ < end_ && *p_ == '-') ++p_;
    if (p_ >= end_ || *p_ < '0' || *p_ > '9') return false;
    if (*p_ == '0') {
      ++p_;
    } else {
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
    }
    *integer = true;
    if (p_ < end_ && *p_ == '.') {
      *integer = false;
      ++p_;
      if (p_ >= end_ || *p_ < '0' || *p_ > '9') return false;
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      *integer = false;
      ++p_;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (p_ >= end_ || *p_ < '0' || *p_ > '9') return false;
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
    }
    *text = std::string_view(b, static_cast<size_t>(p_ - b));
    return true;
  }
  // An integer that nlohmann would also keep as one (int64 if signed, uint64
  // if not); false for anything else.
  bool integer(int64_t* s, uint64_t* u, bool* negative) {
    std::string_view t;
    bool is_int = false;
    if (!number(&t, &is_int) || !is_int) return false;
    *negative = t[0] == '-';
    if (*negative) {
      auto [q, ec] = std::from_chars(t.data(), t.data() + t.size(), *s);
      return ec == std::errc() && q == t.data() + t.size();
    }
    auto [q, ec] = std::from_chars(t.data(), t.data() + t.size(), *u);
    return ec == std::errc() && q == t.data() + t.size();
  }
  // [["k", "v"], ...] into *out.
  bool pairs(std::vector<std::pair<std::string, std::string>>* out) {
    if (!eat('[')) return false;
    if (eat(']')) return true;
    for (;;) {
      std::string k, v;
      if (!eat('[') || !string(&k) || !eat(',') || !string(&v) || !eat(']')) return false;
      out->emplace_back(std::move(k), std::move(v));
      if (eat(']')) return true;
      if (!eat(',')) return false;
    }
  }

 private:
  const char* p_;
  const char* end_;
};

// The keys a record may hold, each at most once.
enum RecordKey : unsigned {
  kEvent,
  kName,
  kDevice,
  kHost,
  kEvidence,
  kLine,
  kKind,
  kTs,
  kMono,
  kTransport,
  kSource,
  kClock,
  kFields,
  kBindings,
  kCount,
  kFirst,
  kLast,
  kPlaceholder,
  kSeq,
  kTimeInherited,
  kKeys
};
constexpr std::string_view kRecordKeys[kKeys] = {
    "event", "name",  "device",    "host",        "evidence", "line",          "kind",
    "ts",    "mono",  "transport", "source",      "clock",    "fields",        "bindings",
    "count", "first", "last",      "placeholder", "seq",      "time_inherited"};

// What a record's keys were read into, before parse_event_json's
// post-processing.
struct RecordParts {
  Event e;
  std::string ename, name, kind, transport, source;
  bool has_kind = false;
};

// The string slot of key k (nullptr: not a plain string key).
std::string* text_slot(RecordParts* p, unsigned k) {
  switch (k) {
    case kEvent:
      return &p->ename;
    case kName:
      return &p->name;
    case kDevice:
      return &p->e.device;
    case kHost:
      return &p->e.host;
    case kEvidence:
      return &p->e.evidence;
    case kLine:
      return &p->e.line;
    case kTransport:
      return &p->transport;
    case kSource:
      return &p->source;
    case kClock:
      return &p->e.time.clock;
    default:
      return nullptr;
  }
}

// ts / first / last: null, an RFC 3339 string or integer microseconds. A bad
// `ts` string is the DOM path's to name (false).
bool read_time(RecordReader& r, bool is_ts, std::optional<TimeUs>* slot) {
  int64_t sv = 0;
  uint64_t uv = 0;
  bool neg = false;
  if (r.literal("null")) return true;
  if (r.peek('"')) {
    std::string t;
    if (!r.string(&t)) return false;
    *slot = parse_rfc3339(t);
    return *slot || !is_ts;
  }
  if (!r.integer(&sv, &uv, &neg)) return false;
  if (!neg && uv > static_cast<uint64_t>(INT64_MAX)) return false;
  const int64_t v = neg ? sv : static_cast<int64_t>(uv);
  if (!in_rfc3339_range(v)) return !is_ts;  // as a bad string
  *slot = v;
  return true;
}

// mono: an integer is converted as nlohmann holds it (so "-0" is 0, not
// -0.0); a fraction is read correctly rounded, as strtod does.
template <class Mono>
bool read_mono(RecordReader& r, Mono* mono) {
  if (r.literal("null")) return true;
  int64_t sv = 0;
  uint64_t uv = 0;
  bool neg = false;
  RecordReader probe = r;
  if (probe.integer(&sv, &uv, &neg)) {
    r = probe;
    *mono = neg ? static_cast<double>(sv) : static_cast<double>(uv);
    return true;
  }
  std::string_view t;
  bool is_int = false;
  if (!r.number(&t, &is_int) || is_int) return false;
  double d = 0;
  auto [q, ec] = std::from_chars(t.data(), t.data() + t.size(), d);
  if (ec != std::errc() || q != t.data() + t.size()) return false;
  *mono = d;
  return true;
}

// The value of key k into *p; false = not the record's shape.
bool read_value(RecordReader& r, unsigned k, RecordParts* p) {
  Event& e = p->e;
  if (std::string* slot = text_slot(p, k)) {
    if (r.literal("null")) {
      slot->clear();
      return true;
    }
    return r.string(slot);
  }
  int64_t sv = 0;
  uint64_t uv = 0;
  bool neg = false;
  switch (k) {
    case kKind:
      if (r.literal("null")) return true;
      p->has_kind = r.string(&p->kind);
      return p->has_kind;
    case kTs:
      return read_time(r, true, &e.time.wall);
    case kFirst:
      return read_time(r, false, &e.first);
    case kLast:
      return read_time(r, false, &e.last);
    case kMono:
      return read_mono(r, &e.time.mono);
    case kFields:
      return r.pairs(&e.fields);
    case kBindings:
      return r.pairs(&e.bindings);
    case kCount:
    case kSeq:
      if (!r.integer(&sv, &uv, &neg)) return false;
      if (!neg) (k == kCount ? e.count : e.seq) = uv;
      return true;
    case kPlaceholder:
    case kTimeInherited: {
      bool& flag = k == kPlaceholder ? e.placeholder_device : e.time.inherited;
      if (r.literal("true")) {
        flag = true;
        return true;
      }
      if (!r.literal("false")) return false;
      flag = false;
      return true;
    }
    default:
      return false;
  }
}

// parse_event_json's post-processing of what was read.
bool finish_record(RecordParts&& p, const KnowledgeBase* kb, const Topology* topo, Event* out) {
  Event& e = p.e;
  e.name = !p.ename.empty() ? std::move(p.ename) : std::move(p.name);
  if (e.name.empty() || e.device.empty()) return false;  // the DOM path says which
  const Signature* sig = kb ? kb->find_signature(e.name) : nullptr;
  if (p.has_kind) {
    if (auto dk = device_kind_from_string(p.kind)) e.kind = *dk;
  } else if (sig) {
    e.kind = sig->kind;
  } else if (auto info = topo ? topo->device(e.device) : std::nullopt) {
    e.kind = info->kind;
  }
  if (p.transport.empty()) p.transport = std::move(p.source);
  if (auto t = transport_from_string(p.transport)) {
    e.transport = *t;
  } else if (sig && sig->sources == kTransportKernel) {
    e.transport = kTransportKernel;
  }
  if (kb && e.time.clock.empty() && !e.host.empty())
    e.time.clock = e.host + (e.transport == kTransportKernel ? "/kernel" : "/app");
  *out = std::move(e);
  return true;
}

// The record (or a line in the same shape) without a DOM; false = not this
// shape, the DOM path decides. The post-processing mirrors parse_event_json's.
bool parse_record_fast(std::string_view text, const KnowledgeBase* kb, const Topology* topo,
                       Event* out) {
  RecordReader r(text);
  RecordParts parts;
  std::string key;
  uint32_t seen = 0;
  if (!r.eat('{')) return false;
  if (!r.eat('}')) {
    for (;;) {
      if (!r.string(&key)) return false;
      unsigned k = 0;
      while (k < kKeys && kRecordKeys[k] != key) ++k;
      if (k == kKeys || (seen & (1u << k))) return false;
      seen |= 1u << k;
      if (!r.eat(':') || !read_value(r, k, &parts)) return false;
      if (r.eat('}')) break;
      if (!r.eat(',')) return false;
    }
  }
  if (!r.at_end()) return false;
  return finish_record(std::move(parts), kb, topo, out);
}

}  // namespace

EventLineWriter::EventLineWriter(const KnowledgeBase* kb) {
  if (!kb) return;
  for (const Signature& s : kb->signatures) {
    if (s.fault_class.empty()) continue;
    Class c;
    c.standard = kb->standard_class(s.fault_class);
    if (c.standard.empty()) c.standard = s.fault_class;
    if (c.standard != s.fault_class) c.subclass = s.fault_class;
    classes_.emplace(s.name, std::move(c));
  }
}

namespace {
// `s` as a JSON string, the bytes nlohmann's dump(-1, ' ', false, replace)
// writes: ASCII escaped here, anything else through nlohmann (its UTF-8
// checks and replacement characters).
// Bytes a JSON string must escape (control bytes, '"', '\\').
constexpr std::array<bool, 256> kEscaped = [] {
  std::array<bool, 256> t{};
  for (int c = 0; c < 0x20; ++c) t[static_cast<size_t>(c)] = true;
  t['"'] = t['\\'] = true;
  return t;
}();
bool all_ascii(std::string_view s) {
  uint64_t high = 0;  // 8 bytes a step: event lines are mostly raw log lines
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    high |= w;
  }
  for (; i < s.size(); ++i) high |= static_cast<unsigned char>(s[i]);
  return (high & 0x8080808080808080ull) == 0;
}
void put_string(std::string* out, std::string_view s) {
  if (!all_ascii(s)) {
    *out += ojson(std::string(s)).dump(-1, ' ', false, ojson::error_handler_t::replace);
    return;
  }
  out->push_back('"');
  // Runs of bytes that need no escape are appended whole (a byte at a time
  // was ~4% of `reflex events` on the mixed bench).
  size_t run = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    if (!kEscaped[static_cast<unsigned char>(ch)]) continue;
    out->append(s.substr(run, i - run));
    run = i + 1;
    switch (ch) {
      case '"':
        *out += "\\\"";
        break;
      case '\\':
        *out += "\\\\";
        break;
      case '\b':
        *out += "\\b";
        break;
      case '\f':
        *out += "\\f";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\r':
        *out += "\\r";
        break;
      case '\t':
        *out += "\\t";
        break;
      default: {
        char u[8];
        std::snprintf(u, sizeof u, "\\u%04x", static_cast<unsigned>(ch));
        *out += u;
      }
    }
  }
  out->append(s.substr(run));
  out->push_back('"');
}
void put_key(std::string* out, std::string_view key) {
  if (out->size() > 1) out->push_back(',');
  put_string(out, key);
  out->push_back(':');
}
void put_string_or_null(std::string* out, std::string_view key, const std::string* v) {
  put_key(out, key);
  if (v)
    put_string(out, *v);
  else
    *out += "null";
}
void put_object(std::string* out, std::string_view key,
                const std::vector<std::pair<std::string, std::string>>& kv) {
  put_key(out, key);
  out->push_back('{');
  for (size_t i = 0; i < kv.size(); ++i) {
    if (i) out->push_back(',');
    put_string(out, kv[i].first);
    out->push_back(':');
    put_string(out, kv[i].second);
  }
  out->push_back('}');
}
bool unique_keys(const std::vector<std::pair<std::string, std::string>>& kv) {
  for (size_t i = 0; i < kv.size(); ++i)
    for (size_t j = i + 1; j < kv.size(); ++j)
      if (kv[i].first == kv[j].first) return false;
  return true;
}
}  // namespace

// The line written directly: `reflex events` prints one per event, and a
// JSON tree per line was 5% of a bundle's ingest time. Repeated field or
// binding names (the tree keeps the last value at the first place) take
// the tree.
std::string EventLineWriter::line(const Event& ev, const std::string* evidence) const {
  if (!unique_keys(ev.fields) || !unique_keys(ev.bindings)) return line_via_tree(ev, evidence);
  auto ci = classes_.find(ev.name);
  const Class* c = ci == classes_.end() ? nullptr : &ci->second;
  std::string out;
  out.reserve(256 + ev.line.size());
  out.push_back('{');
  put_string_or_null(&out, "event", &ev.name);
  put_string_or_null(&out, "fault_class", c ? &c->standard : nullptr);
  if (c && !c->subclass.empty()) put_string_or_null(&out, "subclass", &c->subclass);
  put_string_or_null(&out, "device", &ev.device);
  put_string_or_null(&out, "host", ev.host.empty() ? nullptr : &ev.host);
  std::string t;
  if (ev.time.wall) t = format_time_us(*ev.time.wall);
  put_string_or_null(&out, "ts", ev.time.wall ? &t : nullptr);
  if (!ev.time.wall && ev.time.mono) {
    put_key(&out, "mono");
    out += ojson(*ev.time.mono).dump();  // nlohmann's number format
  }
  put_object(&out, "fields", ev.fields);
  put_string_or_null(&out, "evidence", evidence ? evidence : &ev.evidence);
  put_string_or_null(&out, "line", &ev.line);
  put_key(&out, "transport");
  put_string(&out, transport_name(ev.transport));
  if (!ev.time.clock.empty()) put_string_or_null(&out, "clock", &ev.time.clock);
  if (ev.time.inherited) {
    put_key(&out, "time_inherited");
    out += "true";
  }
  if (!ev.bindings.empty()) put_object(&out, "bindings", ev.bindings);
  if (ev.count > 1) {
    put_key(&out, "count");
    out += std::to_string(ev.count);
    std::string first, last;
    if (ev.first) first = format_time_us(*ev.first);
    if (ev.last) last = format_time_us(*ev.last);
    put_string_or_null(&out, "first", ev.first ? &first : nullptr);
    put_string_or_null(&out, "last", ev.last ? &last : nullptr);
  }
  if (ev.placeholder_device) {
    put_key(&out, "placeholder");
    out += "true";
  }
  out.push_back('}');
  return out;
}

std::string EventLineWriter::line_via_tree(const Event& ev, const std::string* evidence) const {
  ojson j;
  j["event"] = ev.name;
  auto ci = classes_.find(ev.name);
  j["fault_class"] = ci == classes_.end() ? ojson(nullptr) : ojson(ci->second.standard);
  if (ci != classes_.end() && !ci->second.subclass.empty()) j["subclass"] = ci->second.subclass;
  j["device"] = ev.device;
  j["host"] = ev.host.empty() ? ojson(nullptr) : ojson(ev.host);
  j["ts"] = ev.time.wall ? ojson(format_time_us(*ev.time.wall)) : ojson(nullptr);
  if (!ev.time.wall && ev.time.mono) j["mono"] = *ev.time.mono;
  ojson fields = ojson::object();
  for (auto& [k, v] : ev.fields) fields[k] = v;
  j["fields"] = std::move(fields);
  j["evidence"] = evidence ? *evidence : ev.evidence;
  j["line"] = ev.line;
  j["transport"] = transport_name(ev.transport);
  if (!ev.time.clock.empty()) j["clock"] = ev.time.clock;  // which clock ts came from (skew)
  if (ev.time.inherited) j["time_inherited"] = true;       // ts is a lower bound
  if (!ev.bindings.empty()) {
    ojson b = ojson::object();
    for (auto& [k, v] : ev.bindings) b[k] = v;
    j["bindings"] = std::move(b);
  }
  if (ev.count > 1) {
    j["count"] = ev.count;
    j["first"] = ev.first ? ojson(format_time_us(*ev.first)) : ojson(nullptr);
    j["last"] = ev.last ? ojson(format_time_us(*ev.last)) : ojson(nullptr);
  }
  if (ev.placeholder_device) j["placeholder"] = true;
  return j.dump(-1, ' ', false, ojson::error_handler_t::replace);
}

std::string event_to_record_json(const Event& ev) {
  json j;
  j["name"] = ev.name;
  j["device"] = ev.device;
  j["kind"] = to_string(ev.kind);
  j["host"] = ev.host;
  j["ts"] = ev.time.wall ? json(*ev.time.wall) : json(nullptr);
  j["mono"] = ev.time.mono ? json(*ev.time.mono) : json(nullptr);
  j["clock"] = ev.time.clock;
  if (ev.time.inherited) j["time_inherited"] = true;
  j["fields"] = pairs_array(ev.fields);
  j["bindings"] = pairs_array(ev.bindings);
  j["evidence"] = ev.evidence;
  j["line"] = ev.line;
  j["transport"] = transport_name(ev.transport);
  j["count"] = ev.count;
  j["first"] = ev.first ? json(*ev.first) : json(nullptr);
  j["last"] = ev.last ? json(*ev.last) : json(nullptr);
  j["placeholder"] = ev.placeholder_device;
  j["seq"] = ev.seq;
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<Event> parse_event_json(std::string_view text, std::string* error,
                                      const KnowledgeBase* kb, const Topology* topo) {
  auto fail = [&](const std::string& m) -> std::optional<Event> {
    if (error) *error = m;
    return std::nullopt;
  };
  if (Event fast; parse_record_fast(text, kb, topo, &fast)) return fast;
  json j = json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return fail("not a JSON object");
  Event e;
  auto str = [&](const char* k) -> std::string {
    auto it = j.find(k);
    return it == j.end() ? std::string() : scalar_text(*it);
  };
  // The identity of an event is text: a number or an array there is a
  // mistyped (foreign or damaged) line, not an event to guess at.
  for (const char* k : {"event", "name", "device", "host", "evidence", "line"}) {
    auto it = j.find(k);
    if (it != j.end() && !it->is_string() && !it->is_null())
      return fail(std::string("\"") + k + "\" is not a string");
  }
  e.name = str("event");
  if (e.name.empty()) e.name = str("name");  // the record
  if (e.name.empty()) return fail("missing \"event\"");
  e.device = str("device");
  if (e.device.empty()) return fail("missing \"device\"");
  e.host = str("host");
  e.evidence = str("evidence");
  e.line = str("line");
  const Signature* sig = kb ? kb->find_signature(e.name) : nullptr;
  if (auto k = j.find("kind"); k != j.end() && k->is_string()) {
    if (auto dk = device_kind_from_string(k->get<std::string>())) e.kind = *dk;
  } else if (sig) {
    e.kind = sig->kind;
  } else if (auto info = topo ? topo->device(e.device) : std::nullopt) {
    e.kind = info->kind;
  }
  std::string err;
  if (!read_time(j, "ts", &e.time.wall, &err)) return fail(err);
  if (auto m = j.find("mono"); m != j.end() && m->is_number()) e.time.mono = m->get<double>();
  std::string transport = str("transport");
  if (transport.empty()) transport = str("source");
  if (auto t = transport_from_string(transport)) {
    e.transport = *t;
  } else if (sig && sig->sources == kTransportKernel) {
    e.transport = kTransportKernel;
  }
  e.time.clock = str("clock");
  if (auto t = j.find("time_inherited"); t != j.end() && t->is_boolean())
    e.time.inherited = t->get<bool>();
  if (kb && e.time.clock.empty() && !e.host.empty())
    e.time.clock = e.host + (e.transport == kTransportKernel ? "/kernel" : "/app");
  read_pairs(j, "fields", &e.fields);
  read_pairs(j, "bindings", &e.bindings);
  if (auto c = j.find("count"); c != j.end() && c->is_number_unsigned())
    e.count = c->get<uint64_t>();
  else if (c != j.end() && c->is_number_integer() && c->get<int64_t>() > 0)
    e.count = static_cast<uint64_t>(c->get<int64_t>());
  // first/last are informational: a bad one is dropped, not the event.
  read_time(j, "first", &e.first, nullptr);
  read_time(j, "last", &e.last, nullptr);
  if (auto p = j.find("placeholder"); p != j.end() && p->is_boolean())
    e.placeholder_device = p->get<bool>();
  if (auto s = j.find("seq"); s != j.end() && s->is_number_unsigned()) e.seq = s->get<uint64_t>();
  return e;
}

}  // namespace reflex
