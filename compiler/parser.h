// Front end of one file: byte-level pre-checks, then ANTLR, then the AST.
// ANTLR types never leave the front end (parser.cpp, syntax_errors.cpp,
// ast_builder.cpp; front_end.h is what they share).
#pragma once

#include "ast.h"
#include "diagnostics.h"

namespace reflex::compiler {

// Fills file.decls from file.text. Every problem is a diagnostic; returns
// false when the file could not be analysed at all (bad bytes, too deep).
bool parse_file(SourceFile& file, DiagEngine& diags, const CompileOptions& options);

// Unescapes a "..." string body (without quotes).
std::string unescape_string(const std::string& body);

}  // namespace reflex::compiler
