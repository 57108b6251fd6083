// The base class of every context of the generated parser (the grammar's
// contextSuperClass). Its child accessors hide ParserRuleContext's: they tell
// a child's kind from its dynamic type's type_info, looked up by address and
// worked out with dynamic_cast only the first time a type is met, where the
// runtime's accessors dynamic_cast every child they pass. A failed
// dynamic_cast compares type names with strcmp (libstdc++), and under
// libFuzzer every such strcmp is reported to the fuzzer: the accessors and
// the AST builder's alternative tests were 5% of the .rfx fuzzer's time
// (perf). What a child is does not change: every answer is dynamic_cast's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <vector>

#include "antlr4-runtime.h"
#include "reflex_grammar/node_arena.h"

namespace rfxgen {

class ReflexContext : public antlr4::ParserRuleContext {
 public:
  using antlr4::ParserRuleContext::ParserRuleContext;

  // From the parse's arena (node_arena.h); the tracker's `delete` comes here.
  static void* operator new(std::size_t n) { return NodeArena::allocate(n); }
  static void operator delete(void* p, std::size_t n) noexcept { NodeArena::release(p, n); }

  // `p` as a token (a TerminalNode, error nodes included), or null.
  static antlr4::tree::TerminalNode* terminal(antlr4::tree::ParseTree* p) {
    return p && kind(p).terminal ? static_cast<antlr4::tree::TerminalNode*>(p) : nullptr;
  }

  // `p` if its dynamic type is exactly T, or null. For the labelled
  // alternatives' contexts, which nothing derives from.
  template <typename T>
  static T* exactly(antlr4::tree::ParseTree* p) {
    static_assert(std::is_base_of_v<antlr4::tree::ParseTree, T>);
    if (!p) return nullptr;
    thread_local const std::type_info* const want = canonical(typeid(T));
    return kind(p).type == want ? static_cast<T*>(p) : nullptr;
  }

  // The generated accessors (`name()`, `STRING()`, ...) call these.
  template <typename T>
  T* getRuleContext(size_t i) {
    size_t j = 0;
    for (auto* c : children)
      if (is_rule<T>(c) && j++ == i) return static_cast<T*>(c);
    return nullptr;
  }
  template <typename T>
  std::vector<T*> getRuleContexts() {
    std::vector<T*> out;
    for (auto* c : children)
      if (is_rule<T>(c)) out.push_back(static_cast<T*>(c));
    return out;
  }
  antlr4::tree::TerminalNode* getToken(size_t ttype, size_t i) override {
    size_t j = 0;
    for (auto* c : children) {
      auto* t = terminal(c);
      if (t && t->getSymbol()->getType() == ttype && j++ == i) return t;
    }
    return nullptr;
  }
  std::vector<antlr4::tree::TerminalNode*> getTokens(size_t ttype) override {
    std::vector<antlr4::tree::TerminalNode*> out;
    for (auto* c : children) {
      auto* t = terminal(c);
      if (t && t->getSymbol()->getType() == ttype) out.push_back(t);
    }
    return out;
  }

 private:
  struct Kind {
    const std::type_info* type = nullptr;  // one per type name (canonical())
    bool terminal = false;                 // a TerminalNode
    size_t rule = SIZE_MAX;                // a RuleContext's rule index
  };

  // One type_info per type name, whatever the linker merged; names compared
  // once per type_info met.
  static const std::type_info* canonical(const std::type_info& t) {
    thread_local std::unordered_map<std::string_view, const std::type_info*> by_name;
    return by_name.emplace(std::string_view(t.name()), &t).first->second;
  }

  static const Kind& kind(antlr4::tree::ParseTree* p) {
    thread_local std::unordered_map<const std::type_info*, Kind> kinds;
    const std::type_info& t = typeid(*p);
    auto it = kinds.find(&t);
    if (it != kinds.end()) return it->second;
    Kind k;
    k.type = canonical(t);
    k.terminal = dynamic_cast<antlr4::tree::TerminalNode*>(p) != nullptr;
    if (auto* r = dynamic_cast<antlr4::RuleContext*>(p)) k.rule = r->getRuleIndex();
    return kinds.emplace(&t, k).first->second;
  }

  // Whether `c` is a T (or a labelled alternative of T's rule): all of a
  // rule's contexts, and only they, have its rule index.
  template <typename T>
  static bool is_rule(antlr4::tree::ParseTree* c) {
    static const size_t rule = T(nullptr, 0).getRuleIndex();
    return kind(c).rule == rule;
  }
};

}  // namespace rfxgen
