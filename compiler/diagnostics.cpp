#include "diagnostics.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string_view>
#include <tuple>

namespace reflex::compiler {
namespace {

constexpr DiagSeverity E = DiagSeverity::error;
constexpr DiagSeverity W = DiagSeverity::warning;

// clang-format off
constexpr DiagDef kDefs[] = {
  {DiagId::file_too_large, "E001", E, "", "file too large",
   "The file is larger than the compiler's limit (CompileOptions::max_file_bytes). Rule files are small; a huge file is almost always the wrong path."},
  {DiagId::invalid_utf8, "E002", E, "", "invalid UTF-8",
   "Rule files must be UTF-8 text. The byte offset of the first invalid sequence is reported."},
  {DiagId::binary_file, "E003", E, "", "binary file",
   "The file contains NUL bytes; it is not a text file."},
  {DiagId::nesting_too_deep, "E004", E, "", "nesting too deep",
   "Brackets or parentheses (also inside regexes) nest deeper than the limit (CompileOptions::max_nesting_depth)."},
  {DiagId::syntax_error, "E005", E, "", "syntax error",
   "The text does not follow the grammar of docs/language.md at this point."},
  {DiagId::unterminated_string, "E006", E, "", "unterminated string",
   "A string literal is not closed on the same line (or a \"\"\" string is never closed)."},
  {DiagId::unterminated_regex, "E007", E, "", "unterminated regex",
   "A /regex/ literal is not closed on the same line; write a literal slash as \\/."},
  {DiagId::unexpected_char, "E008", E, "", "unexpected character",
   "A character that cannot start any token of the language; a run of them is one error, "
   "named by its first character and underlined whole."},
  {DiagId::language_version, "E009", E, "", "language version",
   "Every file starts with `reflex 1`, the version of the language it is written in."},
  {DiagId::too_many_errors, "E010", E, "", "too many errors",
   "The error limit was reached; later errors of this file or unit are not reported."},
  {DiagId::duplicate_decl, "E011", E, "", "duplicate declaration",
   "Names of signatures, latents, groups, rules, patterns, classes and tests are unique across the whole unit; signatures, latents and groups share one namespace."},
  {DiagId::unknown_event, "E012", E, "", "unknown event",
   "A rule, group or test names an event that is neither a signature nor a latent (nor, in rules and groups, a group)."},
  {DiagId::unknown_pattern, "E013", E, "", "unknown pattern",
   "A regex expression refers to a `pattern` that is not declared."},
  {DiagId::unknown_class, "E014", E, "", "unknown fault class",
   "A `class` statement names a fault class that no `class` declaration defines."},
  {DiagId::unknown_parent, "E015", E, "", "unknown parent signature",
   "`extends` names a signature that does not exist."},
  {DiagId::field_not_captured, "E016", E, "", "field not captured",
   "A field is used (field declaration, when, locate, {placeholder}, example expectation, dedup by, baseline) but no named group (?P<name>...) of the signature's patterns binds it."},
  {DiagId::unknown_binding, "E017", E, "", "unknown device binding",
   "`cause.NAME`/`effect.NAME` needs a `locate ... as NAME` in that event's signature."},
  {DiagId::import_not_found, "E018", E, "", "import not found",
   "The imported file (relative to the importing file) does not exist or cannot be read."},
  {DiagId::duplicate_kb, "E019", E, "", "knowledge_base declared twice",
   "At most one file of the unit carries the `knowledge_base` metadata."},
  {DiagId::unknown_kind, "E020", E, "", "unknown device kind",
   "Device kinds are host, gpu, nic, pcie_port, nvswitch, fabric_switch, job, rank, storage."},
  {DiagId::unknown_relation, "E021", E, "", "unknown relation",
   "Relations are those of docs/language.md section 3."},
  {DiagId::unknown_transport, "E022", E, "", "unknown transport",
   "Transports are kernel, syslog, journal and app."},
  {DiagId::unknown_type, "E023", E, "", "unknown field type",
   "Field types are int, hex, float, bdf, ip and string."},
  {DiagId::invalid_keyword_value, "E024", E, "", "invalid value",
   "The statement takes one of a fixed set of words (severity, nature, symptom, expectation source)."},
  {DiagId::misplaced_statement, "E025", E, "", "statement not allowed here",
   "Each block (signature, latent, rule, test, override) allows only its own statements."},
  {DiagId::duplicate_statement, "E026", E, "", "duplicate statement",
   "The statement may appear once per declaration (or the same field is declared twice)."},
  {DiagId::invalid_literal, "E027", E, "", "invalid literal",
   "A number, duration or version is malformed (durations need a unit: ms, s, m, h, d)."},
  {DiagId::relation_kinds, "E030", E, "", "relation not defined between these kinds",
   "Each relation is defined between certain device kinds only (table in docs/language.md section 3)."},
  {DiagId::locate_type, "E031", E, "", "cannot locate this kind by this field type",
   "bdf finds gpu/nic/pcie_port/nvswitch; string finds nic/gpu/nvswitch/rank/host/fabric_switch/storage; int finds gpu/rank; ip finds nic/host."},
  {DiagId::condition_type, "E032", E, "", "condition type mismatch",
   "A condition compares a field with a value that is not of the field's type."},
  {DiagId::strength_range, "E033", E, "", "strength out of range",
   "A rule's strength is a probability-like weight in (0, 1]."},
  {DiagId::inverted_window, "E034", E, "", "inverted window",
   "`within MIN .. MAX` needs MIN <= MAX."},
  {DiagId::negative_window, "E035", E, "", "negative window without skew",
   "An effect may precede its cause only by clock skew; give `skew` at least -MIN."},
  {DiagId::latent_effect, "E036", E, "", "latent used as effect",
   "A latent cause has no log line of its own, so it cannot be observed as an effect."},
  {DiagId::override_undefined, "E037", E, "", "override of undefined declaration",
   "`override` must name a declaration defined elsewhere in the unit."},
  {DiagId::override_twice, "E038", E, "", "declaration overridden twice",
   "Two overrides of one declaration would depend on file order; merge them."},
  {DiagId::override_statement, "E039", E, "", "statement cannot be overridden",
   "Overrides may replace action, severity, description, remediation, aggregate, dedup, baseline, cleared_by, strength, within, skew, while cause lasts."},
  {DiagId::class_parent, "E040", E, "", "unknown parent class",
   "`class A < B` needs B declared."},
  {DiagId::class_cycle, "E041", E, "", "class parent cycle",
   "A class's parent chain must end at a standard class."},
  {DiagId::missing_statement, "E042", E, "", "missing required statement",
   "A concrete signature needs `on` and `match`; a latent needs `on`; a rule needs `CAUSE -> EFFECT` and `within`."},
  {DiagId::causal_cycle, "E043", E, "", "causal cycle",
   "The causal graph must be acyclic: the engine walks it backward from a symptom to a root."},
  {DiagId::regex_re2, "E044", E, "", "regex does not compile (RE2)",
   "RE2 rejects the pattern (the runtime confirms every match with RE2)."},
  {DiagId::regex_hyperscan, "E045", E, "", "regex does not compile (Hyperscan)",
   "Hyperscan rejects the pattern (the runtime prefilters with Hyperscan)."},
  {DiagId::example_no_match, "E046", E, "", "example does not match",
   "An `example` line is not matched by its own signature."},
  {DiagId::near_miss_matches, "E047", E, "", "near-miss matches",
   "A `near_miss` line is matched by the signature although it must not be."},
  {DiagId::example_transport, "E048", E, "", "example transport not in `from`",
   "The example's transport is not one of the signature's sources."},
  {DiagId::extends_cycle, "E049", E, "", "extends cycle",
   "A signature's `extends` chain loops back to itself."},
  {DiagId::engine_requirement, "E050", E, "", "engine requirement",
   "`requires engine` is malformed or not satisfied by this engine."},
  {DiagId::test_file_missing, "E051", E, "", "test file not found",
   "A test's topology file or bundle directory (relative to the .rfx file) does not exist."},
  {DiagId::example_field_value, "E052", E, "", "example field value differs",
   "An example matches, but a captured field differs from the expected value."},
  {DiagId::group_cycle, "E053", E, "", "group contains itself",
   "A `group` lists itself, directly or through other groups; groups must expand to a finite set of events."},
  {DiagId::empty_group, "E054", E, "", "empty group",
   "A `group` needs at least one member: a rule naming it would stand for no rule at all."},
  {DiagId::quorum_range, "E055", E, "", "quorum out of range",
   "`quorum N` needs a whole number of devices >= 2 (one device is no common mode); `quorum P%` a share in (0%, 100%]; at most one of each."},
  {DiagId::lasting_cause, "E056", E, "", "`while cause lasts` on a cause without a span",
   "`while cause lasts` bounds the effect by the cause's observed first..last; a latent cause has no log line, so it has none. The duration cannot be negative."},
  {DiagId::unused_import, "W001", W, "unused-import", "unused import",
   "Nothing declared in the imported file is used by the importing file."},
  {DiagId::ambiguous_match, "W002", W, "ambiguous-match", "two signatures match one line",
   "An example of one signature is also accepted by another; the runtime would raise both events."},
  {DiagId::unreachable_event, "W003", W, "unreachable-event", "no symptom can reach this event",
   "No chain of rules leads from this event to a symptom, so a diagnosis walking back from a symptom never reaches it."},
  {DiagId::unexplained_symptom, "W004", W, "unexplained-symptom", "no root can explain this symptom",
   "No event or latent with a fault class reaches this symptom through the rules."},
  {DiagId::indistinguishable_roots, "W005", W, "indistinguishable-roots", "indistinguishable roots",
   "Two root causes produce exactly the same observable events, so evidence can never tell them apart."},
  {DiagId::unanchored_pattern, "W006", W, "unanchored-pattern", "unanchored pattern",
   "A pattern with neither an anchor nor a literal of at least 4 characters is slow in the prefilter."},
  {DiagId::empty_window, "W007", W, "empty-window", "empty window",
   "`within X .. X` accepts only one exact delay."},
  {DiagId::unused_pattern, "W008", W, "unused-pattern", "unused pattern",
   "A `pattern` that no signature or pattern uses."},
  {DiagId::unknown_warning, "W009", W, "unknown-warning", "unknown warning name",
   "`allow NAME` names no warning."},
  {DiagId::duplicate_member, "W010", W, "duplicate-member", "event listed twice",
   "An event is listed twice in a group or on one side of a rule's `->` (directly or through a group); it counts once."},
  {DiagId::unused_group, "W011", W, "unused-group", "unused group",
   "A `group` that no rule and no other group names."},
  {DiagId::locate_value, "W012", W, "locate-value", "example's device is no device id",
   "A must-match example gives the `locate` field a value that is no identifier of that kind "
   "(a GPU by index or PCI address, a PCIe port by PCI address): such an event sits on a "
   "placeholder device named after the raw text."},
};
// clang-format on

constexpr bool table_in_order() {
  constexpr size_t n = sizeof(kDefs) / sizeof(kDefs[0]);
  if (n != static_cast<size_t>(DiagId::kCount)) return false;
  for (size_t i = 0; i < n; ++i) {
    if (static_cast<size_t>(kDefs[i].id) != i) return false;
    // warnings have names, errors do not
    bool named = kDefs[i].name[0] != '\0';
    if (named != (kDefs[i].severity == DiagSeverity::warning)) return false;
    if (kDefs[i].code[0] != (kDefs[i].severity == DiagSeverity::warning ? 'W' : 'E')) return false;
    for (size_t j = 0; j < i; ++j) {
      const char* a = kDefs[i].code;
      const char* b = kDefs[j].code;
      bool same = true;
      for (int k = 0; k < 4; ++k) same = same && a[k] == b[k];
      if (same) return false;
    }
  }
  return true;
}
static_assert(table_in_order(), "diagnostic table out of sync with DiagId");

int sev_rank(DiagSeverity s) {
  return s == DiagSeverity::error ? 0 : (s == DiagSeverity::warning ? 1 : 2);
}

}  // namespace

const DiagDef& diag_def(DiagId id) {
  return kDefs[static_cast<size_t>(id)];
}
bool diag_table_consistent() {
  return table_in_order();
}

SourceLoc to_loc(const SrcRange& r) {
  SourceLoc l;
  l.file = r.file;
  l.line = r.line;
  l.col = r.col;
  return l;
}

void DiagEngine::add_source(const std::string& file, const std::string& text) {
  Source& src = sources_[file];
  src.text = text;
  src.starts.clear();
}

SrcRange DiagEngine::narrow(const SrcRange& at, const std::string& fragment) {
  std::string line;
  if (fragment.empty() || !source_line(at.file, at.line, &line)) return at;
  // Columns count code points: the byte offset of each column on this line.
  std::vector<size_t> col_byte;
  for (size_t i = 0; i < line.size(); ++i)
    if ((static_cast<unsigned char>(line[i]) & 0xC0) != 0x80) col_byte.push_back(i);
  col_byte.push_back(line.size());
  const auto first = static_cast<size_t>(at.col - 1);
  const size_t last = std::min(col_byte.size() - 1, first + static_cast<size_t>(at.len));
  if (at.col < 1 || first >= last) return at;
  const std::string_view within(line.data() + col_byte[first], col_byte[last] - col_byte[first]);
  const size_t found = within.find(fragment);
  if (found == std::string_view::npos) return at;
  const size_t byte = col_byte[first] + found;
  SrcRange r = at;
  const auto col_of = [&](size_t b) {
    return static_cast<int>(std::lower_bound(col_byte.begin(), col_byte.end(), b) -
                            col_byte.begin());
  };
  r.col = col_of(byte) + 1;
  r.len = std::max(1, col_of(byte + fragment.size()) - col_of(byte));
  return r;
}

std::string re2_error_fragment(const std::string& error) {
  const size_t sep = error.find(": ");
  return sep == std::string::npos ? std::string() : error.substr(sep + 2);
}

bool DiagEngine::source_line(const std::string& file, int line, std::string* out) {
  auto it = sources_.find(file);
  if (it == sources_.end() || line < 1) return false;
  Source& src = it->second;
  const std::string& text = src.text;
  if (src.starts.empty()) {  // a line after each '\n', and one at the start
    src.starts.reserve(static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1);
    src.starts.push_back(0);
    for (size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at + 1))
      src.starts.push_back(at + 1);
  }
  const auto n = static_cast<size_t>(line);
  if (n > src.starts.size()) return false;
  const size_t start = src.starts[n - 1];
  const size_t end = n < src.starts.size() ? src.starts[n] - 1 : text.size();
  *out = text.substr(start, end - start);
  std::string& s = *out;
  if (!s.empty() && s.back() == '\r') s.pop_back();
  // Shown on terminals: control bytes and broken UTF-8 become '?', one per
  // byte, so columns stay put.
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80             ? 1
                 : (c & 0xE0) == 0xC0 ? 2
                 : (c & 0xF0) == 0xE0 ? 3
                 : (c & 0xF8) == 0xF0 ? 4
                                      : 0;
    bool ok = len > 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k)
      ok = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
    if (!ok || (len == 1 && c < 0x20 && c != '\t') || c == 0x7f) {
      s[i] = '?';
      ++i;
    } else {
      i += len;
    }
  }
  return true;
}

