// `reflexc test` (see kb_test_runner.h). The runner knows nothing about any
// particular event: it compares what the runtime recognises and diagnoses with
// what each test block expects.
#include "kb_test_runner.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "../reflex/did_you_mean.h"
#include "reflex/compiler.h"
#include "reflex/diagnosis.h"
#include "reflex/engine.h"
#include "reflex/event.h"
#include "reflex/ingest.h"
#include "reflex/kb.h"
#include "reflex/signature_match.h"
#include "reflex/topology.h"
#include "rule_links.h"

namespace reflex::cli {

namespace {

struct Options {
  std::vector<std::string> paths;
  std::string run;  // ECMAScript regex on test names ("" = all)
  double fail_under = -1;
  bool verbose = false;
  bool no_coverage = false;
};

// What one test run exercised, for the coverage report.
// Signatures and latents count from every test block that ran (a failing one
// makes the run fail anyway); a rule only from passing tests, since a failing
// test is not evidence that the rule is right. A rule is exercised on a
// diagnosis chain, or by linking an observed cause to an observed effect of
// the test (rule_links.h): the second way covers rules whose effect leads to no
// symptom and rules a stronger direct rule keeps off the chain.
struct Exercised {
  std::set<std::string> signatures;  // recognised in some test block
  std::set<std::string> rules;       // compiled rule names used in a passing test's chain
  std::set<std::string> linked;      // compiled rule names that linked two events of a passing test
  std::set<std::string> latents;     // hypothesised as a root
};

struct Outcome {
  bool pass = true;
  std::vector<std::string> failures;   // one entry per failed expectation, multi-line
  std::string got;                     // the diagnoses, for --verbose
  std::set<std::string> rules_used;    // compiled rule names in the diagnosis chains
  std::set<std::string> rules_linked;  // compiled rule names linking two observed events
};

std::string quote(const std::string& s) {
  return "\"" + s + "\"";
}

// A rule declaration and its compiled expansions. Every expansion carries the
// declaration's location and is named DECL or DECL:... (docs/language.md §6).
struct RuleDeclaration {
  std::string name;
  SourceLoc loc;
  std::vector<const Rule*> expansions;
};

std::vector<RuleDeclaration> rule_declarations(const KnowledgeBase& kb) {
  std::vector<RuleDeclaration> out;
  std::map<std::tuple<std::string, int, int, std::string>, size_t> index;
  for (const Rule& r : kb.rules) {
    std::string decl = r.name.substr(0, r.name.find(':'));
    auto key = std::make_tuple(r.loc.file, r.loc.line, r.loc.col, decl);
    auto [it, fresh] = index.emplace(key, out.size());
    if (fresh) out.push_back({decl, r.loc, {}});
    out[it->second].expansions.push_back(&r);
  }
  return out;
}

std::string time_text(const EventTime& t) {
  std::string s = format_event_time(t);
  if (!s.empty()) return s;
  if (t.mono) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "mono %.6f", *t.mono);
    return buf;
  }
  return "no time";
}

// ------------------------------------------------------------------ examples

