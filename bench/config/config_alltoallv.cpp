// Config "alltoallv": the routings of the alltoallv pattern, each key a value or a list (an axis).
#include <charconv>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/config/config_parse.hpp"
#include "patterns/routing.hpp"

namespace dmabench::config_parse {
namespace {

constexpr std::size_t kMaxRoutings = 4096;
constexpr std::uint64_t kMaxTokenBytes = std::uint64_t{1} << 30;
constexpr int kMaxTokens = 1 << 20;

const std::vector<std::string>& keys() {
  static const std::vector<std::string> k = {"splits", "token_bytes", "tokens_per_rank", "topk", "experts",
                                             "seed",   "direction",   "tokens",          "ranks"};
  return k;
}

// A decimal number in [lo, hi], all of `text`.
double number_in(const std::string& text, double lo, double hi, const std::string& field, const std::string& what) {
  double x = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(x) || x < lo || x > hi)
    fail(field, fmt::format("'{}' is not {} from {} to {}", text, what, lo, hi));
  return x;
}

// "uniform", "zipf:S", "hot:P" or "file:PATH" (every step of the trace, one routing each).
std::vector<Splits> parse_splits_entry(const json& v, const std::string& field, const std::string& base_dir) {
  const std::string accepted =
      "accepted: \"uniform\", \"zipf:S\" (Zipf exponent S, 0 to 10), \"hot:P\" (a share P of tokens, 0 to 1, picks one hot "
      "expert) or \"file:PATH\" (a trace of token counts; a relative PATH is read from the config file's directory)";
  if (!v.is_string()) fail(field, fmt::format("expected a string, got {}; {}", show(v), accepted));
  const std::string s = v.get<std::string>();
  Splits out;
  if (s == "uniform") return {out};
  const std::size_t colon = s.find(':');
  const std::string kind = s.substr(0, colon), arg = colon == std::string::npos ? "" : s.substr(colon + 1);
  if (colon == std::string::npos || arg.empty()) fail(field, fmt::format("'{}' is not accepted; {}", s, accepted));
  if (kind == "zipf") {
    out.kind = Splits::Kind::zipf;
    out.skew = number_in(arg, 0, 10, field, "a Zipf exponent");
    return {out};
  }
  if (kind == "hot") {
    out.kind = Splits::Kind::hot;
    out.skew = number_in(arg, 0, 1, field, "a share");
    return {out};
  }
  if (kind != "file") fail(field, fmt::format("'{}' is not accepted; {}", s, accepted));
  out.kind = Splits::Kind::file;
  out.path = arg[0] == '/' || base_dir.empty() ? arg : (base_dir.back() == '/' ? base_dir : base_dir + "/") + arg;
  std::vector<Splits> steps;
  const auto& trace = trace_steps(out.path, field);  // read and checked now: a bad file is bad input before anything runs
  for (std::size_t k = 0; k < trace.size(); ++k) {
    out.step = static_cast<int>(k);
    steps.push_back(out);
  }
  return steps;
}

template <class T>
std::vector<T> values(const json& doc, const std::string& key, T fallback,
                      const std::function<T(const json&, const std::string&)>& one) {
  if (!doc.contains(key)) return {fallback};
  return axis<T>(doc[key], "alltoallv." + key, one);
}

// The "splits" axis: a value or a list of them, none listed twice ("uniform" without the key).
std::vector<Splits> splits_axis(const json& v, const std::string& base_dir) {
  std::vector<Splits> splits;
  if (v.contains("splits")) {
    const json& s = v["splits"];
    const std::vector<json> items = s.is_array() ? std::vector<json>(s.begin(), s.end()) : std::vector<json>{s};
    if (items.empty()) fail("alltoallv.splits", "the list is empty");
    for (std::size_t i = 0; i < items.size(); ++i)
      for (Splits& x : parse_splits_entry(items[i], s.is_array() ? fmt::format("alltoallv.splits[{}]", i) : "alltoallv.splits", base_dir)) {
        if (std::find(splits.begin(), splits.end(), x) != splits.end())
          fail("alltoallv.splits", fmt::format("{} is listed twice", show(items[i])));
        splits.push_back(std::move(x));
      }
  } else {
    splits.push_back(Splits{});
  }
  return splits;
}

}  // namespace