Diagnostic& DiagEngine::report(DiagId id, const SrcRange& at, std::string message,
                               const std::set<std::string>* allows) {
  const DiagDef& def = diag_def(id);
  DiagSeverity sev = def.severity;
  if (sev == DiagSeverity::warning) {
    std::string name = def.name;
    bool disabled =
        options_.disabled_warnings.count(name) && !options_.enabled_warnings.count(name);
    if (disabled || (allows && allows->count(name))) {
      scratch_ = Diagnostic{};
      return scratch_;
    }
    if (options_.warnings_as_errors) sev = DiagSeverity::error;
  }
  if (sev == DiagSeverity::error && errors_ >= options_.max_errors) {
    scratch_ = Diagnostic{};
    return scratch_;
  }
  Diagnostic d;
  d.severity = sev;
  d.code = def.code;
  d.name = def.name;
  d.title = def.title;
  d.message = std::move(message);
  d.loc = to_loc(at);
  d.length = std::max(1, at.len);
  if (sev == DiagSeverity::error) ++errors_;
  if (sev == DiagSeverity::error && errors_ == options_.max_errors) {
    diags_.push_back(std::move(d));
    Diagnostic stop;
    stop.severity = DiagSeverity::error;
    stop.code = diag_def(DiagId::too_many_errors).code;
    stop.title = diag_def(DiagId::too_many_errors).title;
    stop.message = "too many errors emitted, stopping now";
    diags_.push_back(std::move(stop));
    return diags_[diags_.size() - 2];
  }
  diags_.push_back(std::move(d));
  return diags_.back();
}

