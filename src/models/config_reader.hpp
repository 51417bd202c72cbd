// What every family's config.json reader shares (src/models/families/): the keys read and
// reported, the size / number / boolean / string readers that name the key in their errors, and the
// settings several families spell alike (activations, rope_scaling).
#pragma once

#include <initializer_list>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "attnkit/core/status.hpp"

namespace attnkit::config {

using json = nlohmann::json;

// An invalid_argument naming `key`, its message prefixed with "config.json: ".
Status bad(const std::string& key, const std::string& message);

// Settings of PretrainedConfig or of the families that change nothing in a forward pass (training,
// generation, bookkeeping): reported as "ignored", not "unknown".
const std::set<std::string>& ignorable();

class Reader {
 public:
  explicit Reader(const json& j) : j_(j) {}

  bool has(const std::string& key) {
    used_.insert(key);
    const auto it = j_.find(key);
    return it != j_.end() && !it->is_null();
  }
  // A required positive integer (the first of `keys` present: GPT-2 and BERT spell them apart).
  Status size(std::initializer_list<const char*> keys, double& out, double lo = 1, double hi = 1 << 24) {
    for (const char* k : keys) used_.insert(k);
    for (const char* k : keys)
      if (has(k)) return integer(k, out, lo, hi);
    return bad(*keys.begin(), std::string("the setting '") + *keys.begin() + "' is missing");
  }
  Status integer(const std::string& key, double& out, double lo, double hi) {
    const json& v = j_.at(key);
    if (!v.is_number() || std::floor(v.get<double>()) != v.get<double>() || v.get<double>() < lo ||
        v.get<double>() > hi) {
      return bad(key, "'" + key + "' must be an integer in [" + show_number(lo) + ", " + show_number(hi) + "], got " +
                          v.dump());
    }
    out = v.get<double>();
    return Status::success();
  }
  Status optional_integer(const std::string& key, double& out, double dflt, double lo = 0, double hi = 1 << 24) {
    if (!has(key)) return out = dflt, Status::success();
    return integer(key, out, lo, hi);
  }
  Status number(const std::string& key, double& out, double dflt, double lo, double hi) {
    if (!has(key)) return out = dflt, Status::success();
    const json& v = j_.at(key);
    if (!v.is_number() || !(v.get<double>() >= lo && v.get<double>() <= hi)) {
      return bad(key, "'" + key + "' must be a number in [" + show_number(lo) + ", " + show_number(hi) + "], got " +
                          v.dump());
    }
    out = v.get<double>();
    return Status::success();
  }
  Status boolean(const std::string& key, bool& out, bool dflt) {
    if (!has(key)) return out = dflt, Status::success();
    if (!j_.at(key).is_boolean()) return bad(key, "'" + key + "' must be true or false, got " + j_.at(key).dump());
    out = j_.at(key).get<bool>();
    return Status::success();
  }
  Status string(const std::string& key, std::string& out, const std::string& dflt) {
    if (!has(key)) return out = dflt, Status::success();
    if (!j_.at(key).is_string()) return bad(key, "'" + key + "' must be a string, got " + j_.at(key).dump());
    out = j_.at(key).get<std::string>();
    return Status::success();
  }
  // A token id setting (eos_token_id): an integer, a list of them, or null -> a list (maybe empty).
  // Not checked against the vocabulary: configs name ids of a larger tokenizer (an id past the
  // vocabulary simply never comes up).
  Status token_ids(const std::string& key, json& out) {
    out = json::array();
    if (!has(key) || j_.at(key).is_null()) return Status::success();
    const json& v = j_.at(key);
    const json list = v.is_array() ? v : json::array({v});
    if (list.size() > 64) return bad(key, "'" + key + "' lists " + std::to_string(list.size()) + " ids; at most 64");
    for (const json& id : list) {
      if (!id.is_number_integer() || id.get<double>() < 0 || id.get<double>() > (1 << 24)) {
        return bad(key, "'" + key + "' must be a token id (an integer in [0, 16777216]), a list of them, or null; got " +
                            v.dump());
      }
      out.push_back(id.get<int64_t>());
    }
    return Status::success();
  }
  // A setting whose only supported value is `expected` (absent is fine).
  Status require(const std::string& key, const json& expected, const std::string& why) {
    if (has(key) && j_.at(key) != expected) {
      return bad(key, "'" + key + "' = " + j_.at(key).dump() + " is not supported: " + why);
    }
    return Status::success();
  }
  // Every key read is "used"; the rest are ignorable (no effect) or unknown.
  void report(json& spec) const {
    json ignored = json::array(), unknown = json::array();
    for (const auto& [k, v] : j_.items()) {
      if (used_.count(k)) continue;
      (ignorable().count(k) ? ignored : unknown).push_back(k);
    }
    spec["ignored"] = ignored;
    spec["unknown"] = unknown;
  }

 private:
  const json& j_;
  std::set<std::string> used_;
};

// Hugging Face's activation names -> attnkit's ('gelu', 'gelu_tanh', 'relu', 'silu').
Status activation_name(const std::string& key, const std::string& act, std::string& out);

// rope_scaling in the old ({"type": ..}) and new ({"rope_type": ..}) spellings -> the rotary
// options' scaling object (LongRoPE's factors as shortFactor / longFactor); keys it does not know
// go to `unknown`.
Status rope_scaling(const json& r, double max_positions, json& out, json& unknown);

}  // namespace attnkit::config
