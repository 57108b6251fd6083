// block_factor(): a cheaper stand-in for a pattern in the block database
// (see block_factor.h). Pure text work on RE2/PCRE syntax; it knows no
// pattern of the knowledge base.
#include "block_factor.h"

#include <algorithm>
#include <string>
#include <vector>

namespace reflex::ingest {

namespace {
constexpr size_t npos = std::string::npos;

// One item of a pattern flattened at its top level: a literal character
// ('l'), another unquantified atom ('a': class, escape, '.', '^', '$', an
// alternation group) or a quantified atom ('q').
struct Item {
  std::string text;
  char kind = 'a';
  int score = 0;  // an alternation of pure literals: its shortest branch
};

size_t class_end(const std::string& t, size_t i) {  // t[i] == '[': just past its ']'
  size_t j = i + 1;
  if (j < t.size() && t[j] == '^') ++j;
  if (j < t.size() && t[j] == ']') ++j;
  for (; j < t.size(); ++j) {
    if (t[j] == '\\') {
      ++j;
      continue;
    }
    if (t[j] == ']') return j + 1;
  }
  return npos;
}

size_t group_end(const std::string& t, size_t i) {  // t[i] == '(': just past its ')'
  int depth = 0;
  for (size_t j = i; j < t.size(); ++j) {
    const char c = t[j];
    if (c == '\\') {
      ++j;
    } else if (c == '[') {
      const size_t e = class_end(t, j);
      if (e == npos) return npos;
      j = e - 1;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')' && --depth == 0) {
      return j + 1;
    }
  }
  return npos;
}

size_t escape_end(const std::string& t, size_t i) {  // t[i] == '\\'
  if (i + 1 >= t.size()) return npos;
  const char n = t[i + 1];
  if (n == 'Q' || n == 'E') return npos;
  size_t j = i + 2;
  if ((n == 'x' || n == 'p' || n == 'P') && j < t.size() && t[j] == '{') {
    const size_t k = t.find('}', j);
    return k == npos ? npos : k + 1;
  }
  if (n == 'p' || n == 'P') return j + 1 <= t.size() ? j + 1 : npos;
  if (n == 'x') return j + 2 <= t.size() ? j + 2 : npos;
  if (n >= '0' && n <= '7')
    while (j < t.size() && j < i + 4 && t[j] >= '0' && t[j] <= '7') ++j;
  return j;
}

size_t quant_end(const std::string& t, size_t i) {  // i: just past an atom
  size_t j = i;
  if (j < t.size() && (t[j] == '*' || t[j] == '+' || t[j] == '?')) {
    ++j;
  } else if (j < t.size() && t[j] == '{') {
    const size_t k = t.find('}', j);
    if (k == npos || k == j + 1) return i;
    for (size_t m = j + 1; m < k; ++m)
      if (!((t[m] >= '0' && t[m] <= '9') || t[m] == ',')) return i;
    j = k + 1;
  } else {
    return i;
  }
  if (j < t.size() && t[j] == '?') ++j;  // lazy
  return j;
}

std::vector<std::string> split_alternatives(const std::string& t) {
  std::vector<std::string> out(1);
  int depth = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (c == '\\' && i + 1 < t.size()) {
      out.back() += t.substr(i, 2);
      ++i;
      continue;
    }
    if (c == '[') {
      const size_t e = class_end(t, i);
      if (e == npos) return {};
      out.back() += t.substr(i, e - i);
      i = e - 1;
      continue;
    }
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == '|' && depth == 0) {
      out.emplace_back();
      continue;
    }
    out.back() += c;
  }
  return out;
}

bool flatten(const std::string& t, std::vector<Item>* out, int depth);

// The inner text of a group the flattening may open (non-capturing or
// capturing, no flags), npos-free; false for (?flags:...). Sets *abort for
// a (?flags) switch, which changes the meaning of what follows it.
bool group_inner(const std::string& g, std::string* inner, bool* abort) {
  if (g.size() < 2 || g[1] != '?') {
    *inner = g.substr(1, g.size() - 2);
    return true;
  }
  if (g.compare(0, 3, "(?:") == 0) {
    *inner = g.substr(3, g.size() - 4);
    return true;
  }
  if (g.compare(0, 4, "(?P<") == 0 ||
      (g.compare(0, 3, "(?<") == 0 && g.size() > 3 && g[3] != '=' && g[3] != '!')) {
    const size_t gt = g.find('>');
    if (gt == npos) {
      *abort = true;
      return false;
    }
    *inner = g.substr(gt + 1, g.size() - gt - 2);
    return true;
  }
  const size_t colon = g.find(':'), close = g.find(')');
  if (close < colon) *abort = true;  // (?i) and the like
  return false;
}

int alternation_score(const std::string& inner) {
  int best = -1;
  for (const std::string& b : split_alternatives(inner)) {
    std::vector<Item> items;
    if (b.empty() || !flatten(b, &items, 8)) return 0;
    for (const Item& it : items)
      if (it.kind != 'l') return 0;
    const int n = static_cast<int>(items.size());
    best = best < 0 ? n : std::min(best, n);
  }
  return std::max(best, 0);
}