void DiagEngine::note(Diagnostic& d, const SrcRange& at, std::string message) {
  if (d.code.empty()) return;
  d.notes.push_back(DiagNote{to_loc(at), std::move(message)});
}

void DiagEngine::note(Diagnostic& d, std::string message) {
  if (d.code.empty()) return;
  d.notes.push_back(DiagNote{SourceLoc{}, std::move(message)});
}

std::vector<Diagnostic> DiagEngine::take() {
  std::vector<Diagnostic> out(std::make_move_iterator(diags_.begin()),
                              std::make_move_iterator(diags_.end()));
  diags_.clear();
  for (auto& d : out)
    if (!source_line(d.loc.file, d.loc.line, &d.source_line))
      d.length = 0;  // no source text to show (e.g. a file too large to read)
  // Location-less diagnostics (unit-wide) go last.
  // The key refers to the strings, not copies: a sort of many diagnostics
  // otherwise allocates per comparison.
  std::stable_sort(out.begin(), out.end(), [](const Diagnostic& a, const Diagnostic& b) {
    auto key = [](const Diagnostic& d) {
      return std::tuple<bool, const std::string&, int, int, int, const std::string&,
                        const std::string&>(d.loc.file.empty(), d.loc.file, d.loc.line, d.loc.col,
                                            sev_rank(d.severity), d.code, d.message);
    };
    return key(a) < key(b);
  });
  out.erase(std::unique(out.begin(), out.end(),
                        [](const Diagnostic& a, const Diagnostic& b) {
                          return a.loc.file == b.loc.file && a.loc.line == b.loc.line &&
                                 a.loc.col == b.loc.col && a.code == b.code &&
                                 a.message == b.message;
                        }),
            out.end());
  return out;
}

