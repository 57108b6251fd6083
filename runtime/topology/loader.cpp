// The topology file (docs/interfaces.md §1) into the indexes of topology_data.h:
// JSON streamed host by host, every reference checked, the first error aborts.
// This file: the entry point (the streaming parse) and TopoReader, the typed
// field readers, notes and device index every section uses.
#include "loader.h"

#include <set>
#include <string>
#include <vector>

#include "loader_classes.h"
#include "reflex/values.h"

namespace reflex::topo {

using json = nlohmann::json;

// Degradations are summarised: one note per kind, with the first example and a count.
void TopoReader::note(const std::string& kind, std::string example, std::string consequence) {
  auto [it, fresh] = notes_.try_emplace(kind);
  if (fresh) {
    it->second.example = std::move(example);
    it->second.consequence = std::move(consequence);
    order_.push_back(kind);
  }
  ++it->second.count;
}

void TopoReader::finish_notes() {
  for (auto& k : order_) {
    auto& n = notes_[k];
    std::string s = n.example;
    if (n.count > 1) s += " (and " + std::to_string(n.count - 1) + " more like it)";
    if (!s.empty()) s += ": ";
    s += n.consequence;
    im_->notes.push_back(std::move(s));
  }
}

// Optional typed members. Return false (error set) when present with the wrong type.
bool TopoReader::opt_string(const json& o, const char* key, const std::string& path,
                            std::string* out, bool* present) {
  if (present) *present = false;
  auto it = o.find(key);
  if (it == o.end() || it->is_null()) return true;
  if (!it->is_string()) return bad(path + "." + key, "must be a string");
  *out = it->get<std::string>();
  if (present) *present = true;
  return true;
}

bool TopoReader::req_string(const json& o, const char* key, const std::string& path,
                            std::string* out) {
  auto it = o.find(key);
  if (it == o.end() || it->is_null())
    return bad(path, std::string("missing required '") + key + "'");
  if (!it->is_string()) return bad(path + "." + key, "must be a string");
  *out = it->get<std::string>();
  if (out->empty()) return bad(path + "." + key, "must not be empty");
  return true;
}

// Paths are passed as base + suffix and joined only on error: loading 100k
// GPUs must not build a path string per field.
bool TopoReader::name_ok(const std::string& s, const std::string& base, const char* suffix,
                         bool allow_slash) {
  if (!allow_slash && s.find('/') != std::string::npos)
    return bad(base + suffix, quoted(s) + " must not contain '/' (it is part of device ids)");
  if (s.find('@') != std::string::npos)
    return bad(base + suffix, quoted(s) + " must not contain '@' (it marks placeholder ids)");
  return true;
}

bool TopoReader::opt_int(const json& o, const char* key, const std::string& path, int64_t* out,
                         bool* present) {
  *present = false;
  auto it = o.find(key);
  if (it == o.end() || it->is_null()) return true;
  if (!it->is_number_integer()) return bad(path + "." + key, "must be an integer");
  *out = it->get<int64_t>();
  *present = true;
  return true;
}

bool TopoReader::opt_bdf(const json& o, const std::string& path, std::string* out) {
  std::string raw;
  if (!opt_string(o, "bdf", path, &raw)) return false;
  if (raw.empty()) return true;
  auto n = normalize_bdf(raw);
  if (!n) return bad(path + ".bdf", quoted(raw) + " is not a PCI address");
  *out = *n;
  return true;
}

bool TopoReader::opt_ip(const json& o, const std::string& path, std::string* out) {
  std::string raw;
  if (!opt_string(o, "ip", path, &raw)) return false;
  if (raw.empty()) return true;
  auto n = normalize_ip(raw);
  if (!n) return bad(path + ".ip", quoted(raw) + " is not an IP address");
  *out = *n;
  return true;
}

bool TopoReader::string_list(const json& o, const char* key, const std::string& path,
                             std::vector<std::string>* out, bool* present) {
  *present = false;
  auto it = o.find(key);
  if (it == o.end() || it->is_null()) return true;
  if (!it->is_array()) return bad(path + "." + key, "must be an array of strings");
  for (size_t i = 0; i < it->size(); ++i) {
    if (!(*it)[i].is_string()) return bad(idx(path + "." + key, i), "must be a string");
    out->push_back((*it)[i].get<std::string>());
  }
  *present = true;
  return true;
}

int32_t TopoReader::add_dev(Dev d, const std::string& base, const char* suffix) {
  int32_t i = int32_t(im_->devs.size());
  im_->devs.push_back(std::move(d));
  if (im_->find(im_->devs.back().id) != kNone) {
    bad(base + suffix,
        "device id " + quoted(im_->devs.back().id) + " is already used by another device");
    im_->devs.pop_back();
    return kNone;
  }
  im_->by_id.insert(str_hash(im_->devs.back().id), i);
  return i;
}

bool TopoReader::index_bdf(int32_t host, const std::string& bdf, int32_t dev,
                           const std::string& path, bool allow_pcie_alias) {
  auto packed = pack_bdf(bdf);
  if (!packed) return true;  // exotic domain: only reachable by id
  uint64_t key = (uint64_t(uint32_t(host)) << 32) | *packed;
  int32_t existing = im_->by_host_bdf.find(key);
  if (existing == kNone) im_->by_host_bdf.insert(key, dev);
  if (existing != kNone && !(allow_pcie_alias && existing == dev)) {
    const Dev& other = im_->devs[size_t(existing)];
    return bad(path + ".bdf", "BDF " + bdf + " is already used on host " +
                                  quoted(im_->hosts[size_t(host)].name) + " by " + other.id);
  }
  return true;
}

namespace {

void index_short_names(TopoData* im) {
  for (size_t i = 0; i < im->hosts.size(); ++i) {
    std::string s = short_name(im->hosts[i].name);
    auto [it, fresh] = im->host_by_short.emplace(s, int32_t(i));
    if (!fresh && it->second != int32_t(i)) it->second = -2;  // ambiguous: never guess
  }
}

// Line/column of a byte offset, for "not JSON" errors.
std::string where(std::string_view text, size_t byte) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(col);
}

}  // namespace

