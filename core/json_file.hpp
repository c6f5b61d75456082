#pragma once
// Writing a JSON document so that readers never see a torn file: the results file (bench/report),
// the packet dumps and the power trace (power/meter) all write through this. Files are only ever
// created new (O_CREAT|O_EXCL|O_NOFOLLOW, under a name no other process can guess): a link or a
// file planted where a temporary goes is never followed, truncated or removed.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace dmabench {

// Writes `doc` to `path` through a temporary file in the same directory and rename(2), so readers
// see the old or the new file, never a torn one; rename replaces whatever name is at `path` (a link
// there is replaced, its target never written). Creates missing parent directories.
// Throws std::runtime_error naming the path on failure.
void write_json_atomically(const std::string& path, const nlohmann::json& doc);
// The same for text that is already a JSON document.
void write_text_atomically(const std::string& path, const std::string& text);

// Creates a new file "<path>.tmp.<6 random letters and digits>" for writing (0644 less the umask),
// with O_CREAT|O_EXCL|O_NOFOLLOW: never an existing file, never through a link. Returns its
// descriptor and sets `tmp` to its name; throws std::runtime_error naming it on failure.
int create_temporary(const std::string& path, std::string& tmp);
// The characters create_temporary() adds to a name: ".tmp." and 6 more.
inline constexpr std::size_t kTemporarySuffixBytes = 11;

// Text for a JSON string from bytes that need not be UTF-8 (paths and arguments are bytes): every
// byte that is not part of a valid UTF-8 sequence becomes the four characters \xNN.
std::string escape_non_utf8(std::string_view bytes);

// JSON text that never throws on a string that is not UTF-8 (such bytes become U+FFFD): the last
// guard of every file written; strings from outside go through escape_non_utf8 first.
std::string dump_json(const nlohmann::json& doc, int indent = -1);

}  // namespace dmabench