namespace {

// Names compare without '_' and '-', in lower case: `xid_79` ~ `Xid79`.
bool is_separator(char ch) {
  return ch == '_' || ch == '-';
}
char fold(char ch) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
}

// `xid_79` for `xid79_fallen_off_bus`: `squashed` (the word without '_' and
// '-', lower case) starts the candidate's squashed form, which is longer.
bool squashed_prefix_of(const std::string& squashed, const std::string& candidate) {
  size_t i = 0;
  for (char ch : candidate) {
    if (is_separator(ch)) continue;
    if (i == squashed.size()) return true;  // a squashed character follows: longer
    if (fold(ch) != squashed[i]) return false;
    ++i;
  }
  return false;
}

// Levenshtein distances from one pattern, by bit vectors (Myers 1999, in
// Hyyro 2003's global form, 64 pattern characters a block): a column of the
// table is a few words of bits, so a candidate costs one pass over its
// characters per block instead of a cell per character pair. The fuzzed
// compiler spent 8% of its time (31% on inputs of long mutated class
// names) filling even a banded table.
class PatternBits {
 public:
  explicit PatternBits(const std::string& pattern)
      : m_(pattern.size()), words_((pattern.size() + 63) / 64), eq_(256 * words_, 0) {
    for (size_t i = 0; i < m_; ++i)
      eq_[static_cast<unsigned char>(pattern[i]) * words_ + i / 64] |= uint64_t{1} << (i % 64);
  }

