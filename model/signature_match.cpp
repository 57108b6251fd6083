// Signature matching: RE2 in Latin-1 mode (byte semantics, like Hyperscan's),
// named captures, typed normalisation via reflex/values.h, `when` conditions.
#include "reflex/signature_match.h"

#include <array>
#include <cstdlib>
#include <map>
#include <mutex>

#include "pattern_re2.h"
#include "reflex/values.h"

namespace reflex {
namespace {

// Submatch slots live on the stack so a non-matching line allocates nothing.
constexpr int kMaxGroups = 64;

// A condition with its regexes compiled and its literal values pre-parsed.
struct CompiledCond {
  Condition::Op op = Condition::Op::eq;
  std::string field;
  FieldType type = FieldType::string;
  std::vector<std::string> values;  // normalised per the field's type
  std::vector<double> numbers;      // numeric types: parsed values
  std::unique_ptr<RE2> re;          // matches
  std::vector<CompiledCond> kids;
};

bool numeric(FieldType t) {
  return t == FieldType::int_ || t == FieldType::float_ || t == FieldType::hex;
}

std::optional<double> to_number(FieldType t, std::string_view s) {
  if (t == FieldType::hex) {
    auto h = normalize_hex(s);
    if (!h) return std::nullopt;
    return static_cast<double>(std::strtoull(h->c_str() + 2, nullptr, 16));
  }
  if (auto i = parse_int(s)) return static_cast<double>(*i);
  if (auto hx = normalize_hex(s); hx && s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
    return static_cast<double>(std::strtoull(hx->c_str() + 2, nullptr, 16));
  if (auto d = parse_float(s)) return *d;
  if (auto d = parse_duration_s(s)) return *d;
  return std::nullopt;
}

const char* op_text(Condition::Op op) {
  switch (op) {
    case Condition::Op::eq:
      return "==";
    case Condition::Op::ne:
      return "!=";
    case Condition::Op::lt:
      return "<";
    case Condition::Op::le:
      return "<=";
    case Condition::Op::gt:
      return ">";
    case Condition::Op::ge:
      return ">=";
    case Condition::Op::in:
      return "in";
    case Condition::Op::not_in:
      return "not in";
    case Condition::Op::matches:
      return "matches";
    case Condition::Op::and_:
      return "and";
    case Condition::Op::or_:
      return "or";
    case Condition::Op::not_:
      return "not";
  }
  return "?";
}

std::string describe(const Condition& c) {
  switch (c.op) {
    case Condition::Op::and_:
    case Condition::Op::or_: {
      std::string s;
      for (size_t i = 0; i < c.children.size(); ++i) {
        if (i) s += std::string(" ") + op_text(c.op) + " ";
        s += "(" + describe(c.children[i]) + ")";
      }
      return s;
    }
    case Condition::Op::not_:
      return "not (" + (c.children.empty() ? std::string() : describe(c.children[0])) + ")";
    case Condition::Op::in:
    case Condition::Op::not_in: {
      std::string s = c.field + " " + op_text(c.op) + " {";
      for (size_t i = 0; i < c.values.size(); ++i) s += (i ? ", " : "") + c.values[i];
      return s + "}";
    }
    case Condition::Op::matches:
      return c.field + " matches /" + (c.values.empty() ? "" : c.values[0]) + "/";
    default:
      return c.field + " " + op_text(c.op) + " " + (c.values.empty() ? "" : c.values[0]);
  }
}

const std::string* find_cap(const FieldValues& caps, const std::string& name) {
  for (const auto& [k, v] : caps)
    if (k == name) return &v;
  return nullptr;
}

}  // namespace

struct CompiledSignature::Impl {
  Signature sig;
  // One per pattern: built at compile(), or at its first match_part() when
  // compiled with Patterns::deferred (call_once: matchers are shared by
  // --threads workers).
  struct Part {
    std::unique_ptr<RE2> re;         // null: deferred and not built yet, or refused
    std::vector<std::string> names;  // index = group number, up to the last named one
    std::unique_ptr<std::once_flag> once = std::make_unique<std::once_flag>();
  };
  std::vector<Part> parts;
  // "" or why pattern text p is refused (too many groups, RE2's error).
  static std::string build_part(const std::string& text, Part* out) {
    auto re = std::make_unique<RE2>(text, re2_pattern_options());
    if (!re->ok()) return re->error();
    if (re->NumberOfCapturingGroups() >= kMaxGroups)
      return "too many capture groups (at most " + std::to_string(kMaxGroups - 1) + ")";
    std::vector<std::string> names(static_cast<size_t>(re->NumberOfCapturingGroups()) + 1);
    for (const auto& [idx, name] : re->CapturingGroupNames())
      names[static_cast<size_t>(idx)] = name;
    // Up to the last named group: match_part asks RE2 for no more.
    while (names.size() > 1 && names.back().empty()) names.pop_back();
    out->names = std::move(names);
    out->re = std::move(re);
    return "";
  }
  bool deferred = false;
  const Part* ready(size_t i) {
    Part& part = parts[i];
    if (deferred) std::call_once(*part.once, [&] { build_part(sig.patterns[i], &part); });
    return part.re ? &part : nullptr;
  }
  std::map<std::string, FieldType> types;
  std::optional<CompiledCond> when;
  std::optional<Condition> when_src;

