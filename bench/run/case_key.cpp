// A case's identity across runs: python/dmabench/case_key.json (embedded at build time as kCaseKeySpec), the one
// definition keys.py reads as well; this file interprets its rules (the file says what each rule does).
#include <filesystem>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/run/record.hpp"
#include "case_key_spec.hpp"

namespace dmabench {

using json = nlohmann::json;

namespace {

const json& key_parts() {
  static const json parts = json::parse(kCaseKeySpec).at("parts");
  return parts;
}

// The field's object less the part's `drop` keys, unless its kind is the plain one (then null).
json unless_plain(const json& part, const json& value) {
  if (!value.is_object() || value.value("kind", part.at("kind_absent")) == part.at("plain")) return json();
  json out = value;
  for (const auto& k : part.at("drop")) out.erase(k.get<std::string>());
  return out;
}

// The part's `keys` of the field's object: an object (pick_object, with `basename` keys cut to their file name) or
// an array in key order (pick); null (or nothing, for an optional part) when the field holds no object.
json pick(const json& part, const json& value, bool as_object) {
  if (!value.is_object()) return part.value("optional", false) ? json(json::value_t::discarded) : json();
  json out = json::object();
  for (const auto& k : part.at("keys")) out[k.get<std::string>()] = value.value(k.get<std::string>(), json());
  for (const auto& k : part.value("basename", json::array())) {
    json& v = out[k.get<std::string>()];
    v = v.is_string() && !v.get<std::string>().empty()
            ? json(std::filesystem::path(v.get<std::string>()).filename().string())
            : json();
  }
  if (as_object) return out;
  json array = json::array();
  for (const auto& k : part.at("keys")) array.push_back(out[k.get<std::string>()]);
  return array;
}

json key_value(const json& part, const json& record) {
  const std::string field = part.at("field").get<std::string>(), rule = part.at("rule").get<std::string>();
  const json value = record.contains(field) ? record[field] : part.value("absent", json());
  if (rule == "value") return value;
  if (rule == "true") return value.is_boolean() && value.get<bool>();
  if (rule == "after") {
    const std::string name = value.is_string() ? value.get<std::string>() : std::string();
    const std::string marker = part.at("marker").get<std::string>();
    const auto at = name.find(marker);
    return at == std::string::npos ? std::string() : name.substr(at + marker.size());
  }
  if (rule == "unless") return unless_plain(part, value);
  if (rule == "pick" || rule == "pick_object") return pick(part, value, rule == "pick_object");
  throw std::logic_error("case_key.json: unknown rule '" + rule + "'");
}

}  // namespace

json case_key(const json& r) {
  json key = json::object();
  for (const auto& part : key_parts()) {
    json value = key_value(part, r);
    if (!value.is_discarded()) key[part.at("part").get<std::string>()] = std::move(value);
  }
  return key;
}

}  // namespace dmabench