// Runs one signature's examples and near-misses with the production matcher.
// Appends a failure (with expected vs got) per example that does not hold.
void run_examples(const Signature& sig, int* checked, std::vector<std::string>* failures) {
  std::string err;
  auto cs = CompiledSignature::compile(sig, &err);
  if (!cs) {
    failures->push_back(sig.loc.str() + ": signature '" + sig.name + "' does not compile: " + err);
    return;
  }
  for (const Example& ex : sig.examples) {
    ++*checked;
    std::string where = ex.loc.file.empty() ? sig.loc.str() : ex.loc.str();
    FieldValues caps;
    std::string why;
    if (!cs->accepts_transport(ex.source)) {
      failures->push_back(where + ": example of '" + sig.name + "' arrives through '" +
                          transport_name(ex.source) + "', which the signature does not accept");
      continue;
    }
    if (!match_text(*cs, ex.line, ex.source, &caps, &why)) {
      failures->push_back(where + ": example of '" + sig.name +
                          "' does not match\n    line: " + ex.line + "\n    why:  " + why);
      continue;
    }
    std::string diff;
    for (const auto& [field, want] : ex.expect) {
      const std::string* got = nullptr;
      for (const auto& [k, v] : caps)
        if (k == field) got = &v;
      if (!got) {
        diff += "\n    - " + field + " = " + quote(want) + "\n    + (not captured)";
      } else if (*got != want) {
        diff += "\n    - " + field + " = " + quote(want) + "\n    + " + field + " = " + quote(*got);
      }
    }
    if (!diff.empty())
      failures->push_back(where + ": example of '" + sig.name +
                          "' captured other values (- expected, + got)" + diff);
  }
  for (const Example& nm : sig.near_misses) {
    ++*checked;
    FieldValues caps;
    if (!match_text(*cs, nm.line, nm.source, &caps, nullptr)) continue;
    std::string fields;
    for (const auto& [k, v] : caps) fields += (fields.empty() ? "" : ", ") + k + " = " + v;
    failures->push_back((nm.loc.file.empty() ? sig.loc.str() : nm.loc.str()) +
                        ": near-miss is matched by '" + sig.name + "'\n    line: " + nm.line +
                        (fields.empty() ? "" : "\n    captured: " + fields));
  }
}

// ------------------------------------------------------------------ test blocks

std::string root_line(size_t rank, const RootCause& rc) {
  char score[32];
  std::snprintf(score, sizeof score, "%.3f", rc.score);
  std::string cls = rc.fault_class + (rc.subclass.empty() ? "" : "/" + rc.subclass);
  return "#" + std::to_string(rank) + " " + rc.device + " class " + cls + " event " + rc.event +
         (rc.latent ? " (latent)" : "") + " score " + score;
}

// Everything the test produced, as the "got" side of a diff.
std::string describe(const std::vector<Diagnosis>& ds, bool verbose) {
  std::ostringstream o;
  if (ds.empty()) o << "\n    + (no diagnosis)";
  for (size_t i = 0; i < ds.size(); ++i) {
    const Diagnosis& d = ds[i];
    o << "\n    + incident " << (i + 1) << ": trigger ";
    if (d.trigger)
      o << d.trigger->event << " on " << d.trigger->device << " at " << time_text(d.trigger->time);
    else
      o << "null";
    if (d.root_causes.empty()) o << "\n    +   (no root cause)";
    for (size_t r = 0; r < d.root_causes.size(); ++r) {
      o << "\n    +   " << root_line(r + 1, d.root_causes[r]);
      if (verbose) {
        for (const ChainLink& l : d.root_causes[r].chain)
          o << "\n    +       " << l.ev.event << " on " << l.ev.device
            << (l.rule_name.empty() ? "" : "  [" + l.rule_name + ": " + l.relation + "]");
        if (!d.root_causes[r].why.empty()) o << "\n    +       why: " << d.root_causes[r].why;
      }
    }
    if (verbose) {
      for (const EventRef& u : d.unexplained)
        o << "\n    +   unexplained: " << u.event << " on " << u.device;
      for (const std::string& n : d.notes) o << "\n    +   note: " << n;
    }
  }
  return o.str();
}

const Diagnosis* primary(const std::vector<Diagnosis>& ds) {
  // The incident the test is about: the one with root causes whose trigger
  // comes first; else the first one.
  const Diagnosis* best = nullptr;
  for (const Diagnosis& d : ds) {
    if (d.root_causes.empty()) continue;
    if (!best) {
      best = &d;
      continue;
    }
    auto t = [](const Diagnosis& x) -> int64_t {
      return x.trigger && x.trigger->time.wall ? *x.trigger->time.wall : INT64_MAX;
    };
    if (t(d) < t(*best)) best = &d;
  }
  if (!best && !ds.empty()) best = &ds.front();
  return best;
}