// One group atom at t[i] (appended to *out, or opened into it).
bool flatten_group(const std::string& t, size_t* i, std::vector<Item>* out, int depth) {
  const size_t e = group_end(t, *i);
  if (e == npos) return false;
  const std::string g = t.substr(*i, e - *i);
  const size_t start = *i, q = quant_end(t, e);
  std::string inner;
  bool abort = false;
  const bool openable = group_inner(g, &inner, &abort);
  if (abort) return false;
  *i = q;
  if (q != e) {
    out->push_back({t.substr(start, q - start), 'q', 0});
    return true;
  }
  if (openable && split_alternatives(inner).size() == 1) return flatten(inner, out, depth - 1);
  out->push_back({g, 'a', openable ? alternation_score(inner) : 0});
  return true;
}

// A repeat (unbounded) of an atom that can take any character but a few:
// `.`, a negated class, \S \D \W, or a group holding one of these.
bool is_wide_repeat(const Item& it) {
  if (it.kind != 'q') return false;
  std::string t = it.text;
  if (!t.empty() && t.back() == '?') t.pop_back();  // lazy
  const bool unbounded = !t.empty() && (t.back() == '*' || t.back() == '+' ||
                                        (t.back() == '}' && t[t.size() - 2] == ','));
  if (!unbounded) return false;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] == '\\') {
      if (i + 1 < t.size() && (t[i + 1] == 'S' || t[i + 1] == 'D' || t[i + 1] == 'W')) return true;
      ++i;
    } else if (t[i] == '.' || (t[i] == '[' && i + 1 < t.size() && t[i + 1] == '^')) {
      return true;
    } else if (t[i] == '[') {  // a plain class: skip it (a '.' in it is a dot)
      const size_t e = class_end(t, i);
      if (e == npos) return false;
      i = e - 1;
    }
  }
  return false;
}

bool flatten(const std::string& t, std::vector<Item>* out, int depth) {
  if (depth <= 0) return false;
  for (size_t i = 0; i < t.size();) {
    const char c = t[i];
    if (c == '|' || c == ')' || c == '{' || c == '}' || c == ']' || c == '*' || c == '+' ||
        c == '?')
      return false;
    if (c == '(') {
      if (!flatten_group(t, &i, out, depth)) return false;
      continue;
    }
    size_t e = i + 1;
    char kind = 'l';
    if (c == '\\') {
      e = escape_end(t, i);
      if (e == npos) return false;
      const char n = t[i + 1];
      const bool alnum = (n >= '0' && n <= '9') || ((n | 0x20) >= 'a' && (n | 0x20) <= 'z');
      kind = alnum ? 'a' : 'l';
    } else if (c == '[') {
      e = class_end(t, i);
      if (e == npos) return false;
      kind = 'a';
    } else if (c == '.' || c == '^' || c == '$') {
      kind = 'a';
    }
    const size_t q = quant_end(t, e);
    out->push_back({t.substr(i, q - i), q != e ? 'q' : kind, 0});
    i = q;
  }
  return true;
}
}  // namespace

std::string block_factor(const std::string& text) {
  std::vector<Item> items;
  if (!flatten(text, &items, 16) || items.empty()) return text;
  // A literal run scores its length, at its first item.
  std::vector<int> score(items.size(), 0);
  for (size_t i = 0; i < items.size();) {
    if (items[i].kind != 'l') {
      score[i] = items[i].score;
      ++i;
      continue;
    }
    size_t j = i;
    while (j < items.size() && items[j].kind == 'l') ++j;
    score[i] = static_cast<int>(j - i);
    i = j;
  }
  auto kept_from = [&](size_t k) {
    int n = 0;
    for (size_t i = k; i < items.size(); ++i) n += score[i];
    return n;
  };
  // The first long literal; but where a wide repeat follows it and a long
  // literal follows that, the first long literal after the last such repeat
  // (a `.*?` between two literals keeps Hyperscan's automaton busy over the
  // rest of every line holding the first: nvidia-smi rows rewritten as
  // "index=..; pci.bus_id=..; ..."); else the best short one.
  size_t k = npos, late = npos, late_wide = npos, wide = npos;
  for (size_t i = 0; i < items.size(); ++i) {
    if (is_wide_repeat(items[i])) wide = i;
    if (score[i] < 8) continue;
    if (k == npos) k = i;
    if (wide != npos && wide > k && (late == npos || late < wide)) {
      late = i;
      late_wide = wide;
    }
  }
  if (late != npos) {
    // Widen back over the literals and literal alternations just before it
    // ("clocks_(?:event|throttle)" before "_reasons.active="): a longer
    // literal start is cheaper for Hyperscan, and the cut stays a suffix.
    while (late > late_wide + 1 && (items[late - 1].kind == 'l' || items[late - 1].score > 0))
      --late;
    if (kept_from(late) >= 12) k = late;
  }
  if (k == npos) {
    const auto best = std::max_element(score.begin(), score.end());
    if (*best < 5) return text;
    k = static_cast<size_t>(best - score.begin());
  }
  bool cuts_quantifier = false;
  for (size_t i = 0; i < k; ++i) cuts_quantifier |= items[i].kind == 'q';
  if (k == 0 || !cuts_quantifier || kept_from(k) < 12) return text;
  std::string out;
  for (size_t i = k; i < items.size(); ++i) out += items[i].text;
  return out;
}

}  // namespace reflex::ingest