  size_t distance(const std::string& text) {
    if (m_ == 0) return text.size();
    vp_.assign(words_, ~uint64_t{0});
    vn_.assign(words_, 0);
    const uint64_t last = uint64_t{1} << ((m_ - 1) % 64);
    size_t dist = m_;
    for (unsigned char ch : text) {
      const uint64_t* eq = &eq_[ch * words_];
      uint64_t hp_carry = 1, hn_carry = 0;  // row 0 of the table rises by one a column
      for (size_t w = 0; w < words_; ++w) {
        const uint64_t vp = vp_[w], vn = vn_[w];
        const uint64_t x = eq[w] | hn_carry;
        const uint64_t d0 = (((x & vp) + vp) ^ vp) | x | vn;
        uint64_t hp = vn | ~(d0 | vp);
        uint64_t hn = d0 & vp;
        const uint64_t hp_in = hp_carry, hn_in = hn_carry;
        const uint64_t top = w + 1 < words_ ? uint64_t{1} << 63 : last;
        hp_carry = (hp & top) != 0;
        hn_carry = (hn & top) != 0;
        hp = (hp << 1) | hp_in;
        hn = (hn << 1) | hn_in;
        vp_[w] = hn | ~(d0 | hp);
        vn_[w] = hp & d0;
      }
      dist = dist + hp_carry - hn_carry;
    }
    return dist;
  }

