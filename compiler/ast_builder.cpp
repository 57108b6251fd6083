// Parse tree -> AST: each declaration and statement of the ANTLR tree as the
// compiler's Decl/Member values (ast.h), with source ranges.
#include <algorithm>
#include <cstddef>
#include <memory>
#include <optional>
#include <set>

#include "front_end.h"
#include "parser.h"

namespace reflex::compiler {

TokenText::TokenText(const std::string& text) : text_(text) {
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) bom_ = 3;
  for (size_t i = bom_; i < text.size(); ++i) {
    if (static_cast<unsigned char>(text[i]) < 0x80) continue;
    // Not all ASCII: the byte offset of each code point.
    offsets_.reserve(text.size() - bom_ + 1);
    for (size_t b = bom_; b < text.size(); ++b)
      if ((static_cast<unsigned char>(text[b]) & 0xC0) != 0x80) offsets_.push_back(b);
    offsets_.push_back(text.size());
    break;
  }
}

std::string TokenText::of(const antlr4::Token* t) const {
  const size_t first = t->getStartIndex(), last = t->getStopIndex();
  // EOF, and tokens the error recovery made up, have no source text.
  if (t->getType() == antlr4::Token::EOF || t->getTokenIndex() == INVALID_INDEX ||
      first == INVALID_INDEX || last == INVALID_INDEX || last < first)
    return t->getText();
  const size_t b = byte(first), e = byte(last + 1);
  if (e > text_.size() || e < b) return t->getText();
  return text_.substr(b, e - b);
}

std::string TokenText::of(antlr4::tree::ParseTree* n) const {
  std::string out;
  append(n, out);
  return out;
}

size_t TokenText::byte(size_t code_point) const {
  if (offsets_.empty()) return bom_ + code_point;
  return code_point < offsets_.size() ? offsets_[code_point] : text_.size() + 1;
}

void TokenText::append(antlr4::tree::ParseTree* n, std::string& out) const {
  if (auto* t = ReflexContext::terminal(n)) {
    out += of(t->getSymbol());
    return;
  }
  for (auto* c : n->children) append(c, out);
}

namespace {

// `p` if it is exactly a T (a labelled alternative's context), or null;
// without dynamic_cast (see ReflexContext).
template <typename T>
T* as(antlr4::tree::ParseTree* p) {
  return ReflexContext::exactly<T>(p);
}

class Builder {
 public:
  Builder(const std::string& file, const std::string& text) : file_(file), text_(text) {}

  SrcRange tok(const antlr4::Token* t) const { return token_range(file_, t); }
  SrcRange node(antlr4::tree::TerminalNode* n) const {
    return n ? tok(n->getSymbol()) : SrcRange{};
  }
  SrcRange ctx_range(antlr4::ParserRuleContext* c) const {
    if (!c || !c->getStart()) return {};
    SrcRange r = tok(c->getStart());
    const antlr4::Token* stop = c->getStop();
    if (stop && stop->getLine() == c->getStart()->getLine() &&
        stop->getStopIndex() >= c->getStart()->getStartIndex()) {
      int end = static_cast<int>(stop->getCharPositionInLine()) + 1 + tok(stop).len;
      r.len = std::max(1, end - r.col);
    }
    return r;
  }

  Ident ident(ReflexParser::NameContext* n) const {
    Ident id;
    if (!n || n->getStart() == nullptr) return id;
    id.text = text_.of(n);
    id.range = tok(n->getStart());
    return id;
  }
  Ident ident(ReflexParser::RelNameContext* n) const {
    Ident id;
    if (!n || n->getStart() == nullptr) return id;
    id.text = text_.of(n);
    id.range = tok(n->getStart());
    return id;
  }

  Value string_value(antlr4::tree::TerminalNode* n) const {
    Value v;
    v.kind = Value::Kind::string;
    if (!n) return v;
    std::string t = text(n);
    if (t.size() >= 6 && t.rfind("\"\"\"", 0) == 0) {
      v.text = t.substr(3, t.size() - 6);
    } else if (t.size() >= 2) {
      v.text = unescape_string(t.substr(1, t.size() - 2));
    }
    v.range = node(n);
    return v;
  }

