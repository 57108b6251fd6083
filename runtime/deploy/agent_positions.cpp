// The agent's state file: read positions kept across restarts (agent_positions.h).
#include "agent_positions.h"

#include <fcntl.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string_view>

#include "deploy_codec.h"
#include "reflex/deploy/daemon.h"

namespace reflex::deploy::agent {

namespace {

// The saved open folds (Pending::folds): events as on the wire.
std::shared_ptr<const std::vector<Event>> load_folds(const nlohmann::json& j,
                                                     const std::string& state_path) {
  auto it = j.find("folds");
  if (it == j.end() || !it->is_array()) return nullptr;
  auto out = std::make_shared<std::vector<Event>>();
  size_t bad = 0;
  for (const auto& f : *it) {
    std::string err;
    std::optional<Event> ev;
    if (f.is_object() && out->size() < kMaxFolds)
      ev = decode_event(f.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), &err);
    if (ev && ev->count >= 1 && ev->evidence.find(':') != std::string::npos)
      out->push_back(std::move(*ev));
    else
      ++bad;
  }
  if (bad > 0)
    log(Level::warn, state_path + ": " + std::to_string(bad) +
                         " saved storm fold(s) unusable or over the limit, not reopened (their "
                         "counts after this restart start from the lines read from now on)");
  return out;
}

}  // namespace

bool Positions::load(std::string* err) {
  if (state_path.empty()) return true;
  std::ifstream in(state_path);
  if (!in) return true;  // first start
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("files") || !j["files"].is_array()) {
    *err = state_path +
           ": not a reflex agent state file (give another --state; a stale one may be removed)";
    return false;
  }
  auto entry = [](const nlohmann::json& f) {
    Pending p;
    p.marker = true;
    p.key.dev = f.value("dev", uint64_t{0});
    p.key.ino = f.value("ino", uint64_t{0});
    p.pos.offset = f.value("offset", uint64_t{0});
    p.pos.line = f.value("line", uint64_t{0});
    p.sent_line = f.value("sent_line", uint64_t{0});
    p.path = f.value("path", "");
    p.evidence = f.value("evidence", "");
    p.cursor = f.value("cursor", "");
    p.print.head_len = f.value("head_len", uint64_t{0});
    p.print.head = f.value("head", "");
    p.print.tail = f.value("tail", "");
    p.gz = f.value("gz", false);
    p.done = f.value("done", false);
    p.was_open = f.value("open", false);
    p.size = f.value("size", uint64_t{0});
    p.mtime = f.value("mtime", int64_t{0});
    p.seen = f.value("seen", int64_t{0});
    return p;
  };
  for (const auto& f : j["files"]) {
    if (!f.is_object()) continue;
    Pending p = entry(f);
    resume[p.key] = p;
    committed[p.key] = p;
  }
  if (j.contains("ghosts") && j["ghosts"].is_array())
    for (const auto& f : j["ghosts"])
      if (f.is_object()) ghosts.push_back(entry(f));
  folds = load_folds(j, state_path);
  loaded = true;
  return true;
}

