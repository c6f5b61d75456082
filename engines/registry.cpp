// What engines and backends exist, which of them this build has, and their options.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engines/engine_factories.hpp"
#include "amd/engine_map.hpp"

namespace dmabench {

std::string OptionSpec::accepted() const {
  std::vector<std::string> parts;
  for (const auto& c : choices) parts.push_back(c.dump());
  if (positive_integer) parts.push_back(fmt::format("an integer from 1 to {}", max_integer));
  if (!prefix.empty()) parts.push_back(fmt::format("\"{}\"", prefix_help.empty() ? prefix + "..." : prefix_help));
  return fmt::format("{}", fmt::join(parts, " or "));
}

bool OptionSpec::accepts(const nlohmann::json& value) const {
  if (std::find(choices.begin(), choices.end(), value) != choices.end()) return true;
  if (!prefix.empty() && value.is_string() && value.get<std::string>().size() > prefix.size() &&
      value.get<std::string>().rfind(prefix, 0) == 0)
    return true;
  return positive_integer && value.is_number_integer() && value.get<long long>() >= 1 &&
         value.get<long long>() <= max_integer;
}

namespace {

// The DMA-Latte options shared by the copy-engine engines.
std::vector<OptionSpec> dma_options(bool batch) {
  std::vector<OptionSpec> o = {
      OptionSpec{.name = "schedule",
                 .help = batch ? "b2b: a stream's copies in one batch call with one completion (pcpy does not apply)"
                               : "pcpy: every copy its own completion (and, with streams auto, its own stream); "
                                 "b2b: a stream's copies back to back with one completion",
                 .default_value = "b2b",
                 .choices = {"pcpy", "b2b"}},
      OptionSpec{.name = "streams",
                 .help = "streams per GPU (auto: pcpy one per copy, b2b one); more streams than copies split each "
                         "copy into chunks",
                 .default_value = "auto",
                 .choices = {"auto"},
                 .positive_integer = true,
                 .max_integer = 16},
      OptionSpec{.name = "trigger",
                 .help = "enqueue: issued when the operation starts; host-flag: pre-posted behind a stream wait on a "
                         "host-mapped flag the host stores; gpu-flag: pre-posted behind a wait on a device flag a "
                         "kernel stores, timed on the GPU clock",
                 .default_value = "enqueue",
                 .choices = {"enqueue", "host-flag", "gpu-flag"}},
      OptionSpec{.name = "completion",
                 .help = "event: event / stream synchronize; flag-spin: the stream writes a host-mapped word the "
                         "host spins on; gpu-poll: a kernel polls words the streams write",
                 .default_value = "event",
                 .choices = {"event", "flag-spin", "gpu-poll"}},
      OptionSpec{.name = "graph",
                 .help = "the copies captured once into a CUDA graph per GPU, launched per operation",
                 .default_value = false,
                 .choices = {false, true}},
      OptionSpec{.name = "issue",
                 .help = "caller: the calling thread issues and waits for every GPU in turn; thread-per-gpu: one "
                         "spinning host thread per GPU issues its copies and waits for them, in parallel",
                 .default_value = "caller",
                 .choices = {"caller", "thread-per-gpu"}},
      OptionSpec{.name = "gate",
                 .help = "how pre-posted copies wait for their trigger: wait-value (a stream wait on the flag word) "
                         "or spin-kernel (a one-thread kernel polls the flag; the copies behind it start when it exits)",
                 .default_value = "wait-value",
                 .choices = {"wait-value", "spin-kernel"}},
  };
  o.push_back(OptionSpec{.name = "local",
                         .help = "same-GPU copies (the own block of allgather/alltoall): runtime = the runtime's copy, "
                                 "which CUDA runs on the SMs (it waits while kernels fill the GPU); peer-bounce = two "
                                 "copy-engine transfers through a buffer on the next GPU of the case (never needs SMs; "
                                 "moves the local bytes over the link twice)",
                         .default_value = "runtime",
                         .choices = {"runtime", "peer-bounce"}});
  if (batch)
    o.push_back(OptionSpec{.name = "overlap_hint",
                           .help = "the batch carries cudaMemcpyFlagPreferOverlapWithCompute / hipMemcpyFlagPreferOverlapWithCompute (true) or no flag (false)",
                           .default_value = true,
                           .choices = {true, false}});
  return o;
}

// The GPU backend this build has ("cuda" or "hip"); "cuda" in a host-only build.
std::string gpu_backend() {
#if defined(DMABENCH_HAVE_HIP)
  return "hip";
#else
  return "cuda";
#endif
}

std::vector<OptionSpec> hsa_options() {
  return {
      OptionSpec{.name = "engines",
                 .help = "which SDMA engine copies: runtime (hsa_amd_memory_async_copy, the runtime picks), preferred "
                         "(hsa_amd_memory_get_preferred_copy_engine per source/destination pair), round-robin (a GPU's "
                         "copies over its SDMA engines in turn), map:FILE (src,engine,dst lines); all but runtime go "
                         "through hsa_amd_memory_async_copy_on_engine",
                 .default_value = "runtime",
                 .choices = {"runtime", "preferred", "round-robin"},
                 .prefix = "map:",
                 .prefix_help = "map:FILE",
                 .check = [](const nlohmann::json& v) -> std::string {
                   const auto sel = amd::parse_selection(v.get<std::string>());
                   if (!sel || sel->policy != amd::Policy::map) return "";
                   try {
                     amd::load_engine_map(sel->map_file);
                   } catch (const std::exception& e) {
                     return e.what();
                   }
                   return "";
                 }},
      OptionSpec{.name = "schedule",
                 .help = "pcpy: every copy its own completion signal; b2b: a GPU's copies share one completion signal "
                         "(each copy decrements it)",
                 .default_value = "b2b",
                 .choices = {"pcpy", "b2b"}},
      OptionSpec{.name = "trigger",
                 .help = "enqueue: copies posted when the operation starts; host-flag: posted ahead (untimed) behind a "
                         "dependency signal the host releases with one store",
                 .default_value = "enqueue",
                 .choices = {"enqueue", "host-flag"}},
      OptionSpec{.name = "packet",
                 .help = "linear: one copy per transfer; broadcast: one command writes two destinations; swap: a "
                         "pairwise exchange in one command (both through hsa_amd_memory_async_batch_copy)",
                 .default_value = "linear",
                 .choices = {"linear", "broadcast", "swap"}},
  };
}

}  // namespace

const std::vector<EngineSpec>& engine_specs() {
  static const std::vector<EngineSpec> specs = {
      {"host", "host", "CPU threads, one per rank, memcpy between per-rank host buffers", {}, {"host"}},
      {"ce", gpu_backend(),
       "cudaMemcpyAsync / hipMemcpyAsync per copy on the issuing GPU's streams: the copy (DMA / SDMA) engines",
       dma_options(false), {"cuda", "hip"}},
      {"ce-batch", gpu_backend(),
       "one cudaMemcpyBatchAsync (CUDA >= 12.8) / hipMemcpyBatchAsync (HIP >= 7.1) per stream for all of a GPU's "
       "copies (stream order, prefer overlap with compute)",
       dma_options(true), {"cuda", "hip"}},
      {"sm", gpu_backend(), "a GPU-core copy kernel per issuing GPU, storing into peer memory over NVLink / xGMI",
       {OptionSpec{.name = "blocks",
                   .help = "thread blocks per launch, shared by the launch's transfers (auto: 2 per multiprocessor)",
                   .default_value = "auto",
                   .choices = {"auto"},
                   .positive_integer = true}},
       {"cuda", "hip"}},
      {"nccl", gpu_backend(),
       "NCCL (RCCL on AMD) over a single-process communicator: ncclAllGather, ncclAlltoAll (RCCL: ncclAllToAll), ncclSend/ncclRecv",
       {OptionSpec{.name = "graph",
                   .help = "the operation captured once into a CUDA / HIP graph per GPU, launched per operation",
                   .default_value = false,
                   .choices = {false, true}},
        OptionSpec{.name = "cta_policy",
                   .help = "zero: NCCL_CTA_POLICY_ZERO with ncclMemAlloc buffers registered as symmetric windows "
                           "(NCCL >= 2.28's copy-engine collectives; allgather and alltoall)",
                   .default_value = "default",
                   .choices = {"default", "zero"}}},
       {"cuda", "hip"}},
      {"hsa", "hip",
       "AMD only: HSA async copies on the SDMA engines (hsa_amd_memory_async_copy[_on_engine]), completion by spinning "
       "on the HSA completion signal",
       hsa_options(), {"hip"}},
  };
  return specs;
}

const EngineSpec* find_engine_spec(std::string_view name) {
  for (const auto& s : engine_specs())
    if (s.name == name) return &s;
  return nullptr;
}

std::unique_ptr<Engine> make_engine(std::string_view name, std::string* why_not) {
  if (name == "host") return make_host_engine();
#ifdef DMABENCH_HAVE_GPU
  if (name == "ce") return make_ce_engine();
  if (name == "ce-batch") return make_ce_batch_engine();
  if (name == "sm") return make_sm_engine();
#endif
#ifdef DMABENCH_HAVE_HSA
  if (name == "hsa") return make_hsa_engine();
#endif
#ifdef DMABENCH_HAVE_NCCL
  if (name == "nccl") return make_nccl_engine();
#endif
  if (why_not) {
    if (name == "nccl")
      *why_not = gpu_backend() == "hip" ? "this build has no RCCL (not found at configure time; Debian has no RCCL package)"
                                        : "this build has no NCCL (NCCL was not found at configure time)";
    else if (name == "hsa")
      *why_not = "this build has no hsa engine (AMD only: configure with HIP and the HSA runtime, -DDMABENCH_HIP=ON)";
    else
      *why_not = fmt::format("this build has no {} engine (configure with a CUDA compiler for the cuda backend or with "
                             "hipcc for the hip backend)",
                             name);
  }
  return nullptr;
}

std::vector<std::string> built_backends() {
#if defined(DMABENCH_HAVE_CUDA)
  return {"cuda", "host"};
#elif defined(DMABENCH_HAVE_HIP)
  return {"hip", "host"};
#else
  return {"host"};
#endif
}

std::unique_ptr<Backend> make_backend(std::string_view name, std::string* why_not) {
  if (name == "host") return make_host_backend();
  if (name == "cuda" || name == "hip") {
#ifdef DMABENCH_HAVE_GPU
    if (name == gpu_backend()) return make_gpu_backend(why_not);
#endif
    if (why_not)
      *why_not = name == "cuda" ? "this build has no cuda backend (no CUDA compiler at configure time)"
                                : "this build has no hip backend (no hipcc / HIP CMake package at configure time)";
    return nullptr;
  }
  if (why_not) *why_not = fmt::format("unknown backend '{}'", name);
  return nullptr;
}

}  // namespace dmabench
