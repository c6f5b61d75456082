// The option table of ce and ce-batch and its typed reading (engines/options/ce.hpp).
#include "engines/options/ce.hpp"

#include "engines/options/option_table.hpp"

namespace dmabench {
namespace {

constexpr Named<Schedule> kSchedules[] = {{"pcpy", Schedule::pcpy}, {"b2b", Schedule::b2b}};
constexpr Named<Trigger> kTriggers[] = {
    {"enqueue", Trigger::enqueue}, {"host-flag", Trigger::host_flag}, {"gpu-flag", Trigger::gpu_flag}};
constexpr Named<Completion> kCompletions[] = {
    {"event", Completion::event}, {"flag-spin", Completion::flag_spin}, {"gpu-poll", Completion::gpu_poll}};
constexpr Named<bool> kIssues[] = {{"caller", false}, {"thread-per-gpu", true}};  // thread_per_gpu
constexpr Named<Gate> kGates[] = {{"wait-value", Gate::wait_value}, {"spin-kernel", Gate::spin_kernel}};
constexpr Named<bool> kLocals[] = {{"runtime", false}, {"peer-bounce", true}};  // peer_bounce

const char* engine_name(bool batch) { return batch ? "ce-batch" : "ce"; }

}  // namespace

std::vector<OptionSpec> ce_option_specs(bool batch) {
  std::vector<OptionSpec> o = {
      OptionSpec{.name = "schedule",
                 .help = batch ? "b2b: a stream's copies in one batch call with one completion (pcpy does not apply)"
                               : "pcpy: every copy its own completion (and, with streams auto, its own stream); "
                                 "b2b: a stream's copies back to back with one completion",
                 .default_value = "b2b",
                 .choices = names_of(kSchedules)},
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
                 .choices = names_of(kTriggers)},
      OptionSpec{.name = "completion",
                 .help = "event: event / stream synchronize; flag-spin: the stream writes a host-mapped word the "
                         "host spins on; gpu-poll: a kernel polls words the streams write",
                 .default_value = "event",
                 .choices = names_of(kCompletions)},
      OptionSpec{.name = "graph",
                 .help = "the copies captured once into a CUDA graph per GPU, launched per operation",
                 .default_value = false,
                 .choices = {false, true}},
      OptionSpec{.name = "issue",
                 .help = "caller: the calling thread issues and waits for every GPU in turn; thread-per-gpu: one "
                         "spinning host thread per GPU issues its copies and waits for them, in parallel",
                 .default_value = "caller",
                 .choices = names_of(kIssues)},
      OptionSpec{.name = "gate",
                 .help = "how pre-posted copies wait for their trigger: wait-value (a stream wait on the flag word: "
                         "cuStreamWaitValue32 / hipStreamWaitValue32) or spin-kernel (a one-thread kernel polls the "
                         "flag; the copies behind it start when it exits)",
                 .default_value = "wait-value",
                 .choices = names_of(kGates)},
      OptionSpec{.name = "local",
                 .help = "same-GPU copies (the own block of allgather/alltoall): runtime = the runtime's copy, "
                         "which CUDA runs on the SMs (it waits while kernels fill the GPU); peer-bounce = two "
                         "copy-engine transfers through a buffer on the next GPU of the case (never needs SMs; "
                         "moves the local bytes over the link twice)",
                 .default_value = "runtime",
                 .choices = names_of(kLocals)},
  };
  o.push_back(OptionSpec{.name = "coalesce",
                         .help = "block layouts: false = one copy per block; true = runs of adjacent blocks whose source "
                                 "and destination both continue the previous block's are one copy each",
                         .default_value = false,
                         .choices = {false, true}});
  if (batch)
    o.push_back(OptionSpec{.name = "overlap_hint",
                           .help = "the batch carries cudaMemcpyFlagPreferOverlapWithCompute / "
                                   "hipMemcpyFlagPreferOverlapWithCompute (true) or no flag (false)",
                           .default_value = true,
                           .choices = {true, false}});
  if (batch)
    o.push_back(OptionSpec{.name = "event_before",
                           .help = "an event is recorded on each lane just before its batch (true) or not (false). "
                                   "Without one, an h2d batch issued to an idle, synchronized stream costs 2.4-5x the "
                                   "CPU time in the call on CUDA 13 / driver 580 (1024 x 4 KiB: ~1050 against ~430 us; "
                                   "16 KiB: ~2000 against ~430; d2h is not affected; results/LAB-NOTES.md, 2026-12-06)",
                           .default_value = true,
                           .choices = {true, false}});
  return o;
}

CeOptions CeOptions::from(const Options& o, bool batch) {
  const char* e = engine_name(batch);
  return CeOptions{.batch = batch,
                    .schedule = option_named(o, e, "schedule", kSchedules),
                    .streams = option_count(o, e, "streams", "auto"),
                    .trigger = option_named(o, e, "trigger", kTriggers),
                    .completion = option_named(o, e, "completion", kCompletions),
                    .graph = option_flag(o, e, "graph"),
                    .thread_per_gpu = option_named(o, e, "issue", kIssues),
                    .gate = option_named(o, e, "gate", kGates),
                    .peer_bounce = option_named(o, e, "local", kLocals),
                    .overlap_hint = batch && option_flag(o, e, "overlap_hint"),
                    .coalesce = option_flag(o, e, "coalesce"),
                    .event_before = batch && option_flag(o, e, "event_before")};
}

}  // namespace dmabench
