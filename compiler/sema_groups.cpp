// Event groups (`group NAME = a, b, other_group`): resolved to the flat list of
// events they stand for. A group is pure shorthand: rules naming it are
// expanded at lowering, one compiled Rule per (cause, effect) pair.
#include <algorithm>
#include <functional>

#include "sema.h"
#include "sema_util.h"

namespace reflex::compiler {

void unknown_event_or_group(Sema& s, const Ident& id, const std::set<std::string>* allows) {
  std::vector<std::string> names;
  for (const auto& [n, r] : s.sigs)
    if (!r.abstract) names.push_back(n);
  for (const auto& [n, r] : s.latent_defs) names.push_back(n);
  for (const auto& [n, d] : s.groups) names.push_back(n);
  std::string near = closest(id.text, names);
  std::string msg = "unknown event '" + id.text + "'";
  if (!near.empty()) msg += "; did you mean '" + near + "'?";
  auto& d = s.diags.report(DiagId::unknown_event, id.range, msg, allows);
  if (near.empty()) return;
  const Decl* decl = nullptr;
  if (auto it = s.sigs.find(near); it != s.sigs.end()) decl = it->second.decl;
  if (auto it = s.latent_defs.find(near); it != s.latent_defs.end()) decl = it->second.decl;
  if (auto it = s.groups.find(near); it != s.groups.end()) decl = it->second;
  if (decl) DiagEngine::note(d, decl->name.range, "'" + near + "' is declared here");
}

namespace {

// Adds `event` (reached through `item`) to the group unless it is already in.
// Overlaps are collected per member so one warning names them all.
void add_event(ResolvedGroup& g, const std::string& event, const Ident* item,
               std::map<const Ident*, std::vector<std::string>>* repeats) {
  if (g.origin.count(event)) {
    (*repeats)[item].push_back(event);
    return;
  }
  g.origin[event] = item;
  g.events.push_back(event);
}

}  // namespace

void pass_groups(Sema& s) {
  for (const auto& [name, d] : s.groups) s.group_defs[name].decl = d;

  std::vector<std::string> stack;
  std::function<void(const std::string&)> resolve = [&](const std::string& name) {
    ResolvedGroup& g = s.group_defs[name];
    if (g.state != ResolvedGroup::State::fresh) return;
    g.state = ResolvedGroup::State::visiting;
    stack.push_back(name);
    const Decl* d = g.decl;
    if (d->broken) {  // its syntax error is reported; recovery may have invented members
      g.ok = false;
      stack.pop_back();
      g.state = ResolvedGroup::State::done;
      return;
    }
    if (d->group_members.empty()) {
      auto& diag =
          s.diags.report(DiagId::empty_group, d->name.range, "group '" + name + "' has no members");
      DiagEngine::note(diag, "list events or groups after '=': group " + name + " = a, b");
      g.ok = false;
    }
    std::map<const Ident*, std::vector<std::string>> repeats;
    for (const Ident& m : d->group_members) {
      s.ref(d->file, m.text);
      if (auto sub_it = s.group_defs.find(m.text); sub_it != s.group_defs.end()) {
        s.used_groups.insert(m.text);
        ResolvedGroup& sub = sub_it->second;
        if (sub.state == ResolvedGroup::State::visiting) {
          auto at = std::find(stack.begin(), stack.end(), m.text);
          std::string path;
          for (auto it = at; it != stack.end(); ++it) path += *it + " -> ";
          path += m.text;
          s.diags.report(DiagId::group_cycle, m.range,
                         "group '" + m.text + "' contains itself: " + path);
          g.ok = false;
          continue;
        }
        if (stack.size() > static_cast<size_t>(s.options.max_nesting_depth)) {
          s.diags.report(DiagId::nesting_too_deep, m.range,
                         "groups nest more than " + std::to_string(s.options.max_nesting_depth) +
                             " levels deep");
          g.ok = false;
          continue;
        }
        resolve(m.text);
        if (!sub.ok) {
          g.ok = false;
          continue;
        }
        for (const std::string& ev : sub.events) add_event(g, ev, &m, &repeats);
        continue;
      }
      auto sig = s.sigs.find(m.text);
      if (sig != s.sigs.end() && sig->second.abstract) {
        auto& diag = s.diags.report(DiagId::unknown_event, m.range,
                                    "'" + m.text + "' is abstract and never fires");
        DiagEngine::note(diag, sig->second.decl->name.range, "declared abstract here");
        g.ok = false;
      } else if (sig != s.sigs.end() || s.latent_defs.count(m.text)) {
        add_event(g, m.text, &m, &repeats);
      } else {
        unknown_event_or_group(s, m, nullptr);
        g.ok = false;
      }
    }
    for (const auto& [item, events] : repeats) {
      const Ident* first = g.origin.at(events.front());
      std::string msg;
      if (events.size() == 1 && item->text == events.front() && first->text == item->text) {
        msg = "'" + item->text + "' is listed twice in group '" + name + "'";
      } else {
        std::string list;
        for (size_t i = 0; i < events.size() && i < 3; ++i)
          list += (i ? ", '" : "'") + events[i] + "'";
        if (events.size() > 3) list += " and " + std::to_string(events.size() - 3) + " more";
        msg = list + (events.size() == 1 ? " is" : " are") + " already in group '" + name + "'";
        if (item->text != events.front()) msg += " (through '" + item->text + "')";
      }
      auto& diag = s.diags.report(DiagId::duplicate_member, item->range, msg);
      DiagEngine::note(diag, first->range,
                       first->text == events.front()
                           ? "first listed here"
                           : "first included through '" + first->text + "' here");
    }
    stack.pop_back();
    g.state = ResolvedGroup::State::done;
  };
  for (const auto& [name, g] : s.group_defs) resolve(name);
}

}  // namespace reflex::compiler
