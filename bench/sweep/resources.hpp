#pragma once
// What the sweep makes once and lends to its cases (bench/sweep/sweep.cpp): the engines, the compute workload of
// overlap cases, the buffer pool's idle limit; and a case's packet dump. Inside bench/sweep/ only.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/beside/load.hpp"
#include "bench/cases/cases.hpp"
#include "bench/run/run_case.hpp"
#include "core/why_not.hpp"
#include "engines/backend.hpp"
#include "engines/buffer_pool.hpp"
#include "engines/engine.hpp"

namespace dmabench::sweep {

// The compute workload of overlap cases: one at a time, reused while consecutive cases need the
// same workload on the same devices (cases of one sweep run in order).
class Workloads {
 public:
  explicit Workloads(Backend& backend) : backend_(backend) {}
  beside::Load& get(const beside::Spec& spec, const std::vector<int>& devices);

 private:
  Backend& backend_;
  std::string key_;
  std::unique_ptr<beside::Load> load_;
};

// Engines live for the whole sweep (communicators are set up once); engines of another backend
// are not created (their cases are skipped). Engine name -> engine, or the reason it is missing.
struct Engines {
  std::map<std::string, std::unique_ptr<Engine>> made;
  std::map<std::string, std::string> missing;
};
Engines make_engines(const std::vector<Case>& cases, const Backend& backend);

// Why the case will be skipped whatever the machine does (CaseExecution::static_skip_reason), known before it runs.
WhyNot static_skip(const Case& c, Engines& engines, Backend& backend);

// How many bytes the sweep's buffer pool keeps idle in a place's memory: half of the host's, half of a GPU's.
BufferPool::IdleLimit idle_limit(const Backend& backend);

// --packets DIR: the case's packet dump as DIR/packet_file_name() (results/SCHEMA.md, "Packet dumps"); nothing for
// cases without one.
void write_packet_dump(const std::string& dir, const CaseExecution& e);

}  // namespace dmabench::sweep