  Value number_value(antlr4::tree::TerminalNode* n) const {
    Value v;
    v.kind = Value::Kind::number;
    if (!n) return v;
    v.text = text(n);
    v.range = node(n);
    return v;
  }

  Value duration(ReflexParser::DurationContext* d) const {
    Value v;
    if (!d) return v;
    if (d->DURATION()) {
      v.kind = Value::Kind::duration;
      v.text = text(d->DURATION());
      v.range = node(d->DURATION());
    } else if (d->NUMBER()) {
      v.kind = Value::Kind::number;
      v.text = text(d->NUMBER());
      v.range = node(d->NUMBER());
    }
    return v;
  }

  Value value(ReflexParser::ValueContext* c) const {
    Value v;
    if (!c) return v;
    if (c->STRING()) return string_value(c->STRING());
    if (c->NUMBER()) return number_value(c->NUMBER());
    if (c->DURATION()) {
      v.kind = Value::Kind::duration;
      v.text = text(c->DURATION());
      v.range = node(c->DURATION());
      return v;
    }
    if (c->name()) {
      v.kind = Value::Kind::ident;
      Ident id = ident(c->name());
      v.text = id.text;
      v.range = id.range;
    }
    return v;
  }

  RegexAtom regex_literal(antlr4::tree::TerminalNode* n) const {
    RegexAtom a;
    if (!n) return a;
    std::string t = text(n);
    std::string body = t.size() >= 2 ? t.substr(1, t.size() - 2) : std::string();
    std::string out;
    for (size_t i = 0; i < body.size(); ++i) {
      if (body[i] == '\\' && i + 1 < body.size() && body[i + 1] == '/') {
        out += '/';
        ++i;
      } else {
        out += body[i];
      }
    }
    a.text = out;
    a.range = node(n);
    return a;
  }

  RegexExpr regex(ReflexParser::RegexExprContext* c) const {
    RegexExpr e;
    if (!c) return e;
    e.range = ctx_range(c);
    for (auto* a : c->regexAtom()) {
      if (a->REGEX()) {
        e.atoms.push_back(regex_literal(a->REGEX()));
      } else if (a->name()) {
        RegexAtom r;
        r.is_ref = true;
        Ident id = ident(a->name());
        r.text = id.text;
        r.range = id.range;
        e.atoms.push_back(r);
      }
    }
    return e;
  }

  Cond cond(ReflexParser::CondContext* c) const {
    Cond out;
    if (!c) return out;
    out.range = ctx_range(c);
    if (auto* p = as<ReflexParser::ParenCondContext>(c)) return cond(p->cond());
    if (auto* n = as<ReflexParser::NotCondContext>(c)) {
      out.op = Cond::Op::not_;
      out.kids.push_back(cond(n->cond()));
      return out;
    }
    // `a and b and c ...` is a left-deep tree in ANTLR: walk its spine
    // iteratively into one n-ary node, so long chains cannot exhaust the stack.
    if (as<ReflexParser::AndCondContext>(c) || as<ReflexParser::OrCondContext>(c)) {
      const bool is_and = as<ReflexParser::AndCondContext>(c) != nullptr;
      out.op = is_and ? Cond::Op::and_ : Cond::Op::or_;
      std::vector<ReflexParser::CondContext*> rights;
      ReflexParser::CondContext* cur = c;
      while (true) {
        std::vector<ReflexParser::CondContext*> kids;
        if (is_and) {
          auto* a = as<ReflexParser::AndCondContext>(cur);
          if (!a) break;
          kids = a->cond();
        } else {
          auto* o = as<ReflexParser::OrCondContext>(cur);
          if (!o) break;
          kids = o->cond();
        }
        if (kids.size() > 1) rights.push_back(kids[1]);
        if (kids.empty()) {
          cur = nullptr;
          break;
        }
        cur = kids[0];
      }
      if (cur) out.kids.push_back(cond(cur));
      for (auto it = rights.rbegin(); it != rights.rend(); ++it) out.kids.push_back(cond(*it));
      return out;
    }
    if (auto* cc = as<ReflexParser::CompareCondContext>(c)) {
      out.field = ident(cc->name());
      std::string op = cc->OP ? text_.of(cc->OP) : "==";
      out.op = op == "=="   ? Cond::Op::eq
               : op == "!=" ? Cond::Op::ne
               : op == "<"  ? Cond::Op::lt
               : op == "<=" ? Cond::Op::le
               : op == ">"  ? Cond::Op::gt
                            : Cond::Op::ge;
      if (cc->value()) out.values.push_back(value(cc->value()));
      return out;
    }
    if (auto* ic = as<ReflexParser::InCondContext>(c)) {
      out.field = ident(ic->name());
      out.op = ic->NOT ? Cond::Op::not_in : Cond::Op::in;
      for (auto* v : ic->value()) out.values.push_back(value(v));
      return out;
    }
    if (auto* mc = as<ReflexParser::MatchesCondContext>(c)) {
      out.field = ident(mc->name());
      out.op = Cond::Op::matches;
      if (mc->REGEX()) {
        RegexAtom a = regex_literal(mc->REGEX());
        out.regex = a.text;
        out.regex_range = a.range;
      }
      return out;
    }
    return out;
  }

