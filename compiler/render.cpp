// Diagnostics for people (clang layout) and machines (JSON, SARIF 2.1.0).
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>

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

void append_loc_prefix(std::string& out, const SourceLoc& l) {
  if (l.file.empty()) return;
  out += l.file;
  if (l.line > 0) {
    out += ':';
    out += std::to_string(l.line);
    out += ':';
    out += std::to_string(l.col);
  }
  out += ": ";
}

// Columns (code points) of UTF-8 text.
int columns(const std::string& s) {
  int n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// The source line, then a caret/tilde underline aligned under it (tabs kept
// so the caret lines up in any terminal). Appended to a string, not a
// stream: a character at a time through an ostream was most of the text
// renderer's cost on files with many diagnostics.
void snippet(std::string& out, const Diagnostic& d) {
  if (d.loc.line <= 0 || d.length <= 0) return;
  const std::string num = std::to_string(d.loc.line);
  const size_t gutter = std::max<size_t>(num.size(), 4);
  std::string windowed;
  const std::string* line = &d.source_line;
  int caret_col = d.loc.col;
  // Very long lines: show a window around the column.
  constexpr int kWidth = 120;
  const int line_cols0 = columns(*line);
  if (line_cols0 > kWidth) {
    int from = std::max(1, caret_col - kWidth / 2);
    int to = std::min(line_cols0, from + kWidth - 1);
    const char* pre = from > 1 ? "..." : "";
    windowed = pre;
    int col = 1;
    for (size_t i = 0; i < line->size(); ++i) {
      unsigned char c = static_cast<unsigned char>((*line)[i]);
      if ((c & 0xC0) != 0x80 && i > 0) ++col;
      if (col >= from && col <= to) windowed += (*line)[i];
    }
    if (to < line_cols0) windowed += "...";
    caret_col = caret_col - from + 1 + static_cast<int>(std::string_view(pre).size());
    line = &windowed;
  }
  out.append(gutter - num.size(), ' ').append(num).append(" | ").append(*line).append("\n");
  out.append(gutter, ' ').append(" | ");
  int col = 1;
  for (size_t i = 0; i < line->size() && col < caret_col; ++i) {
    unsigned char c = static_cast<unsigned char>((*line)[i]);
    if ((c & 0xC0) == 0x80) continue;
    out += c == '\t' ? '\t' : ' ';
    ++col;
  }
  out += '^';
  // Do not underline past the end of the line.
  const int len = std::min(d.length, std::max(1, columns(*line) - caret_col + 1));
  if (len > 1) out.append(static_cast<size_t>(len - 1), '~');
  out += '\n';
}

std::string render_text(const CompileResult& r, bool color) {
  std::string out;
  const char* bold = color ? "\033[1m" : "";
  const char* reset = color ? "\033[0m" : "";
  auto sev_color = [&](DiagSeverity s) -> const char* {
    if (!color) return "";
    return s == DiagSeverity::error     ? "\033[1;31m"
           : s == DiagSeverity::warning ? "\033[1;35m"
                                        : "\033[1;36m";
  };
  if (r.io_error) {
    out.append("reflexc: ").append(sev_color(DiagSeverity::error)).append("error: ");
    out.append(reset).append(r.io_message).append("\n");
    return out;
  }
  std::map<std::string, std::pair<int, int>> per_file;
  for (const auto& d : r.diagnostics) {
    out += bold;
    append_loc_prefix(out, d.loc);
    out.append(reset).append(sev_color(d.severity)).append(to_string(d.severity));
    out.append("[").append(d.code).append("]: ").append(reset).append(bold);
    out.append(d.message).append(reset);
    if (d.severity == DiagSeverity::warning && !d.name.empty())
      out.append(" [-W").append(d.name).append("]");
    out += '\n';
    snippet(out, d);
    for (const auto& n : d.notes) {
      append_loc_prefix(out, n.loc);
      out.append(sev_color(DiagSeverity::note)).append("note: ").append(reset);
      out.append(n.message).append("\n");
    }
    auto& c = per_file[d.loc.file.empty() ? "(unit)" : d.loc.file];
    (d.severity == DiagSeverity::error ? c.first : c.second)++;
  }
  if (!r.diagnostics.empty()) {
    out += '\n';
    for (const auto& [file, c] : per_file) {
      out.append(file).append(": ");
      if (c.first) out += plural(c.first, "error");
      if (c.first && c.second) out += ", ";
      if (c.second) out += plural(c.second, "warning");
      out += '\n';
    }
  }
  int e = r.errors(), w = r.warnings();
  if (e == 0 && w == 0) {
    out.append("checked ").append(plural(static_cast<int>(r.files.size()), "file"));
    out.append(": no problems\n");
  } else {
    if (e) out += plural(e, "error");
    if (e && w) out += " and ";
    if (w) out += plural(w, "warning");
    out.append(" generated in ").append(plural(static_cast<int>(r.files.size()), "file"));
    out.append(".\n");
  }
  return out;
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
