#pragma once
// This program's reader of results files, for the levels merge (`--processes N` reads its processes' files,
// `--merge` the files it is given): a results file or its run's journal `<file>.journal` (bench/output/report.hpp
// writes both), read the way python/dmabench/reader.py `load` reads them, and checked for what the merge reads.
#include <cstddef>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

namespace dmabench::levels {

// A results document as read, and what stderr should say of how it was read ("" where nothing): a journal read in
// place of its results file, a torn last line left out.
struct ResultsRead {
  nlohmann::json doc;  // {"schema", "context", "results"}
  std::string note;
};

// The results document at `path`. A path ending in ".journal" is a journal, read as the document its header and
// records make (a torn last line left out: the run was killed while writing it). A results file with a journal beside
// it belongs to a run that has not finished (the file is rewritten every 2 s, the journal at every case): the journal
// is read instead where it holds more records, or where the results file cannot be read. Throws InputError "<path>:
// <what>" (one line) when a file cannot be read (missing, not a regular file, over 1 GiB, compressed), is not JSON,
// or is not a document check_results takes. Every file read is one of the run's inputs (core/read_file.hpp).
ResultsRead read_results(const std::string& path);

// Throws InputError naming the first field where `doc` is not a `dmabench/1` results document whose fields the merge
// reads have the types it reads (`results[3].latency_us.p50: expected a positive number, got 0`): `schema`, a
// `context` object (its `dmabench` an object where present), `results` a list of objects, each with `name` and
// `status` (ok, skipped or failed) strings, `reason` a string where present; an ok record's `latency_us` min ... stddev
// numbers >= 0 (p50 > 0), `algbw_GBps` and `busbw_GBps` numbers >= 0, `p50_interval_us` two numbers and `noise` a
// number where present, `sampling` where present an object with `samples` a positive integer and `seconds` a number.
// A subset of python/dmabench/schema.py check_document, which the Python commands apply to every file they read.
// `where(i)` names record i.
void check_results(const nlohmann::json& doc, const std::function<std::string(std::size_t)>& where);

}  // namespace dmabench::levels
