// The .rfx compiler as a library: sources in, diagnostics and a compiled
// KnowledgeBase (reflex/kb.h) out. Used by `reflexc` and by every runtime CLI
// (through load_kb). Nothing here throws; errors are diagnostics.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reflex/artifact.h"
#include "reflex/compile_types.h"
#include "reflex/kb.h"

namespace reflex {

// Compiles files and directories (every *.rfx below, recursively, sorted) as
// one unit. Never throws.
CompileResult compile(const std::vector<std::string>& paths, const CompileOptions& options);
// Compiles one in-memory source as a unit (`path` is only its display name and
// the base for relative imports/test files). For tests and fuzzing.
CompileResult compile_text(const std::string& path, const std::string& text,
                           const CompileOptions& options);

enum class DiagFormat { text, json, sarif };
// text: clang layout + per-file summary + totals; json: {"files","diagnostics",
// "errors","warnings"}; sarif: SARIF 2.1.0. `color` only affects text.
std::string render_diagnostics(const CompileResult& result, DiagFormat format, bool color = false);

// The causal event graph of a compiled KB: Graphviz dot or JSON
// {"nodes":[...],"edges":[...]}.
std::string causal_graph_dot(const KnowledgeBase& kb);
std::string causal_graph_json(const KnowledgeBase& kb);

// What the runtime CLIs call for `--kb`: a built artifact (reflex/artifact.h) or
// .rfx sources (file or directory; compiled here). On failure nullopt and
// *error holds a printable explanation (for sources: the rendered diagnostics).
// Checks the KB's `requires engine` against this engine. `parts`: what of an
// artifact to decode (reflex/artifact.h); sources are compiled whole.
std::optional<KnowledgeBase> load_kb(const std::string& path, std::string* error,
                                     KbParts parts = {});

}  // namespace reflex
