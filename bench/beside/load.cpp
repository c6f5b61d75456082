#include "bench/beside/load.hpp"

#include <fmt/format.h>

#include "core/units.hpp"
#include "engines/backend.hpp"
#include "engines/registry.hpp"

namespace dmabench::beside {

std::unique_ptr<Load> make_host_load(const Spec& spec, const std::vector<int>& ranks);
#ifdef DMABENCH_HAVE_GPU
WhyNot gpu_unsupported(const Spec& spec);
std::unique_ptr<Load> make_gpu_load(const Spec& spec, const std::vector<int>& devices);
#endif

std::string Spec::label() const {
  if (kind == "gemm") return fmt::format("gemm-{}-{}x{}x{}", dtype, m, n, k);
  if (kind == "transfer")
    return fmt::format("transfer-{}-{}-{}{}", pattern, variant_label(variant.engine, variant.options), format_bytes(bytes),
                       host.kind == HostKind::pinned ? std::string() : fmt::format("-{}", to_string(host.kind)));
  return fmt::format("{}-{}", kind, format_bytes(bytes));
}

nlohmann::json Spec::to_json() const {
  if (kind == "gemm") return {{"kind", kind}, {"m", m}, {"n", n}, {"k", k}, {"dtype", dtype}};
  if (kind == "transfer")
    return {{"kind", kind},       {"pattern", pattern}, {"bytes", bytes}, {"engine", variant.engine}, {"options", variant.options},
            {"host_memory", {{"kind", to_string(host.kind)}, {"numa", host.numa.label()}}}, {"pipeline_depth", depth}};
  return {{"kind", kind}, {"bytes", bytes}};
}

double Spec::work_per_launch() const {
  if (kind == "gemm") return 2.0 * m * n * k;
  if (kind == "transfer") return static_cast<double>(depth) * static_cast<double>(bytes);
  return 2.0 * static_cast<double>(bytes);
}

std::string Spec::rate_unit() const { return kind == "gemm" ? "TFLOP/s" : "GB/s"; }

double Spec::rate(double launches, double ms, std::optional<double> work) const {
  const double per_s = work.value_or(work_per_launch()) * launches / (ms * 1e-3);
  return kind == "gemm" ? per_s / 1e12 : per_s / 1e9;
}

WhyNot unsupported(const Backend& backend, const Spec& spec) {
  if (spec.kind == "transfer") return std::nullopt;  // its engine says, when the workload is made
  if (backend.name() == "host") {
    if (spec.kind != "stream")
      return fmt::format("compute '{}' needs a GPU backend; the host backend has 'stream' and 'transfer'", spec.kind);
    return std::nullopt;
  }
#ifdef DMABENCH_HAVE_GPU
  return gpu_unsupported(spec);
#else
  return fmt::format("no compute workload for the {} backend", backend.name());
#endif
}

Maybe<std::unique_ptr<Load>> make_load(Backend& backend, const Spec& spec, const std::vector<int>& devices,
                                       const TransferMaker& transfer) {
  if (auto why = unsupported(backend, spec)) return Maybe<std::unique_ptr<Load>>::no(*why);
  if (spec.kind == "transfer") {
    if (!transfer) return Maybe<std::unique_ptr<Load>>::no("a transfer workload is made by the case runner (none given)");
    return transfer(backend, spec, devices);
  }
#ifdef DMABENCH_HAVE_GPU
  if (backend.name() != "host") return make_gpu_load(spec, devices);
#endif
  return make_host_load(spec, devices);  // unsupported() refuses every other backend of this build
}

}  // namespace dmabench::beside
