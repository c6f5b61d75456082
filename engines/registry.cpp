// What engines and backends exist, which of them this build has, and their options.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engines/engine_factories.hpp"

namespace dmabench {

std::string OptionSpec::accepted() const {
  std::vector<std::string> parts;
  for (const auto& c : choices) parts.push_back(c.dump());
  if (positive_integer) parts.push_back(fmt::format("an integer from 1 to {}", max_integer));
  return fmt::format("{}", fmt::join(parts, " or "));
}

bool OptionSpec::accepts(const nlohmann::json& value) const {
  if (std::find(choices.begin(), choices.end(), value) != choices.end()) return true;
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
                           .help = "the batch carries cudaMemcpyFlagPreferOverlapWithCompute (true) or no flag (false)",
                           .default_value = true,
                           .choices = {true, false}});
  return o;
}

}  // namespace

const std::vector<EngineSpec>& engine_specs() {
  static const std::vector<EngineSpec> specs = {
      {"host", "host", "CPU threads, one per rank, memcpy between per-rank host buffers", {}},
      {"ce", "cuda", "cudaMemcpyAsync per copy on the issuing GPU's streams: the copy (DMA) engines", dma_options(false)},
      {"ce-batch", "cuda", "one cudaMemcpyBatchAsync per stream for all of a GPU's copies (stream order, prefer overlap with compute)",
       dma_options(true)},
      {"sm", "cuda", "a GPU-core copy kernel per issuing GPU, storing into peer memory over NVLink",
       {OptionSpec{.name = "blocks",
                   .help = "thread blocks per launch, shared by the launch's transfers (auto: 2 per multiprocessor)",
                   .default_value = "auto",
                   .choices = {"auto"},
                   .positive_integer = true}}},
      {"nccl", "cuda", "NCCL over a single-process communicator: ncclAllGather, ncclAlltoAll, ncclSend/ncclRecv",
       {OptionSpec{.name = "graph",
                   .help = "the operation captured once into a CUDA graph per GPU, launched per operation",
                   .default_value = false,
                   .choices = {false, true}},
        OptionSpec{.name = "cta_policy",
                   .help = "zero: NCCL_CTA_POLICY_ZERO with ncclMemAlloc buffers registered as symmetric windows "
                           "(NCCL's copy-engine collectives; allgather and alltoall)",
                   .default_value = "default",
                   .choices = {"default", "zero"}}}},
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
#ifdef DMABENCH_HAVE_CUDA
  if (name == "ce") return make_ce_engine();
  if (name == "ce-batch") return make_ce_batch_engine();
  if (name == "sm") return make_sm_engine();
#endif
#ifdef DMABENCH_HAVE_NCCL
  if (name == "nccl") return make_nccl_engine();
#endif
  if (why_not) {
    if (name == "nccl")
      *why_not = "this build has no NCCL (NCCL was not found at configure time)";
    else
      *why_not = fmt::format("this build has no {} engine (configure with a CUDA compiler for the cuda backend)", name);
  }
  return nullptr;
}

std::vector<std::string> built_backends() {
#ifdef DMABENCH_HAVE_CUDA
  return {"cuda", "host"};
#else
  return {"host"};
#endif
}

std::unique_ptr<Backend> make_backend(std::string_view name, std::string* why_not) {
  if (name == "host") return make_host_backend();
  if (name == "cuda") {
#ifdef DMABENCH_HAVE_CUDA
    return make_cuda_backend(why_not);
#else
    if (why_not) *why_not = "this build has no cuda backend (no CUDA compiler at configure time)";
    return nullptr;
#endif
  }
  if (why_not) *why_not = fmt::format("unknown backend '{}'", name);
  return nullptr;
}

}  // namespace dmabench