Outcome run_test(const KnowledgeBase& kb, const KbTest& t, bool verbose, Exercised* ex) {
  Outcome out;
  auto fail = [&](std::string msg) {
    out.pass = false;
    out.failures.push_back(std::move(msg));
  };

  TopologyError terr;
  std::unique_ptr<Topology> topo;
  if (!t.topology_path.empty()) {
    topo = Topology::load_file(t.topology_path, &terr);
  } else if (!t.topology_json.empty()) {
    topo = Topology::load_text(t.topology_json, t.loc.str() + " (inline topology)", &terr);
  } else {
    topo = Topology::empty();
  }
  if (!topo) {
    fail("topology: " + terr.str());
    return out;
  }

  std::vector<Event> events;
  {
    Ingestor ing(kb, *topo);
    ing.set_sink([&events](Event&& e) { events.push_back(std::move(e)); });
    std::string evidence = t.loc.file + ":" + std::to_string(t.loc.line);
    for (size_t i = 0; i < t.logs.size(); ++i)
      ing.feed_line(t.logs[i].host, t.logs[i].source, t.logs[i].line, evidence, i + 1);
    if (!t.bundle_dir.empty()) {
      std::string err;
      if (!ing.read_bundle(t.bundle_dir, &err)) fail("bundle " + t.bundle_dir + ": " + err);
    }
    ing.finish();
  }
  for (const Event& e : events) ex->signatures.insert(e.name);

  std::vector<Diagnosis> ds = diagnose_events(kb, *topo, events);
  out.rules_linked = linked_rules(kb, *topo, events, EngineOptions{}.clock_skew_s);
  for (const Diagnosis& d : ds)
    for (const RootCause& rc : d.root_causes) {
      if (rc.latent) ex->latents.insert(rc.event);
      for (const ChainLink& l : rc.chain)
        if (!l.rule_name.empty()) out.rules_used.insert(l.rule_name);
    }

  if (verbose) out.got = describe(ds, true);
  const Diagnosis* p = primary(ds);
  for (const TestExpect& e : t.expects) {
    std::string where = e.loc.file.empty() ? t.loc.str() : e.loc.str();
    switch (e.kind) {
      case TestExpect::Kind::root: {
        size_t rank = static_cast<size_t>(std::max(1, e.rank));
        bool ok = false;
        if (p && p->root_causes.size() >= rank) {
          const RootCause& rc = p->root_causes[rank - 1];
          ok = (e.device.empty() || rc.device == e.device) &&
               (e.fault_class.empty() || rc.fault_class == e.fault_class ||
                rc.subclass == e.fault_class);
        }
        if (!ok)
          fail(where + ": root cause #" + std::to_string(rank) + " (- expected, + got)\n    - #" +
               std::to_string(rank) + " " + (e.device.empty() ? "(any device)" : e.device) +
               (e.fault_class.empty() ? "" : " class " + e.fault_class) + describe(ds, verbose));
        break;
      }
      case TestExpect::Kind::no_root: {
        bool none = std::all_of(ds.begin(), ds.end(),
                                [](const Diagnosis& d) { return d.root_causes.empty(); });
        if (!none)
          fail(where + ": expected no root cause (- expected, + got)\n    - (no root cause)" +
               describe(ds, verbose));
        break;
      }
      case TestExpect::Kind::event: {
        bool found = false;
        std::string seen;
        for (const Event& ev : events) {
          if (ev.name != e.event) continue;
          if (e.device.empty() || ev.device == e.device) found = true;
          seen += "\n    + " + ev.name + " on " + ev.device + " at " + time_text(ev.time);
        }
        if (!found) {
          if (seen.empty()) seen = "\n    + (no '" + e.event + "' event recognised)";
          fail(where + ": event (- expected, + got)\n    - " + e.event +
               (e.device.empty() ? "" : " on " + e.device) + seen);
        }
        break;
      }
    }
  }
  return out;
}