  DevRef devref(ReflexParser::DevRefContext* d) const {
    DevRef r;
    if (!d) return r;
    r.range = ctx_range(d);
    auto names = d->name();
    if (!names.empty()) r.side = ident(names[0]);
    if (names.size() > 1) r.binding = ident(names[1]);
    return r;
  }

  // One member statement; each helper below fills `m` for its statements and
  // says whether `b` was one of them.
  std::optional<Member> member(ReflexParser::MemberBodyContext* b) const {
    if (!b) return std::nullopt;
    Member m;
    m.range = tok(b->getStart());
    if (match_member(b, m) || report_member(b, m) || shape_member(b, m) || rule_member(b, m) ||
        test_member(b, m))
      return m;
    return std::nullopt;
  }

  // `on`, `from`, `match`, `field`, `when`, `locate`: how a line becomes an event.
  bool match_member(ReflexParser::MemberBodyContext* b, Member& m) const {
    using K = Member::Kind;
    using P = ReflexParser;
    if (auto* c = as<P::OnMemberContext>(b)) {
      m.kind = K::on;
      m.idents.push_back(ident(c->name()));
      return true;
    }
    if (auto* c = as<P::FromMemberContext>(b)) {
      m.kind = K::from;
      for (auto* n : c->name()) m.idents.push_back(ident(n));
      return true;
    }
    if (auto* c = as<P::MatchMemberContext>(b)) {
      m.kind = K::match;
      for (auto* r : c->regexExpr()) m.regexes.push_back(regex(r));
      if (c->NUMBER()) m.values.push_back(number_value(c->NUMBER()));
      return true;
    }
    if (auto* c = as<P::FieldMemberContext>(b)) {
      m.kind = K::field;
      for (auto* n : c->name()) m.idents.push_back(ident(n));
      return true;
    }
    if (auto* c = as<P::WhenMemberContext>(b)) {
      m.kind = K::when;
      if (c->cond()) m.cond = cond(c->cond());
      return true;
    }
    if (auto* c = as<P::LocateMemberContext>(b)) {
      m.kind = K::locate;
      for (auto* n : c->name()) m.idents.push_back(ident(n));
      return true;
    }
    return false;
  }

  // What a signature says about its event.
  bool report_member(ReflexParser::MemberBodyContext* b, Member& m) const {
    using K = Member::Kind;
    using P = ReflexParser;
    if (auto* c = as<P::ClassMemberContext>(b)) {
      m.kind = K::class_;
      m.idents.push_back(ident(c->name()));
      return true;
    }
    if (auto* c = as<P::SeverityMemberContext>(b)) {
      m.kind = K::severity;
      m.idents.push_back(ident(c->name()));
      return true;
    }
    if (auto* c = as<P::NatureMemberContext>(b)) {
      m.kind = K::nature;
      m.idents.push_back(ident(c->name()));
      return true;
    }
    if (auto* c = as<P::DescriptionMemberContext>(b)) {
      m.kind = K::description;
      m.values.push_back(string_value(c->STRING()));
      return true;
    }
    if (auto* c = as<P::CheckMemberContext>(b)) {
      m.kind = K::check;
      m.values.push_back(string_value(c->STRING()));
      return true;
    }
    if (auto* c = as<P::ActionMemberContext>(b)) {
      m.kind = K::action;
      m.values.push_back(string_value(c->STRING()));
      return true;
    }
    if (auto* c = as<P::RemediationMemberContext>(b)) {
      m.kind = K::remediation;
      m.idents.push_back(ident(c->name()));
      return true;
    }
    if (auto* c = as<P::SymptomMemberContext>(b)) {
      m.kind = K::symptom;
      m.idents.push_back(ident(c->name()));
      return true;
    }
    return false;
  }