void Positions::write(const std::function<bool(const FileKey&)>& is_open, size_t open_count) {
  if (state_path.empty() || !dirty) return;
  // Bounded: the positions of the oldest closed files go first.
  if (committed.size() > kMaxClosed + open_count) {
    std::vector<std::pair<int64_t, FileKey>> closed;
    for (const auto& [k, p] : committed)
      if (!is_open(k) && k.dev != 0) closed.emplace_back(p.seen, k);
    std::sort(closed.begin(), closed.end(),
              [](const auto& x, const auto& y) { return x.first < y.first; });
    for (size_t i = 0; i + kMaxClosed < closed.size(); ++i) {
      committed.erase(closed[i].second);
      text_.erase(closed[i].second);
    }
  }
  auto entry_json = [](const Pending& p) {
    return nlohmann::json{{"dev", p.key.dev},
                          {"ino", p.key.ino},
                          {"path", p.path},
                          {"evidence", p.evidence},
                          {"offset", p.pos.offset},
                          {"line", p.pos.line},
                          {"sent_line", p.sent_line},
                          {"cursor", p.cursor},
                          {"head_len", p.print.head_len},
                          {"head", p.print.head},
                          {"tail", p.print.tail},
                          {"gz", p.gz},
                          {"done", p.done},
                          {"size", p.size},
                          {"mtime", p.mtime},
                          {"seen", p.seen}};
  };
  nlohmann::json ghosts_j = nlohmann::json::array();
  std::string files_text;
  for (const auto& [k, p] : committed) {
    auto t = text_.find(k);
    if (t == text_.end())
      t = text_
              .emplace(k,
                       entry_json(p).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
              .first;
    files_text += files_text.empty() ? "[\n" : ",\n";
    files_text.append(t->second, 0, t->second.size() - 1);  // without its '}'
    files_text += is_open(k) ? ",\"open\":true}" : ",\"open\":false}";
  }
  files_text += files_text.empty() ? "[]" : "\n]";
  for (const Pending& g : ghosts) ghosts_j.push_back(entry_json(g));
  nlohmann::json folds_j = nlohmann::json::array();
  if (folds)
    for (const Event& ev : *folds)
      if (auto e = nlohmann::json::parse(encode_event(ev), nullptr, false); !e.is_discarded())
        folds_j.push_back(std::move(e));
  auto dump = [](const nlohmann::json& j) {
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  std::string text = "{\"version\":1,\n\"files\":" + files_text +
                     ",\n\"ghosts\":" + dump(ghosts_j) + ",\n\"folds\":" + dump(folds_j) + "}\n";
  // Write, fsync, rename: a crash leaves the old state or the new one.
  std::string tmp = state_path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  bool ok = fd >= 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
            ::fsync(fd) == 0;
  if (fd >= 0) ::close(fd);
  if (!ok || ::rename(tmp.c_str(), state_path.c_str()) != 0) {
    log_limited(Level::error, "state",
                state_path + ": cannot write state: " + std::strerror(errno));
    return;
  }
  dirty = false;
}

void Positions::apply_marker(const Pending& m) {
  if (m.folds) {
    folds = m.folds;
    dirty = true;
  }
  if (m.folds_only) return;
  committed[m.key] = m;
  text_.erase(m.key);
  if (m.supersedes && (m.supersedes->dev != m.key.dev || m.supersedes->ino != m.key.ino)) {
    committed.erase(*m.supersedes);
    text_.erase(*m.supersedes);
  }
  dirty = true;
}

void Positions::add_ghost(const Pending& p) {
  if (p.pos.offset == 0 || p.print.head_len == 0) return;
  ghosts.push_back(p);
  if (ghosts.size() > kMaxGhosts) ghosts.erase(ghosts.begin());
  dirty = true;
}

// A position whose file this compressed text continues: the known file
// with the same first bytes, read furthest (its tail is checked once the
// stream gets there).
std::optional<Pending> Positions::match_known(const std::string& head) const {
  std::optional<Pending> best;
  auto consider = [&](const Pending& p) {
    if (p.pos.offset == 0 || p.print.head_len == 0 || p.print.head_len > head.size()) return;
    if (sha(std::string_view(head).substr(0, p.print.head_len)) != p.print.head) return;
    if (!best || p.pos.offset > best->pos.offset) best = p;
  };
  for (const auto& [k, p] : resume)
    if (!p.done) consider(p);
  for (const Pending& g : ghosts) consider(g);
  return best;
}

void Positions::drop_known(const Pending& p) {
  resume.erase(p.key);
  ghosts.erase(std::remove_if(ghosts.begin(), ghosts.end(),
                              [&](const Pending& g) {
                                return g.key.dev == p.key.dev && g.key.ino == p.key.ino &&
                                       g.pos.offset == p.pos.offset;
                              }),
               ghosts.end());
}

}  // namespace reflex::deploy::agent