int parse_args(int argc, char** argv, Options* o) {
  CLI::App app{"Run the rule tests that live with the rules", "test"};
  app.add_option("paths", o->paths, ".rfx files or directories")->required();
  app.add_option("--run", o->run, "Only test blocks whose name matches REGEX")->type_name("REGEX");
  app.add_option("--fail-under", o->fail_under,
                 "Fail when coverage (signatures, latents, rule declarations) is below PCT percent")
      ->type_name("PCT")
      ->check(CLI::Range(0.0, 100.0));
  app.add_flag("-v,--verbose", o->verbose,
               "Show every test's diagnoses with chains, unexplained symptoms and notes");
  app.add_flag("--no-coverage", o->no_coverage, "Do not list uncovered signatures and rules");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "reflexc test: error: %s\n", reflex::cli::usage_error(app, e).c_str());
    std::fprintf(stderr, "Run 'reflexc test --help' for usage.\n");
    return 2;
  }
  return -1;
}

struct Tally {
  int passed = 0, failed = 0, skipped = 0;
};

// The test blocks (those --run selects), PASS/FAIL a line; what the passing
// ones exercised is added to *ex.
Tally run_test_blocks(const KnowledgeBase& kb, const std::optional<std::regex>& run_re,
                      bool verbose, Exercised* ex) {
  Tally n;
  for (const KbTest& t : kb.tests) {
    if (run_re && !std::regex_search(t.name, *run_re)) {
      ++n.skipped;
      continue;
    }
    Outcome r = run_test(kb, t, verbose, ex);
    if (r.pass) {
      ++n.passed;
      ex->rules.insert(r.rules_used.begin(), r.rules_used.end());
      ex->linked.insert(r.rules_linked.begin(), r.rules_linked.end());
      std::printf("PASS %s  (%s)\n", t.name.c_str(), t.loc.str().c_str());
      if (verbose) {
        std::printf("  got:%s\n", r.got.c_str());
        // Rules this test covers only by linking two of its events (not on a chain).
        for (const std::string& name : r.rules_linked)
          if (!r.rules_used.count(name)) std::printf("  linked: %s\n", name.c_str());
      }
    } else {
      ++n.failed;
      std::printf("FAIL %s  (%s)\n", t.name.c_str(), t.loc.str().c_str());
      for (const std::string& f : r.failures) std::printf("  %s\n", f.c_str());
    }
  }
  return n;
}

// Coverage: what no test block exercised, listed unless list_misses is false;
// returns the percentage. Rules count per declaration (what a person wrote and
// reads); the compiled expansions, one per (cause, effect) pair of a
// declaration, are reported for information.
double report_coverage(const KnowledgeBase& kb, const Exercised& ex, bool list_misses) {
  size_t sig_total = 0, sig_hit = 0, lat_hit = 0, exp_hit = 0;
  std::vector<std::string> sig_miss, rule_miss, lat_miss;
  for (const Signature& s : kb.signatures) {
    if (s.suspect) continue;  // never an event: nothing for a test to recognise
    ++sig_total;
    if (ex.signatures.count(s.name))
      ++sig_hit;
    else
      sig_miss.push_back(s.loc.str() + " " + s.name);
  }
  std::vector<RuleDeclaration> decls = rule_declarations(kb);
  size_t decl_hit = 0, decl_chain = 0;
  for (const RuleDeclaration& d : decls) {
    size_t chained = 0, used = 0;
    for (const Rule* r : d.expansions) {
      chained += ex.rules.count(r->name);
      used += ex.rules.count(r->name) || ex.linked.count(r->name);
    }
    exp_hit += used;
    if (chained) ++decl_chain;
    if (used)
      ++decl_hit;
    else
      rule_miss.push_back(d.loc.str() + " " + d.name);
  }
  for (const Latent& l : kb.latents) {
    if (ex.latents.count(l.name))
      ++lat_hit;
    else
      lat_miss.push_back(l.loc.str() + " " + l.name);
  }
  size_t total = sig_total + decls.size() + kb.latents.size();
  double pct =
      total ? 100.0 * static_cast<double>(sig_hit + decl_hit + lat_hit) / static_cast<double>(total)
            : 100.0;
  if (list_misses) {
    for (const std::string& s : sig_miss) std::printf("uncovered signature %s\n", s.c_str());
    for (const std::string& s : lat_miss) std::printf("uncovered latent %s\n", s.c_str());
    for (const std::string& s : rule_miss) std::printf("uncovered rule %s\n", s.c_str());
  }
  std::printf(
      "coverage: %.1f%% (signatures %zu/%zu, latents %zu/%zu, rules %zu/%zu declarations "
      "(%zu on a chain, %zu linked); %zu/%zu expansions)\n",
      pct, sig_hit, sig_total, lat_hit, kb.latents.size(), decl_hit, decls.size(), decl_chain,
      decl_hit - decl_chain, exp_hit, kb.rules.size());
  return pct;
}

