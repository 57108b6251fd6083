// Diagnostics for people (clang layout) and machines (JSON, SARIF 2.1.0).
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "reflex/compiler.h"

#ifndef REFLEX_VERSION
#define REFLEX_VERSION "0.0.0"
#endif

namespace reflex {

namespace {

using nlohmann::json;

std::string plural(int n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string loc_prefix(const SourceLoc& l) {
  if (l.file.empty()) return "";
  std::string s = l.file;
  if (l.line > 0) s += ":" + std::to_string(l.line) + ":" + std::to_string(l.col);
  return s + ": ";
}

// The source line, then a caret/tilde underline aligned under it (tabs kept
// so the caret lines up in any terminal).
void snippet(std::ostringstream& os, const Diagnostic& d) {
  if (d.loc.line <= 0 || d.length <= 0) return;
  std::string num = std::to_string(d.loc.line);
  std::string gutter(std::max<size_t>(num.size(), 4), ' ');
  std::string line = d.source_line;
  int caret_col = d.loc.col;
  // Very long lines: show a window around the column.
  constexpr int kWidth = 120;
  int line_cols0 = 0;
  for (unsigned char c : line) line_cols0 += (c & 0xC0) != 0x80;
  if (line_cols0 > kWidth) {
    int from = std::max(1, caret_col - kWidth / 2);
    int to = std::min(line_cols0, from + kWidth - 1);
    std::string cut;
    int col = 1;
    for (size_t i = 0; i < line.size(); ++i) {
      unsigned char c = static_cast<unsigned char>(line[i]);
      if ((c & 0xC0) != 0x80 && i > 0) ++col;
      if (col >= from && col <= to) cut += line[i];
    }
    std::string pre = from > 1 ? "..." : "", post = to < line_cols0 ? "..." : "";
    line = pre + cut + post;
    caret_col = caret_col - from + 1 + static_cast<int>(pre.size());
  }
  os << std::string(gutter.size() - num.size(), ' ') << num << " | " << line << "\n";
  os << gutter << " | ";
  int col = 1;
  for (size_t i = 0; i < line.size() && col < caret_col; ++i) {
    unsigned char c = static_cast<unsigned char>(line[i]);
    if ((c & 0xC0) == 0x80) continue;
    os << (c == '\t' ? '\t' : ' ');
    ++col;
  }
  os << '^';
  // Do not underline past the end of the line.
  int line_cols = 0;
  for (unsigned char c : line) line_cols += (c & 0xC0) != 0x80;
  int len = std::min(d.length, std::max(1, line_cols - caret_col + 1));
  for (int i = 1; i < len; ++i) os << '~';
  os << "\n";
}

std::string render_text(const CompileResult& r, bool color) {
  std::ostringstream os;
  const char* bold = color ? "\033[1m" : "";
  const char* reset = color ? "\033[0m" : "";
  auto sev_color = [&](DiagSeverity s) -> const char* {
    if (!color) return "";
    return s == DiagSeverity::error     ? "\033[1;31m"
           : s == DiagSeverity::warning ? "\033[1;35m"
                                        : "\033[1;36m";
  };
  if (r.io_error) {
    os << "reflexc: " << sev_color(DiagSeverity::error) << "error: " << reset << r.io_message
       << "\n";
    return os.str();
  }
  std::map<std::string, std::pair<int, int>> per_file;
  for (const auto& d : r.diagnostics) {
    os << bold << loc_prefix(d.loc) << reset << sev_color(d.severity) << to_string(d.severity)
       << "[" << d.code << "]: " << reset << bold << d.message << reset;
    if (d.severity == DiagSeverity::warning && !d.name.empty()) os << " [-W" << d.name << "]";
    os << "\n";
    snippet(os, d);
    for (const auto& n : d.notes)
      os << loc_prefix(n.loc) << sev_color(DiagSeverity::note) << "note: " << reset << n.message
         << "\n";
    auto& c = per_file[d.loc.file.empty() ? "(unit)" : d.loc.file];
    (d.severity == DiagSeverity::error ? c.first : c.second)++;
  }
  if (!r.diagnostics.empty()) {
    os << "\n";
    for (const auto& [file, c] : per_file) {
      os << file << ": ";
      if (c.first) os << plural(c.first, "error");
      if (c.first && c.second) os << ", ";
      if (c.second) os << plural(c.second, "warning");
      os << "\n";
    }
  }
  int e = r.errors(), w = r.warnings();
  if (e == 0 && w == 0) {
    os << "checked " << plural(static_cast<int>(r.files.size()), "file") << ": no problems\n";
  } else {
    if (e) os << plural(e, "error");
    if (e && w) os << " and ";
    if (w) os << plural(w, "warning");
    os << " generated in " << plural(static_cast<int>(r.files.size()), "file") << ".\n";
  }
  return os.str();
}

json loc_json(const SourceLoc& l) {
  if (l.file.empty()) return nullptr;
  return {{"file", l.file}, {"line", l.line}, {"column", l.col}};
}

// Built member by member and moved into place: nlohmann's initializer lists
// copy every element (the JSON renderer was 22% of the .rfx fuzz target).
// std::map objects, so the output is the same whatever the insertion order.
std::string render_json(const CompileResult& r) {
  json diags = json::array();
  for (const auto& d : r.diagnostics) {
    json notes = json::array();
    for (const auto& n : d.notes) {
      json note = json::object();
      note["location"] = loc_json(n.loc);
      note["message"] = n.message;
      notes.push_back(std::move(note));
    }
    json j = json::object();
    j["severity"] = to_string(d.severity);
    j["code"] = d.code;
    j["title"] = d.title;
    j["message"] = d.message;
    j["file"] = d.loc.file.empty() ? json(nullptr) : json(d.loc.file);
    j["line"] = d.loc.line;
    j["column"] = d.loc.col;
    j["length"] = d.length;
    j["notes"] = std::move(notes);
    j["name"] = d.name.empty() ? json(nullptr) : json(d.name);
    diags.push_back(std::move(j));
  }
  json out = json::object();
  out["files"] = r.files;
  out["diagnostics"] = std::move(diags);
  out["errors"] = r.errors();
  out["warnings"] = r.warnings();
  if (r.io_error) out["io_error"] = r.io_message;
  return out.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string render_sarif(const CompileResult& r) {
  const auto& cat = diagnostic_catalog();
  json rules = json::array();
  std::map<std::string, size_t> rule_index;
  for (const auto& c : cat) {
    rule_index[c.code] = rules.size();
    json rule = {{"id", c.code},
                 {"shortDescription", {{"text", c.title}}},
                 {"fullDescription", {{"text", c.description}}},
                 {"defaultConfiguration",
                  {{"level", c.severity == DiagSeverity::error ? "error" : "warning"}}}};
    if (!c.name.empty()) rule["name"] = c.name;
    rules.push_back(rule);
  }
  auto physical = [](const SourceLoc& l, int length) {
    json region = {{"startLine", std::max(1, l.line)}, {"startColumn", std::max(1, l.col)}};
    if (length > 0 && l.col > 0) region["endColumn"] = l.col + length;
    return json{
        {"physicalLocation", {{"artifactLocation", {{"uri", l.file}}}, {"region", region}}}};
  };
  json results = json::array();
  for (const auto& d : r.diagnostics) {
    json res = {{"ruleId", d.code},
                {"level", d.severity == DiagSeverity::error     ? "error"
                          : d.severity == DiagSeverity::warning ? "warning"
                                                                : "note"},
                {"message", {{"text", d.message}}}};
    if (auto it = rule_index.find(d.code); it != rule_index.end()) res["ruleIndex"] = it->second;
    json locs = json::array();
    if (!d.loc.file.empty()) locs.push_back(physical(d.loc, d.length));
    res["locations"] = locs;
    json related = json::array();
    int id = 0;
    for (const auto& n : d.notes) {
      if (n.loc.file.empty()) continue;
      json rl = physical(n.loc, 1);
      rl["id"] = id++;
      rl["message"] = {{"text", n.message}};
      related.push_back(rl);
    }
    if (!related.empty()) res["relatedLocations"] = related;
    results.push_back(res);
  }
  json artifacts = json::array();
  for (const auto& f : r.files) artifacts.push_back({{"location", {{"uri", f}}}});
  json run = {{"tool",
               {{"driver",
                 {{"name", "reflexc"},
                  {"version", REFLEX_VERSION},
                  {"informationUri", "https://github.com/reflex/reflex"},
                  {"rules", rules}}}}},
              {"artifacts", artifacts},
              {"results", results}};
  if (r.io_error) {
    run["invocations"] = json::array(
        {{{"executionSuccessful", false},
          {"toolExecutionNotifications",
           json::array({{{"message", {{"text", r.io_message}}}, {"level", "error"}}})}}});
  }
  json out = {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
              {"version", "2.1.0"},
              {"runs", json::array({run})}};
  return out.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace

std::string render_diagnostics(const CompileResult& result, DiagFormat format, bool color) {
  try {
    switch (format) {
      case DiagFormat::text:
        return render_text(result, color);
      case DiagFormat::json:
        return render_json(result);
      case DiagFormat::sarif:
        return render_sarif(result);
    }
  } catch (const std::exception& e) {
    return std::string("reflexc: error: cannot render diagnostics: ") + e.what() + "\n";
  }
  return "";
}

}  // namespace reflex
