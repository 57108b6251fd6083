// The compiler's own AST. Built from the ANTLR parse tree by parser.cpp and
// never containing anything of ANTLR's; every node carries a source range.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace reflex::compiler {

// A position in a source file: 1-based line/column (columns in code points),
// `len` columns underlined.
struct SrcRange {
  std::string file;
  int line = 0;
  int col = 0;
  int len = 1;
  bool valid() const { return line > 0; }
};

struct Ident {
  std::string text;
  SrcRange range;
};

// One literal `/.../` (text already unescaped: `\/` -> `/`) or a pattern name.
struct RegexAtom {
  bool is_ref = false;
  std::string text;
  SrcRange range;
};

struct RegexExpr {
  std::vector<RegexAtom> atoms;
  SrcRange range;
};

struct Value {
  enum class Kind { number, duration, string, ident };
  Kind kind = Kind::string;
  std::string text;  // strings unescaped; numbers/durations as written
  SrcRange range;
};

struct Cond {
  enum class Op { eq, ne, lt, le, gt, ge, in, not_in, matches, and_, or_, not_ };
  Op op = Op::eq;
  Ident field;
  std::vector<Value> values;
  std::string regex;  // matches
  SrcRange regex_range;
  std::vector<Cond> kids;
  SrcRange range;
};

struct Expectation {
  Ident field;
  Value value;
};

struct DevRef {
  Ident side;     // "cause" | "effect"
  Ident binding;  // text "" = the event's own device
  SrcRange range;
};

struct RelationExpr {
  DevRef lhs;
  Ident rel;
  DevRef rhs;
};

// One statement inside a `{ ... }` block. All blocks share this node; which
// kinds a block allows is checked by a semantic pass.
struct Member {
  enum class Kind {
    on,
    from,
    match,
    field,
    when,
    locate,
    class_,
    severity,
    nature,
    description,
    action,
    remediation,
    symptom,
    aggregate,
    dedup,
    baseline,
    example,
    near_miss,
    allow,
    silent,
    quorum,
    suspect,
    background,
    check,
    odd_one_out,  // latent: idents = event, field, relation
    cause,
    where,
    within,
    skew,
    while_cause_lasts,  // values: [DUR] or none
    strength,
    topology,
    log,
    bundle,
    expect_root,
    expect_no_root,
    expect_event,
    cleared_by,
  };
  Kind kind = Kind::on;
  SrcRange range;                    // the keyword (or the first name of `A -> B`)
  std::vector<Ident> idents;         // on/from/field(name,type)/locate(kind,field,as)/class/...
                                     // cause: [cause, effect...]; dedup: by-fields; log: transport
  std::vector<RegexExpr> regexes;    // match: first line, then continuation lines
  std::vector<Value> values;         // strings, numbers, durations of the statement
  std::optional<Cond> cond;          // when
  std::vector<Expectation> expects;  // example { f = v }
  std::vector<RelationExpr> relations;  // where
  bool has_example_source = false;      // example/near_miss ... from SRC (idents[0])
  bool inline_topology = false;         // topology """..."""
  size_t causes = 1;                    // cause: idents[0, causes) left of `->`, the rest right
  bool baseline_below = false;          // baseline FIELD below ...
};

struct Decl {
  enum class Kind {
    version,
    kb,
    import,
    class_,
    nature,
    pattern,
    group,
    signature,
    latent,
    rule,
    override_,
    test
  };
  Kind kind = Kind::version;
  SrcRange range;  // the keyword
  Ident name;      // class/nature/pattern/signature/latent/rule/override target; test: its title
  bool is_abstract = false;
  bool evicts = false;               // nature decl: a root of this nature is drained
  std::optional<Ident> parent;       // class parent, signature extends
  std::string override_kind;         // "signature" | "rule" | "latent"
  std::vector<Value> values;         // version: number; kb: name, version, requires; import: path;
                                     // class, nature: description
  RegexExpr pattern;                 // pattern decl
  std::vector<Ident> group_members;  // group decl: events and groups, as written
  std::vector<Member> members;
  std::string file;     // the declaring file (display path)
  bool broken = false;  // contains a syntax error: only its name is used
};

struct SourceFile {
  std::string path;      // display path, e.g. "kb/nccl.rfx"
  std::string abs_path;  // canonical path (dedupe, relative resolution)
  std::string text;
  bool parsed = false;  // pre-checks and parse succeeded well enough to analyse
  bool from_import = false;
  size_t too_large = 0;  // size in bytes when over the limit (text not read)
  std::vector<Decl> decls;
};

}  // namespace reflex::compiler