// The KB under test with its examples left to the test run; exit code in *rc
// (2: unreadable, 1: compile errors) when there is none.
std::optional<KnowledgeBase> compile_for_tests(const std::vector<std::string>& paths, int* rc) {
  // Examples are run below (as tests, with diffs), not as compile errors.
  CompileOptions copts;
  copts.check_examples = false;
  CompileResult cr = compile(paths, copts);
  if (cr.io_error) {
    std::fprintf(stderr, "reflexc test: error: %s\n", cr.io_message.c_str());
    *rc = 2;
    return std::nullopt;
  }
  if (!cr.kb) {
    std::cerr << render_diagnostics(cr, DiagFormat::text);
    std::fprintf(stderr, "reflexc test: the knowledge base has errors; no test was run\n");
    *rc = 1;
    return std::nullopt;
  }
  // Every test builds an Ingestor: compile the pattern database once and let
  // them all load it (~0.2 s each otherwise; minutes under sanitizers).
  std::string pc_err;
  (void)precompile_patterns(&*cr.kb, &pc_err);  // without it each test compiles; same result
  return std::move(cr.kb);
}

}  // namespace

int run_kb_tests(int argc, char** argv) {
  Options o;
  if (int rc = parse_args(argc, argv, &o); rc >= 0) return rc;
  std::optional<std::regex> run_re;
  if (!o.run.empty()) {
    try {
      run_re.emplace(o.run, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      std::fprintf(stderr, "reflexc test: error: bad --run regex '%s': %s\n", o.run.c_str(),
                   e.what());
      return 2;
    }
  }
  int rc = 0;
  std::optional<KnowledgeBase> compiled = compile_for_tests(o.paths, &rc);
  if (!compiled) return rc;
  const KnowledgeBase& kb = *compiled;

  // 1. Inline examples and near-misses.
  int checked = 0;
  std::vector<std::string> ex_failures;
  if (!run_re) {
    for (const Signature& s : kb.signatures) run_examples(s, &checked, &ex_failures);
    for (const std::string& f : ex_failures) std::printf("FAIL example %s\n", f.c_str());
    std::printf("examples: %d checked, %zu failed\n", checked, ex_failures.size());
  }
  // 2. Test blocks, 3. coverage.
  Exercised ex;
  const Tally n = run_test_blocks(kb, run_re, o.verbose, &ex);
  const double pct = report_coverage(kb, ex, !o.no_coverage && !run_re);
  std::printf("tests: %d passed, %d failed, %d not selected\n", n.passed, n.failed, n.skipped);

  bool ok = n.failed == 0 && ex_failures.empty();
  if (o.fail_under >= 0 && pct + 1e-9 < o.fail_under) {
    std::printf("coverage %.1f%% is below --fail-under %.1f%%\n", pct, o.fail_under);
    ok = false;
  }
  return ok ? 0 : 1;
}

}  // namespace reflex::cli