  bool compile_cond(const Condition& c, CompiledCond* out, std::string* error) const {
    out->op = c.op;
    out->field = c.field;
    if (c.op == Condition::Op::and_ || c.op == Condition::Op::or_ || c.op == Condition::Op::not_) {
      if (c.children.empty() || (c.op == Condition::Op::not_ && c.children.size() != 1)) {
        *error = std::string("malformed '") + op_text(c.op) + "' condition";
        return false;
      }
      for (const auto& k : c.children) {
        out->kids.emplace_back();
        if (!compile_cond(k, &out->kids.back(), error)) return false;
      }
      return true;
    }
    auto t = types.find(c.field);
    out->type = t == types.end() ? FieldType::string : t->second;
    if (c.values.empty()) {
      *error = "condition on '" + c.field + "' has no value";
      return false;
    }
    if (c.op == Condition::Op::matches) {
      out->re = std::make_unique<RE2>(c.values[0], re2_pattern_options());
      if (!out->re->ok()) {
        *error = "condition regex /" + c.values[0] + "/: " + out->re->error();
        return false;
      }
      return true;
    }
    for (const auto& v : c.values) {
      if (numeric(out->type)) {
        auto n = to_number(out->type, v);
        if (!n) {
          *error = "condition on " + std::string(to_string(out->type)) + " field '" + c.field +
                   "' compares with '" + v + "', which is not a number";
          return false;
        }
        out->numbers.push_back(*n);
        out->values.push_back(v);
      } else {
        auto n = normalize_value(out->type, v);
        out->values.push_back(n ? *n : v);
      }
    }
    return true;
  }

  static bool eval(const CompiledCond& c, const FieldValues& caps) {
    switch (c.op) {
      case Condition::Op::and_:
        for (const auto& k : c.kids)
          if (!eval(k, caps)) return false;
        return true;
      case Condition::Op::or_:
        for (const auto& k : c.kids)
          if (eval(k, caps)) return true;
        return false;
      case Condition::Op::not_:
        return !eval(c.kids[0], caps);
      default:
        break;
    }
    const std::string* v = find_cap(caps, c.field);
    if (v == nullptr) return false;
    if (c.op == Condition::Op::matches) return RE2::PartialMatch(*v, *c.re);
    // A numeric value is parsed once, not once per literal (`xid in {...}`).
    std::optional<double> num;
    if (numeric(c.type)) num = to_number(c.type, *v);
    auto cmp = [&](size_t i) -> std::optional<int> {
      if (!numeric(c.type)) {
        int r = v->compare(c.values[i]);
        return r < 0 ? -1 : (r > 0 ? 1 : 0);
      }
      if (!num) return std::nullopt;
      return *num < c.numbers[i] ? -1 : (*num > c.numbers[i] ? 1 : 0);
    };
    if (c.op == Condition::Op::in || c.op == Condition::Op::not_in) {
      bool found = false;
      for (size_t i = 0; i < c.values.size() && !found; ++i) found = cmp(i) == 0;
      return c.op == Condition::Op::in ? found : !found;
    }
    auto r = cmp(0);
    if (!r) return false;
    switch (c.op) {
      case Condition::Op::eq:
        return *r == 0;
      case Condition::Op::ne:
        return *r != 0;
      case Condition::Op::lt:
        return *r < 0;
      case Condition::Op::le:
        return *r <= 0;
      case Condition::Op::gt:
        return *r > 0;
      case Condition::Op::ge:
        return *r >= 0;
      default:
        return false;
    }
  }

