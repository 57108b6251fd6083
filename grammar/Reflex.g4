// The Reflex rule language, version 1 (docs/language.md).
// Blocks share one member rule; which members a block allows is a semantic
// check, so a misplaced statement gets a precise message instead of a parse error.
grammar Reflex;

// Every context derives from rfxgen::ReflexContext, whose child accessors do
// not dynamic_cast (grammar/include/reflex_grammar/context.h).
options { contextSuperClass = ReflexContext; }
@parser::header {
#include "reflex_grammar/context.h"
}

// Comments and white space are dropped here, before a token object is made,
// as `-> skip` would drop them: ANTLR 4.9 runs a lexer command through
// LexerActionExecutor, which heap-allocates two std::function objects each
// time (21% of the front end's allocations over the fuzz corpus, heaptrack).
@lexer::members {
  antlr4::Token* emit() override {
    if (type == WS || type == LINE_COMMENT) return nullptr;
    return antlr4::Lexer::emit();
  }
  std::unique_ptr<antlr4::Token> nextToken() override {
    for (;;)  // each dropped token consumed at least one character
      if (auto t = antlr4::Lexer::nextToken()) return t;
  }
}

file
  : topDecl* EOF
  ;

topDecl
  : 'reflex' NUMBER ';'?                                                         # versionDecl
  | 'knowledge_base' STRING ('version' STRING)? ('requires' 'engine' STRING)? ';'?  # kbDecl
  | 'import' STRING ';'?                                                         # importDecl
  | 'class' name ('<' name)? STRING? ';'?                                        # classDecl
  | 'nature' name STRING? EVICTS='evicts'? ';'?                                   # natureDecl
  | 'pattern' name '=' regexExpr ';'?                                            # patternDecl
  // No trailing comma: `group` is also a name, so `a, b,` before the next
  // `group` declaration would be ambiguous. An empty list is a semantic error.
  | 'group' name '=' (name (',' name)*)? ';'?                                    # groupDecl
  | ABSTRACT='abstract'? 'signature' name ('extends' name)? block ';'?           # signatureDecl
  | 'latent' name block ';'?                                                     # latentDecl
  | 'rule' name block ';'?                                                       # ruleDecl
  | 'override' KIND=('signature' | 'rule' | 'latent') name block ';'?          # overrideDecl
  | 'test' STRING block ';'?                                                     # testDecl
  ;

block
  : '{' member* '}'
  ;

member
  : memberBody ';'?
  ;

memberBody
  : 'on' name                                                           # onMember
  | 'from' name (',' name)*                                             # fromMember
  | 'match' regexExpr ('then' regexExpr)* ('within' NUMBER 'lines')?    # matchMember
  | 'field' name ':' name                                               # fieldMember
  | 'when' cond                                                         # whenMember
  | 'locate' name 'by' name ('as' name)?                                # locateMember
  | 'class' name                                                        # classMember
  | 'severity' name                                                     # severityMember
  | 'nature' name                                                       # natureMember
  | 'description' STRING                                                # descriptionMember
  | 'action' STRING                                                     # actionMember
  | 'check' STRING                                                      # checkMember
  | 'remediation' name                                                  # remediationMember
  | 'symptom' name                                                      # symptomMember
  | 'aggregate' 'count' '>=' NUMBER 'within' duration                   # aggregateMember
  | 'dedup' duration ('by' name (',' name)*)?                           # dedupMember
  | 'baseline' name DIR=('above' | 'below') NUMBER 'x' 'median' 'of' 'last' NUMBER  # baselineMember
  | 'cleared_by' name (',' name)* 'within' duration                     # clearedByMember
  | 'example' STRING ('from' name)? ('{' (expectation (',' expectation)* ','?)? '}')?  # exampleMember
  | 'near_miss' STRING ('from' name)?                                   # nearMissMember
  | 'allow' (name | WARNING_NAME)                                       # allowMember
  | 'silent'                                                            # silentMember
  | 'quorum' QV+=(NUMBER | PERCENT) ('and' QV+=(NUMBER | PERCENT))?      # quorumMember
  | 'suspect'                                                           # suspectMember
  | 'background'                                                        # backgroundMember
  // the device whose value of EVENT.FIELD differs from its peers' (latents)
  | 'odd_one_out' name '.' name 'among' name                            # oddOneOutMember
  | name (',' name)* '->' name (',' name)*                             # causeMember
  | 'where' relation ('and' relation)*                                  # whereMember
  | 'within' duration '..' duration                                     # withinMember
  | 'skew' duration                                                     # skewMember
  // the effect begins while the cause is observed (its first..last), +/- DUR
  | 'while' 'cause' 'lasts' ('+' duration)?                             # whileCauseLastsMember
  | 'strength' NUMBER                                                   # strengthMember
  | 'topology' (STRING | TRIPLE_STRING)                                 # topologyMember
  | 'log' STRING name STRING                                            # logMember
  | 'bundle' STRING                                                     # bundleMember
  | 'expect' 'root' STRING ('class' name)? ('rank' NUMBER)?             # expectRootMember
  | 'expect' 'no' 'root'                                                # expectNoRootMember
  | 'expect' 'event' name ('on' STRING)?                                # expectEventMember
  ;