  // Aggregation, baselines, examples, and the flags of a signature.
  bool shape_member(ReflexParser::MemberBodyContext* b, Member& m) const {
    using K = Member::Kind;
    using P = ReflexParser;
    if (auto* c = as<P::AggregateMemberContext>(b)) {
      m.kind = K::aggregate;
      m.values.push_back(number_value(c->NUMBER()));
      m.values.push_back(duration(c->duration()));
      return true;
    }
    if (auto* c = as<P::DedupMemberContext>(b)) {
      m.kind = K::dedup;
      m.values.push_back(duration(c->duration()));
      for (auto* n : c->name()) m.idents.push_back(ident(n));
      return true;
    }
    if (auto* c = as<P::BaselineMemberContext>(b)) {
      m.kind = K::baseline;
      m.idents.push_back(ident(c->name()));
      m.baseline_below = c->DIR && text_.of(c->DIR) == "below";
      for (auto* n : c->NUMBER()) m.values.push_back(number_value(n));
      return true;
    }
    if (auto* c = as<P::ClearedByMemberContext>(b)) {
      m.kind = K::cleared_by;
      for (auto* n : c->name()) m.idents.push_back(ident(n));
      m.values.push_back(duration(c->duration()));
      return true;
    }
    if (auto* c = as<P::ExampleMemberContext>(b)) {
      m.kind = K::example;
      m.values.push_back(string_value(c->STRING()));
      if (c->name()) {
        m.has_example_source = true;
        m.idents.push_back(ident(c->name()));
      }
      for (auto* e : c->expectation()) m.expects.push_back({ident(e->name()), value(e->value())});
      return true;
    }
    if (auto* c = as<P::NearMissMemberContext>(b)) {
      m.kind = K::near_miss;
      m.values.push_back(string_value(c->STRING()));
      if (c->name()) {
        m.has_example_source = true;
        m.idents.push_back(ident(c->name()));
      }
      return true;
    }
    if (auto* c = as<P::AllowMemberContext>(b)) {
      m.kind = K::allow;
      if (c->WARNING_NAME()) {
        m.idents.push_back(Ident{text(c->WARNING_NAME()), node(c->WARNING_NAME())});
      } else {
        m.idents.push_back(ident(c->name()));
      }
      return true;
    }
    if (as<P::SilentMemberContext>(b)) {
      m.kind = K::silent;
      return true;
    }
    if (auto* c = as<P::QuorumMemberContext>(b)) {
      m.kind = K::quorum;
      for (antlr4::Token* t : c->QV) {
        Value v;
        v.kind = Value::Kind::number;
        v.text = text_.of(t);
        v.range = tok(t);
        m.values.push_back(std::move(v));
      }
      return true;
    }
    if (as<P::SuspectMemberContext>(b)) {
      m.kind = K::suspect;
      return true;
    }
    if (as<P::BackgroundMemberContext>(b)) {
      m.kind = K::background;
      return true;
    }
    if (auto* c = as<P::OddOneOutMemberContext>(b)) {
      m.kind = K::odd_one_out;
      for (auto* n : c->name()) m.idents.push_back(ident(n));
      return true;
    }
    return false;
  }

