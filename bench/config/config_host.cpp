// Config host side: buffer layouts ("layout") and host memory ("host_memory"), and both written back.
#include <algorithm>
#include <functional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/config/config_parse.hpp"
#include "core/host_memory.hpp"
#include "core/units.hpp"

namespace dmabench::config_parse {
namespace {

constexpr std::uint64_t kMaxBlocks = 1 << 15;       // blocks per transfer (sm's grid takes one job per row)
constexpr std::uint64_t kMaxPoolSlots = 1 << 24;    // slots of a random pool (its permutation is built per case)

// What one layout of the entry's axes takes besides them.
struct LayoutTail {
  std::uint64_t stride = 0, pool = 0;
};

// The layout of blocks of `b` bytes, `n` per transfer (0: from the size), in order `o`, runs of `k`: checked against
// what its order needs (a stride that keeps runs apart, a pool that holds the runs).
Layout one_layout(Layout l, std::uint64_t b, std::uint64_t n, const std::string& o, std::uint64_t k, const LayoutTail& t,
                  const std::string& field) {
  l.block_bytes = b;
  l.count = n;
  l.run_blocks = k;
  l.order = o == "random" ? Layout::Order::random : o == "strided" ? Layout::Order::strided : Layout::Order::sequential;
  if (n && k > n)
    fail(field + ".run_blocks", fmt::format("runs of {} blocks are longer than the transfer's {} blocks", k, n));
  if (l.order == Layout::Order::strided) {
    if (!t.stride) fail(field + ".stride_bytes", "order \"strided\" needs stride_bytes (the distance between block starts)");
    if (t.stride < b * k)
      fail(field + ".stride_bytes", fmt::format("{} is less than {} (run_blocks {} x block_bytes {}): strided runs would overlap",
                                                format_bytes(t.stride), format_bytes(b * k), k, format_bytes(b)));
    l.stride_bytes = t.stride;
  }
  if (l.order == Layout::Order::random && t.pool) {
    if (t.pool < b * k)
      fail(field + ".pool_bytes", k == 1 ? fmt::format("{} is smaller than one block of {}", format_bytes(t.pool), format_bytes(b))
                                         : fmt::format("{} is smaller than one run of {} blocks of {}", format_bytes(t.pool), k,
                                                       format_bytes(b)));
    if (n && t.pool / (b * k) < (n + k - 1) / k)
      fail(field + ".pool_bytes", fmt::format("a pool of {} holds {} runs of {} blocks of {}, fewer than the blocks ({}) need",
                                              format_bytes(t.pool), t.pool / (b * k), k, format_bytes(b), n));
    if (t.pool / b > kMaxPoolSlots)
      fail(field + ".pool_bytes", fmt::format("a pool of {} has {} slots of {}; at most {} are accepted", format_bytes(t.pool),
                                              t.pool / b, format_bytes(b), kMaxPoolSlots));
    l.pool_bytes = t.pool;
  }
  return l;
}

// A list of counts (blocks, run_blocks) or one: an axis of whole numbers 1 to kMaxBlocks.
std::vector<std::uint64_t> count_axis(const json& v, const std::string& field) {
  return axis<std::uint64_t>(v, field, [](const json& x, const std::string& f) {
    return static_cast<std::uint64_t>(parse_int(x, f, 1, kMaxBlocks));
  });
}

// The fixed part of a blocks entry: its keys, kind, sides and seed (the axes are read by parse_layout_entry).
Layout blocks_base(const json& v, const std::string& field) {
  const std::vector<std::string> keys = {"kind", "block_bytes", "blocks", "order", "stride_bytes", "pool_bytes", "seed", "sides",
                                         "run_blocks"};
  for (const auto& [k, _] : v.items())
    if (std::find(keys.begin(), keys.end(), k) == keys.end())
      fail(field + "." + k, fmt::format("unknown key; accepted: {}", fmt::join(keys, ", ")));
  if (!v.contains("block_bytes")) fail(field + ".block_bytes", "missing; give the block size (e.g. \"32KiB\") or a list");
  Layout base;
  base.blocks = true;
  if (v.contains("sides")) {
    const json& x = v["sides"];
    if (x == "both") base.sides = Layout::Sides::both;
    else if (x == "src") base.sides = Layout::Sides::src;
    else if (x == "dst") base.sides = Layout::Sides::dst;
    else fail(field + ".sides", fmt::format("{} is not accepted; accepted: \"both\", \"src\", \"dst\"", show(x)));
  }
  if (v.contains("seed")) base.seed = static_cast<std::uint64_t>(parse_int(v["seed"], field + ".seed", 0, 1 << 30));
  return base;
}

// One "layout" entry: "contiguous", {"kind": "contiguous"} or {"kind": "blocks", "block_bytes", "blocks",
// "order", "stride_bytes", "pool_bytes", "seed", "sides", "run_blocks"}; lists in block_bytes, blocks, order,
// run_blocks and pool_bytes are axes.
std::vector<Layout> parse_layout_entry(const json& v, const std::string& field) {
  if (v.is_string() && v.get<std::string>() == "contiguous") return {Layout{}};
  if (!v.is_object())
    fail(field, fmt::format("expected \"contiguous\" or {{\"kind\": \"blocks\", \"block_bytes\": ...}}, got {}", show(v)));
  if (!v.contains("kind") || !v["kind"].is_string() || (v["kind"] != "blocks" && v["kind"] != "contiguous"))
    fail(field + ".kind", "expected \"contiguous\" or \"blocks\"");
  if (v["kind"] == "contiguous") {
    if (v.size() > 1) fail(field, "a contiguous layout takes no other keys");
    return {Layout{}};
  }
  const Layout base = blocks_base(v, field);
  const auto sizes = axis<std::uint64_t>(v["block_bytes"], field + ".block_bytes", parse_size);
  const auto counts = v.contains("blocks") ? count_axis(v["blocks"], field + ".blocks") : std::vector<std::uint64_t>{0};
  const auto runs = v.contains("run_blocks") ? count_axis(v["run_blocks"], field + ".run_blocks") : std::vector<std::uint64_t>{1};
  const auto orders = v.contains("order") ? axis<std::string>(v["order"], field + ".order",
                                                                [](const json& x, const std::string& f) {
                                                                  if (x != "sequential" && x != "strided" && x != "random")
                                                                    fail(f, fmt::format("{} is not accepted; accepted: \"sequential\", \"strided\", \"random\"", show(x)));
                                                                  return x.get<std::string>();
                                                                })
                                          : std::vector<std::string>{"sequential"};
  LayoutTail tail;
  tail.stride = v.contains("stride_bytes") ? parse_size(v["stride_bytes"], field + ".stride_bytes") : 0;
  const auto pools = v.contains("pool_bytes") ? axis<std::uint64_t>(v["pool_bytes"], field + ".pool_bytes", parse_size)
                                              : std::vector<std::uint64_t>{0};
  const auto has = [&](const char* o) { return std::find(orders.begin(), orders.end(), o) != orders.end(); };
  if (tail.stride && !has("strided")) fail(field + ".stride_bytes", "belongs to order \"strided\"");
  if (v.contains("pool_bytes") && !has("random")) fail(field + ".pool_bytes", "belongs to order \"random\"");
  if (runs != std::vector<std::uint64_t>{1} && has("sequential"))
    fail(field + ".run_blocks", "belongs to orders \"strided\" and \"random\" (sequential blocks are all one run)");
  std::vector<Layout> out;
  for (std::uint64_t pool : pools)
    for (std::uint64_t b : sizes)
      for (std::uint64_t n : counts)
        for (const std::string& o : orders)
          for (std::uint64_t k : runs) {
            tail.pool = pool;
            out.push_back(one_layout(base, b, n, o, k, tail, field));
          }
  return out;
}

}  // namespace

std::vector<Layout> parse_layouts(const json& v) {
  const json list = v.is_array() ? v : json::array({v});
  if (list.empty()) fail("layout", "the list is empty");
  std::vector<Layout> out;
  for (std::size_t i = 0; i < list.size(); ++i)
    for (const Layout& l : parse_layout_entry(list[i], v.is_array() ? fmt::format("layout[{}]", i) : "layout")) {
      if (std::find(out.begin(), out.end(), l) != out.end()) fail("layout", "a layout is listed twice");
      out.push_back(l);
    }
  if (out.size() > kMaxVariants) fail("layout", fmt::format("more than {} layouts", kMaxVariants));
  return out;
}

// "host_memory": {"kind": kind | [kinds] | "all", "numa": "local" | "remote" | node | "all" | [...]}
std::vector<Location> parse_host(const json& v) {
  if (!v.is_object()) fail("host_memory", fmt::format("expected {{\"kind\": ..., \"numa\": ...}}, got {}", show(v)));
  for (const auto& [k, _] : v.items())
    if (k != "kind" && k != "numa") fail("host_memory." + k, "unknown key; accepted: kind, numa");
  std::vector<std::string> kind_names;
  for (HostKind k : all_host_kinds()) kind_names.emplace_back(to_string(k));
  std::vector<HostKind> kinds = {HostKind::pinned};
  if (v.contains("kind")) {
    kinds.clear();
    for (const auto& name : parse_names(v["kind"], "host_memory.kind", kind_names))
      kinds.push_back(all_host_kinds()[std::find(kind_names.begin(), kind_names.end(), name) - kind_names.begin()]);
  }
  std::vector<NumaRequest> numas = {NumaRequest{}};
  if (v.contains("numa")) {
    numas.clear();
    const json list = v["numa"].is_array() ? v["numa"] : json::array({v["numa"]});
    if (list.empty()) fail("host_memory.numa", "the list is empty");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string f = v["numa"].is_array() ? fmt::format("host_memory.numa[{}]", i) : "host_memory.numa";
      const json& x = list[i];
      std::vector<NumaRequest> add;
      if (x == "local") add.push_back({NumaRequest::Mode::local, -1});
      else if (x == "remote") add.push_back({NumaRequest::Mode::remote, -1});
      else if (x == "all")
        for (int n : hostmem::nodes()) add.push_back({NumaRequest::Mode::node, n});
      else if (x.is_number_integer()) {
        const int n = parse_int(x, f, 0, 1023);
        if (!hostmem::node_exists(n))
          fail(f, fmt::format("NUMA node {} does not exist on this machine; its nodes: {}", n, fmt::join(hostmem::nodes(), ", ")));
        add.push_back({NumaRequest::Mode::node, n});
      } else {
        fail(f, fmt::format("{} is not accepted; accepted: \"local\", \"remote\", a node number, \"all\"", show(x)));
      }
      for (const auto& r : add) {
        if (std::find(numas.begin(), numas.end(), r) != numas.end()) fail("host_memory.numa", fmt::format("{} is listed twice", r.label()));
        numas.push_back(r);
      }
    }
  }
  std::vector<Location> out;
  for (HostKind k : kinds)
    for (const auto& n : numas) {
      Location l = host_location();
      l.kind = k;
      l.numa = n;
      out.push_back(l);
    }
  return out;
}

json layouts_json(const std::vector<Layout>& layouts) {
  json out = json::array();
  for (const Layout& l : layouts) out.push_back(to_json(l));
  return out;
}

json host_json(const std::vector<Location>& host) {
  json kinds = json::array(), numas = json::array();
  for (const Location& l : host) {
    if (std::find(kinds.begin(), kinds.end(), json(to_string(l.kind))) == kinds.end()) kinds.push_back(to_string(l.kind));
    if (std::find(numas.begin(), numas.end(), json(l.numa.label())) == numas.end()) numas.push_back(l.numa.label());
  }
  return {{"kind", kinds}, {"numa", numas}};
}

}  // namespace dmabench::config_parse
