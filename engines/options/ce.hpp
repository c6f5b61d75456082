#pragma once
// The options of ce and ce-batch (DMA-Latte's features for the copy engines): their table, with
// each option's help and default, and the typed options engines/ce.cpp runs with. Compiled in every
// build, so that the registry describes these engines where they are not built too.
#include <vector>

#include "engines/options/option.hpp"

namespace dmabench {

enum class Schedule { pcpy, b2b };
enum class Trigger { enqueue, host_flag, gpu_flag };
enum class Completion { event, flag_spin, gpu_poll };
enum class Gate { wait_value, spin_kernel };

struct CeOptions {
  bool batch;  // ce-batch
  Schedule schedule;
  int streams;  // 0: auto
  Trigger trigger;
  Completion completion;
  bool graph;
  bool thread_per_gpu;  // issue
  Gate gate;
  bool peer_bounce;   // local: same-GPU copies as two copy-engine transfers through a peer's buffer
  bool overlap_hint;  // ce-batch: prefer overlap with compute (false for ce, which has no such option)
  bool coalesce;      // adjacent blocks (source and destination both continuing the previous one) as one copy
  bool event_before;  // ce-batch: an event recorded on each lane just before its batch (false for ce)

  // From validated options (every option of the table present); throws std::logic_error otherwise.
  static CeOptions from(const Options& options, bool batch);
  bool needs_memops() const { return trigger != Trigger::enqueue || completion != Completion::event; }
};

// The option table of ce (batch = false) or ce-batch (batch = true).
std::vector<OptionSpec> ce_option_specs(bool batch);

}  // namespace dmabench