  // A rule's statements.
  bool rule_member(ReflexParser::MemberBodyContext* b, Member& m) const {
    using K = Member::Kind;
    using P = ReflexParser;
    if (auto* c = as<P::CauseMemberContext>(b)) {
      m.kind = K::cause;
      m.causes = 0;
      // Names before the `->` token are causes.
      const antlr4::Token* arrow = nullptr;
      for (auto* child : c->children) {
        auto* term = ReflexContext::terminal(child);
        if (term && text(term) == "->") arrow = term->getSymbol();
      }
      for (auto* n : c->name()) {
        if (arrow == nullptr || n->getStart()->getTokenIndex() < arrow->getTokenIndex()) ++m.causes;
        m.idents.push_back(ident(n));
      }
      return true;
    }
    if (auto* c = as<P::WhereMemberContext>(b)) {
      m.kind = K::where;
      for (auto* r : c->relation()) {
        auto refs = r->devRef();
        RelationExpr e;
        if (!refs.empty()) e.lhs = devref(refs[0]);
        e.rel = ident(r->relName());
        if (refs.size() > 1) e.rhs = devref(refs[1]);
        m.relations.push_back(e);
      }
      return true;
    }
    if (auto* c = as<P::WithinMemberContext>(b)) {
      m.kind = K::within;
      for (auto* d : c->duration()) m.values.push_back(duration(d));
      return true;
    }
    if (auto* c = as<P::SkewMemberContext>(b)) {
      m.kind = K::skew;
      m.values.push_back(duration(c->duration()));
      return true;
    }
    if (auto* c = as<P::WhileCauseLastsMemberContext>(b)) {
      m.kind = K::while_cause_lasts;
      if (c->duration()) m.values.push_back(duration(c->duration()));
      return true;
    }
    if (auto* c = as<P::StrengthMemberContext>(b)) {
      m.kind = K::strength;
      m.values.push_back(number_value(c->NUMBER()));
      return true;
    }
    return false;
  }

  // A test's statements.
  bool test_member(ReflexParser::MemberBodyContext* b, Member& m) const {
    using K = Member::Kind;
    using P = ReflexParser;
    if (auto* c = as<P::TopologyMemberContext>(b)) {
      m.kind = K::topology;
      if (c->TRIPLE_STRING()) {
        m.inline_topology = true;
        m.values.push_back(string_value(c->TRIPLE_STRING()));
      } else {
        m.values.push_back(string_value(c->STRING()));
      }
      return true;
    }
    if (auto* c = as<P::LogMemberContext>(b)) {
      m.kind = K::log;
      for (auto* s : c->STRING()) m.values.push_back(string_value(s));
      m.idents.push_back(ident(c->name()));
      return true;
    }
    if (auto* c = as<P::BundleMemberContext>(b)) {
      m.kind = K::bundle;
      m.values.push_back(string_value(c->STRING()));
      return true;
    }
    if (auto* c = as<P::ExpectRootMemberContext>(b)) {
      m.kind = K::expect_root;
      m.values.push_back(string_value(c->STRING()));
      if (c->name()) m.idents.push_back(ident(c->name()));
      if (c->NUMBER()) {
        // keep position 1 for the rank
        if (m.values.size() == 1) m.values.push_back(number_value(c->NUMBER()));
      }
      return true;
    }
    if (as<P::ExpectNoRootMemberContext>(b)) {
      m.kind = K::expect_no_root;
      return true;
    }
    if (auto* c = as<P::ExpectEventMemberContext>(b)) {
      m.kind = K::expect_event;
      m.idents.push_back(ident(c->name()));
      if (c->STRING()) m.values.push_back(string_value(c->STRING()));
      return true;
    }
    return false;
  }

  void block(ReflexParser::BlockContext* b, Decl& d) const {
    if (!b) return;
    for (auto* mc : b->member()) {
      if (!mc) continue;
      if (auto m = member(mc->memberBody())) d.members.push_back(std::move(*m));
    }
  }