expectation
  : name '=' value
  ;

regexExpr
  : regexAtom ('+' regexAtom)*
  ;

regexAtom
  : REGEX
  | name
  ;

cond
  : '(' cond ')'                                        # parenCond
  | 'not' cond                                          # notCond
  | name OP=('==' | '!=' | '<' | '<=' | '>' | '>=') value  # compareCond
  | name NOT='not'? 'in' '{' value (',' value)* ','? '}'   # inCond
  | name 'matches' REGEX                                # matchesCond
  | cond 'and' cond                                     # andCond
  | cond 'or' cond                                      # orCond
  ;

relation
  : devRef relName devRef
  ;

relName
  : name
  | 'on'
  | 'in'
  ;

devRef
  : name ('.' name)?
  ;

duration
  : DURATION
  | NUMBER
  ;

value
  : NUMBER
  | DURATION
  | STRING
  | name
  ;

// Words that are keywords somewhere but never start a statement may still be
// used as names (a field called `count`, a device kind `rank`).
name
  : ID
  | 'by' | 'as' | 'then' | 'lines' | 'count' | 'above' | 'below' | 'x' | 'median' | 'of' | 'last'
  | 'version' | 'requires' | 'engine' | 'extends' | 'root' | 'no' | 'event' | 'rank'
  | 'matches' | 'group' | 'suspect' | 'background' | 'check' | 'evicts'
  | 'quorum'
  | 'among'
  | 'while' | 'cause' | 'lasts'
  ;

// ---- lexer ----

TRIPLE_STRING : '"""' TRIPLE_BODY* '"""' ;
STRING : '"' (~["\\\r\n] | '\\' ~[\r\n])* '"' ;
REGEX : '/' (~[/\\\r\n] | '\\' ~[\r\n])+ '/' ;
DURATION : '-'? DIGITS ('.' DIGITS)? ('ms' | 's' | 'm' | 'h' | 'd') ;
PERCENT : DIGITS ('.' DIGITS)? '%' ;
NUMBER : '-'? '0x' [0-9a-fA-F]+ | '-'? DIGITS ('.' DIGITS)? ;
ID : [A-Za-z_] [A-Za-z0-9_]* ;
// Warning names are hyphenated (`allow ambiguous-match`), like clang's.
WARNING_NAME : [a-z]+ ('-' [a-z]+)+ ;

// Dropped by the lexer (@lexer::members above).
LINE_COMMENT : ('#' | '//') ~[\r\n]* ;
WS : [ \t\r\n\f]+ ;

// Error tokens: the parser never accepts them; the front end reports each
// with a precise message instead of ANTLR's generic one.
UNTERMINATED_TRIPLE_STRING : '"""' TRIPLE_BODY* ('"' | '""')? EOF ;
UNTERMINATED_STRING : '"' (~["\\\r\n] | '\\' ~[\r\n])* '\\'? ;
UNTERMINATED_REGEX : '/' (~[/\\\r\n] | '\\' ~[\r\n])* '\\'? ;
// A run of characters that start no token is one error token (the front end
// names its first character): a pasted line of `\` or `]` was a token per
// character, each one skipped by the parser's recovery and kept in the tree.
// The set is every character a token can start with; parser_test.cpp's
// BadCharRunsStopAtEveryToken checks it against the vocabulary, so a new
// literal cannot be swallowed by a run.
BAD_CHAR : ~[A-Za-z0-9_ \t\r\n\f!"#%()+,\-./:;<=>{}]+ | . ;
// A number glued to a word that is no unit (`1hr`, `10min`): one token, so the
// error names the unit instead of the token after it. A lone `x` stays apart
// (`1.5x median`), and a hex number is longer-or-equal as NUMBER, which wins.
BAD_DURATION : '-'? DIGITS ('.' DIGITS)? ([A-Za-wyz_] [A-Za-z0-9_]* | 'x' [A-Za-z0-9_]+) ;

fragment DIGITS : [0-9]+ ;
// Greedy (not .*?) so an unterminated """ cannot out-match a closed one.
fragment TRIPLE_BODY : ~'"' | '"' ~'"' | '""' ~'"' ;