bool load_json(std::string_view text, const std::string& origin, TopoData* im, TopologyError* err) {
  TopoLoader loader(im, origin, err);
  // Stream $.hosts: each host is loaded as soon as its object is complete and
  // then dropped from the DOM, which keeps 100k-GPU topologies small.
  struct Abort {};
  std::string top_key;
  bool in_hosts = false;
  // The keys of each open object: a repeated key is an error, not a silent
  // last-one-wins (nlohmann keeps the last).
  std::vector<std::set<std::string>> open_keys;
  json::parser_callback_t cb = [&](int depth, json::parse_event_t ev, json& parsed) -> bool {
    using E = json::parse_event_t;
    if (ev == E::object_start) {
      open_keys.emplace_back();
    } else if (ev == E::object_end) {
      if (!open_keys.empty()) open_keys.pop_back();
    } else if (ev == E::key && !open_keys.empty() && parsed.is_string()) {
      const std::string& k = parsed.get_ref<const std::string&>();
      if (!open_keys.back().insert(k).second) {
        if (err)
          *err = TopologyError{origin, "$",
                               "duplicate key '" + k + "' in one object (which one holds?)"};
        throw Abort{};
      }
    }
    if (depth == 1) {
      if (ev == E::key)
        top_key = parsed.is_string() ? parsed.get<std::string>() : "";
      else if (ev == E::array_start)
        in_hosts = top_key == "hosts";
      else if (ev == E::array_end)
        in_hosts = false;
      return true;
    }
    if (depth != 2 || !in_hosts) return true;
    if (ev == E::object_end) {
      if (!loader.host_element(parsed)) throw Abort{};
      return false;  // discard: already loaded
    }
    if (ev == E::value || ev == E::array_end) {
      if (!loader.host_element(parsed)) throw Abort{};  // reports "must be an object"
      return false;
    }
    return true;
  };
  json root;
  try {
    root = json::parse(text.begin(), text.end(), cb);
  } catch (const Abort&) {
    return false;
  } catch (const json::parse_error& e) {
    bool at_end = e.byte >= text.size();
    std::string what = e.what();
    // nlohmann's message: "[json.exception.parse_error.101] parse error at line 1, column 5: ..."
    size_t colon = what.find(": ", what.find("parse error"));
    std::string detail = colon == std::string::npos ? what : what.substr(colon + 2);
    if (err)
      *err = TopologyError{origin, "$",
                           std::string(at_end ? "truncated JSON" : "not valid JSON") + " at " +
                               where(text, e.byte == 0 ? 0 : e.byte - 1) + ": " + detail};
    return false;
  }
  if (!loader.finish(root)) return false;
  index_short_names(im);
  im->index_links();
  return true;
}

}  // namespace reflex::topo