 private:
  size_t m_, words_;
  std::vector<uint64_t> eq_;  // [character * words_ + block]: where the pattern has it
  std::vector<uint64_t> vp_, vn_;
};

}  // namespace

size_t edit_distance(const std::string& a, const std::string& b) {
  return PatternBits(a).distance(b);
}

// The same answer as scoring every candidate with edit_distance, but a
// candidate that cannot beat the best so far or the limit (their lengths
// alone differ by more) is not scored, and the word's bit vectors are built
// once, and only if some candidate is scored (they take 2 KB per 64
// characters of the word): sema asks this for every unknown name against
// every name of the KB.
std::string closest(const std::string& word, const std::vector<std::string>& candidates) {
  // Allow roughly a third of the word to differ (clang uses a similar bound).
  const size_t limit = std::max<size_t>(2, (word.size() + 2) / 3);
  std::string w;
  for (char ch : word)
    if (!is_separator(ch)) w += fold(ch);
  const std::string* best = nullptr;
  size_t best_d = std::string::npos;
  std::optional<PatternBits> bits;  // built when a candidate is first scored
  for (const auto& c : candidates) {
    const size_t cap = std::min(limit, best_d);
    size_t d;
    if (w.size() >= 3 && squashed_prefix_of(w, c)) {
      d = 1;  // 0 only for c == word, whose squashed form is not longer
    } else {
      const size_t lower = c.size() > word.size() ? c.size() - word.size() : word.size() - c.size();
      if (lower > cap) continue;
      if (!bits) bits.emplace(word);
      d = bits->distance(c);
      if (d > cap) continue;
    }
    if (d < best_d || (d == best_d && c < *best)) {
      best_d = d;
      best = &c;
    }
  }
  if (!best || best_d > limit || *best == word) return "";
  return *best;
}

}  // namespace reflex::compiler

namespace reflex {

const char* to_string(DiagSeverity s) {
  switch (s) {
    case DiagSeverity::note:
      return "note";
    case DiagSeverity::warning:
      return "warning";
    case DiagSeverity::error:
      return "error";
  }
  return "error";
}

const std::vector<DiagnosticInfo>& diagnostic_catalog() {
  static const std::vector<DiagnosticInfo> catalog = [] {
    std::vector<DiagnosticInfo> v;
    for (const auto& d : compiler::kDefs)
      v.push_back(DiagnosticInfo{d.code, d.severity, d.name, d.title, d.description});
    return v;
  }();
  return catalog;
}

bool is_warning_name(const std::string& name) {
  for (const auto& d : compiler::kDefs)
    if (d.severity == DiagSeverity::warning && name == d.name) return true;
  return false;
}

int CompileResult::errors() const {
  int n = 0;
  for (const auto& d : diagnostics) n += d.severity == DiagSeverity::error;
  return n;
}

int CompileResult::warnings() const {
  int n = 0;
  for (const auto& d : diagnostics) n += d.severity == DiagSeverity::warning;
  return n;
}

}  // namespace reflex