  // The first false conjunct, for a readable "why".
  static const Condition* first_false(const Condition& src, const CompiledCond& c,
                                      const FieldValues& caps) {
    if (c.op == Condition::Op::and_) {
      for (size_t i = 0; i < c.kids.size(); ++i)
        if (!eval(c.kids[i], caps)) return first_false(src.children[i], c.kids[i], caps);
    }
    return &src;
  }
};

CompiledSignature::CompiledSignature() : impl_(std::make_unique<Impl>()) {}
CompiledSignature::~CompiledSignature() = default;

std::unique_ptr<CompiledSignature> CompiledSignature::compile(const Signature& sig,
                                                              std::string* error,
                                                              Patterns patterns) {
  std::string scratch;
  if (error == nullptr) error = &scratch;
  try {
    std::unique_ptr<CompiledSignature> cs(new CompiledSignature());
    Impl& m = *cs->impl_;
    m.sig = sig;
    if (sig.patterns.empty()) {
      *error = "signature '" + sig.name + "' has no pattern";
      return nullptr;
    }
    for (const auto& f : sig.fields) m.types[f.name] = f.type;
    m.parts.resize(sig.patterns.size());
    m.deferred = patterns == Patterns::deferred;
    if (!m.deferred) {
      for (size_t i = 0; i < sig.patterns.size(); ++i) {
        std::string why = Impl::build_part(sig.patterns[i], &m.parts[i]);
        if (!why.empty()) {
          *error = std::move(why);
          return nullptr;
        }
      }
    }
    if (sig.when) {
      CompiledCond c;
      if (!m.compile_cond(*sig.when, &c, error)) return nullptr;
      m.when = std::move(c);
      m.when_src = *sig.when;
    }
    return cs;
  } catch (const std::exception& e) {
    *error = e.what();
    return nullptr;
  }
}

const Signature& CompiledSignature::signature() const {
  return impl_->sig;
}
size_t CompiledSignature::parts() const {
  return impl_->parts.size();
}

bool CompiledSignature::match_part(size_t i, std::string_view text, FieldValues* caps) const {
  if (i >= impl_->parts.size()) return false;
  const Impl::Part* part = impl_->ready(i);
  if (!part) return false;
  const RE2& re = *part->re;
  const auto& names = part->names;
  // No submatch asked for when no named group is read: RE2 then runs its
  // forward DFA alone and stops at the first match (a suspect's
  // `mlx5_core.*fail`), not also the reverse DFA for the match's start.
  const int n = caps != nullptr && names.size() > 1 ? static_cast<int>(names.size()) : 0;
  std::array<re2::StringPiece, kMaxGroups> sub;
  re2::StringPiece input(text.data(), text.size());
  if (!re.Match(input, 0, input.size(), RE2::UNANCHORED, sub.data(), n)) return false;
  if (n > 0) {
    for (int g = 1; g < n; ++g) {
      const auto& name = names[static_cast<size_t>(g)];
      if (name.empty() || sub[static_cast<size_t>(g)].data() == nullptr) continue;
      caps->emplace_back(name, std::string(sub[static_cast<size_t>(g)].data(),
                                           sub[static_cast<size_t>(g)].size()));
    }
  }
  return true;
}

bool CompiledSignature::type_fields(FieldValues* caps) const {
  for (auto& [name, value] : *caps) {
    auto t = impl_->types.find(name);
    if (t == impl_->types.end()) continue;
    auto norm = normalize_value(t->second, value);
    if (!norm) return false;
    value = std::move(*norm);
  }
  return true;
}

bool CompiledSignature::when_holds(const FieldValues& caps) const {
  return !impl_->when || Impl::eval(*impl_->when, caps);
}

bool CompiledSignature::accept(FieldValues* caps, std::string* why) const {
  for (auto& [name, value] : *caps) {
    auto t = impl_->types.find(name);
    if (t == impl_->types.end()) continue;  // undeclared captures stay strings
    auto norm = normalize_value(t->second, value);
    if (!norm) {
      if (why)
        *why = "field " + name + ": '" + value + "' is not " +
               (t->second == FieldType::int_ ? "an " : "a ") + to_string(t->second);
      return false;
    }
    value = std::move(*norm);
  }
  if (impl_->when && !Impl::eval(*impl_->when, *caps)) {
    if (why) {
      const Condition* f = Impl::first_false(*impl_->when_src, *impl_->when, *caps);
      *why = "condition " + describe(*f) + " is false";
      if (!f->field.empty()) {
        const std::string* v = find_cap(*caps, f->field);
        *why += v ? " (" + f->field + " = " + *v + ")" : " (" + f->field + " was not captured)";
      }
    }
    return false;
  }
  return true;
}

bool CompiledSignature::accepts_transport(Transport transport) const {
  return (impl_->sig.sources & transport) != 0;
}

bool match_text(const CompiledSignature& sig, std::string_view text, Transport transport,
                FieldValues* out, std::string* why) {
  if (!sig.accepts_transport(transport)) {
    if (why) *why = std::string("transport '") + transport_name(transport) + "' is not in `from`";
    return false;
  }
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  const size_t window = static_cast<size_t>(std::max(1, sig.signature().join_within_lines));
  std::string last_why = "the pattern does not match";
  for (size_t i = 0; i < lines.size(); ++i) {
    FieldValues caps;
    if (!sig.match_part(0, lines[i], &caps)) continue;
    size_t prev = i;
    bool all = true;
    for (size_t p = 1; p < sig.parts() && all; ++p) {
      bool found = false;
      for (size_t j = prev + 1; j < lines.size() && j <= prev + window; ++j) {
        if (sig.match_part(p, lines[j], &caps)) {
          prev = j;
          found = true;
          break;
        }
      }
      if (!found) {
        all = false;
        last_why = "continuation pattern " + std::to_string(p + 1) + " matches no following line";
      }
    }
    if (!all) continue;
    std::string w;
    if (sig.accept(&caps, &w)) {
      if (out) *out = std::move(caps);
      return true;
    }
    last_why = w;
  }
  if (why) *why = last_why;
  return false;
}

}  // namespace reflex