std::vector<Routing> parse_routings(const json& v, const std::string& base_dir) {
  if (!v.is_object()) fail("alltoallv", fmt::format("expected an object ({}), got {}", fmt::join(keys(), ", "), show(v)));
  for (const auto& [k, _] : v.items())
    if (std::find(keys().begin(), keys().end(), k) == keys().end())
      fail("alltoallv." + k, fmt::format("unknown key; accepted: {}", fmt::join(keys(), ", ")));
  const std::vector<Splits> splits = splits_axis(v, base_dir);
  const Routing d;
  const auto token_bytes = values<std::uint64_t>(v, "token_bytes", d.token_bytes, [](const json& x, const std::string& f) {
    const std::uint64_t b = parse_size(x, f);
    if (b > kMaxTokenBytes) fail(f, fmt::format("{} bytes; a token is at most 1 GiB", b));
    return b;
  });
  const auto tokens = values<std::uint64_t>(v, "tokens_per_rank", d.tokens_per_rank, [](const json& x, const std::string& f) {
    return static_cast<std::uint64_t>(parse_int(x, f, 1, kMaxTokens));
  });
  const auto topk = values<int>(v, "topk", d.topk, [](const json& x, const std::string& f) { return parse_int(x, f, 1, 1024); });
  const auto experts = values<int>(v, "experts", d.experts, [](const json& x, const std::string& f) {
    if (x.is_string() && x.get<std::string>() == "ranks") return 0;
    return parse_int(x, f, 1, 1 << 16);
  });
  const auto seeds = values<std::uint64_t>(v, "seed", d.seed, [](const json& x, const std::string& f) {
    if (!x.is_number_unsigned()) fail(f, fmt::format("expected an integer >= 0, got {}", show(x)));
    return x.get<std::uint64_t>();
  });
  const auto directions = values<Routing::Direction>(v, "direction", d.direction, [](const json& x, const std::string& f) {
    if (x == "dispatch") return Routing::Direction::dispatch;
    if (x == "combine") return Routing::Direction::combine;
    fail(f, fmt::format("{} is not accepted; accepted: \"dispatch\", \"combine\"", show(x)));
  });
  const auto scattered = values<bool>(v, "tokens", d.scattered, [](const json& x, const std::string& f) {
    if (x == "packed") return false;
    if (x == "scattered") return true;
    fail(f, fmt::format("{} is not accepted; accepted: \"packed\" (one transfer per pair), \"scattered\" (one per token)", show(x)));
  });
  const auto ranks = values<int>(v, "ranks", d.ranks, [](const json& x, const std::string& f) {
    if (x.is_string() && x.get<std::string>() == "devices") return 0;
    return parse_int(x, f, 1, 4096);
  });
  std::uint64_t n = splits.size();
  for (std::size_t axis_size : {token_bytes.size(), tokens.size(), topk.size(), experts.size(), seeds.size(), directions.size(),
                                scattered.size(), ranks.size()}) {
    n *= axis_size;
    if (n > kMaxRoutings)
      fail("alltoallv", fmt::format("its lists make more than {} routings; split the sweep", kMaxRoutings));
  }
  std::vector<Routing> out;
  for (const Splits& s : splits)
    for (int r : ranks)
      for (int e : experts)
        for (int k : topk)
          for (std::uint64_t b : token_bytes)
            for (std::uint64_t t : tokens)
              for (Routing::Direction dir : directions)
                for (bool sc : scattered)
                  for (std::uint64_t seed : seeds)
                    out.push_back(Routing{.splits = s, .token_bytes = b, .tokens_per_rank = t, .topk = k, .experts = e,
                                          .seed = seed, .direction = dir, .scattered = sc, .ranks = r});
  return out;
}

json routings_json(const std::vector<Routing>& routings) {
  json out = json::array();
  for (const Routing& r : routings) out.push_back(r.to_json());
  return out;
}

}  // namespace dmabench::config_parse