  std::optional<Decl> decl(ReflexParser::TopDeclContext* c) const {
    Decl d;
    d.file = file_;
    d.range = tok(c->getStart());
    using K = Decl::Kind;
    using P = ReflexParser;
    if (auto* v = as<P::VersionDeclContext>(c)) {
      d.kind = K::version;
      d.values.push_back(number_value(v->NUMBER()));
    } else if (auto* k = as<P::KbDeclContext>(c)) {
      d.kind = K::kb;
      // knowledge_base NAME [version V] [requires engine R]: keep positions.
      auto strings = k->STRING();
      d.values.resize(3);
      size_t i = 0;
      for (auto* child : k->children) {
        auto* term = ReflexContext::terminal(child);
        if (!term) continue;
        std::string t = text(term);
        if (t == "version")
          i = 1;
        else if (t == "engine")
          i = 2;
        else if (term->getSymbol()->getType() == P::STRING && i < 3)
          d.values[i] = string_value(term);
      }
      (void)strings;
    } else if (auto* im = as<P::ImportDeclContext>(c)) {
      d.kind = K::import;
      d.values.push_back(string_value(im->STRING()));
    } else if (auto* cl = as<P::ClassDeclContext>(c)) {
      d.kind = K::class_;
      auto names = cl->name();
      if (!names.empty()) d.name = ident(names[0]);
      if (names.size() > 1) d.parent = ident(names[1]);
      if (cl->STRING()) d.values.push_back(string_value(cl->STRING()));
    } else if (auto* na = as<P::NatureDeclContext>(c)) {
      d.kind = K::nature;
      d.name = ident(na->name());
      if (na->STRING()) d.values.push_back(string_value(na->STRING()));
      d.evicts = na->EVICTS != nullptr;
    } else if (auto* p = as<P::PatternDeclContext>(c)) {
      d.kind = K::pattern;
      d.name = ident(p->name());
      d.pattern = regex(p->regexExpr());
    } else if (auto* g = as<P::GroupDeclContext>(c)) {
      d.kind = K::group;
      auto names = g->name();
      if (!names.empty()) d.name = ident(names[0]);
      for (size_t i = 1; i < names.size(); ++i) d.group_members.push_back(ident(names[i]));
    } else if (auto* s = as<P::SignatureDeclContext>(c)) {
      d.kind = K::signature;
      d.is_abstract = s->ABSTRACT != nullptr;
      auto names = s->name();
      if (!names.empty()) d.name = ident(names[0]);
      if (names.size() > 1) d.parent = ident(names[1]);
      block(s->block(), d);
    } else if (auto* l = as<P::LatentDeclContext>(c)) {
      d.kind = K::latent;
      d.name = ident(l->name());
      block(l->block(), d);
    } else if (auto* r = as<P::RuleDeclContext>(c)) {
      d.kind = K::rule;
      d.name = ident(r->name());
      block(r->block(), d);
    } else if (auto* o = as<P::OverrideDeclContext>(c)) {
      d.kind = K::override_;
      d.override_kind = o->KIND ? text_.of(o->KIND) : "";
      d.name = ident(o->name());
      block(o->block(), d);
    } else if (auto* t = as<P::TestDeclContext>(c)) {
      d.kind = K::test;
      Value title = string_value(t->STRING());
      d.name.text = title.text;
      d.name.range = title.range;
      block(t->block(), d);
    } else {
      return std::nullopt;
    }
    return d;
  }

 private:
  std::string text(antlr4::tree::TerminalNode* n) const { return text_.of(n->getSymbol()); }

  const std::string& file_;
  TokenText text_;
};

}  // namespace

void build_decls(SourceFile& file, ReflexParser::FileContext* tree,
                 const std::vector<antlr4::Token*>& all, std::vector<size_t> errs) {
  Builder b(file.path, file.text);
  // Sorted, each declaration's range is one binary search (a bad-character
  // run makes thousands of error tokens; scanning them all for each of
  // hundreds of declarations was quadratic). The syntax errors are few (the
  // listener stops at its cap) and the lexer's come in token order, so the
  // two runs are merged, not sorted: sorting thousands was 30% of such a file.
  std::sort(errs.begin(), errs.end());
  const auto syntax_end = static_cast<std::ptrdiff_t>(errs.size());
  for (const auto* t : all)
    if (is_lex_error(t->getType())) errs.push_back(t->getTokenIndex());
  std::inplace_merge(errs.begin(), errs.begin() + syntax_end, errs.end());
  for (auto* c : tree->topDecl()) {
    if (!c || !c->getStart()) continue;
    auto d = b.decl(c);
    if (!d) continue;
    // A declaration containing a syntax error is kept for its name only.
    size_t lo = c->getStart()->getTokenIndex();
    size_t hi = c->getStop() ? c->getStop()->getTokenIndex() : lo;
    const auto e = std::lower_bound(errs.begin(), errs.end(), lo);
    if (e != errs.end() && *e <= hi + 1) d->broken = true;
    if (c->exception != nullptr) d->broken = true;
    file.decls.push_back(std::move(*d));
  }
}

}  // namespace reflex::compiler
