// `reflexc test`: runs the tests that live with the rules (docs/language.md §9):
// every signature's inline examples and near-misses, and every `test` block
// (topology + log lines or a bundle, fed through the real ingest and engine,
// then `expect root / no root / event` checked against the diagnosis).
// Prints PASS/FAIL per test with an expected-vs-got diff, a coverage report of
// the signatures, latents and rule declarations no test exercised (rules count
// per declaration, docs/language.md §9.1: covered on a passing test's diagnosis
// chain, or by linking two of its observed events, rule_links.h), and a
// summary, on stdout.
#pragma once

namespace reflex::cli {

// argv[0] is "test"; returns the process exit code (0 all pass, 1 failures or
// coverage below --fail-under, 2 usage / unreadable input).
int run_kb_tests(int argc, char** argv);

}  // namespace reflex::cli
