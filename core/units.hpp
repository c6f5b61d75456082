#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "core/why_not.hpp"

namespace dmabench {

// The one reader of numbers given as text (flags, byte counts in configs, --set values): the whole text, decimal,
// through std::from_chars. A number past its type's range is "too large" here, a value the caller refuses as bad
// input naming its field; std::sto* threw std::out_of_range instead, which reached main as an internal error
// (`-b` with 309 digits: "fatal: stod", exit 3). Nothing else in the tree parses a user's number from text.
//   decimal_number: digits, optionally '.' and digits ("12", "1.5", ".5", "3."); no sign, exponent, hex, inf or nan.
//   whole_number:   digits only, at most 2^64 - 1.
// Why not: "not a decimal number" / "not a whole number" / "too large (...)".
Maybe<double> decimal_number(std::string_view text);
Maybe<std::uint64_t> whole_number(std::string_view text);

// Parses a byte count: a plain integer ("4096") or a number with a unit. Binary units:
// K, KiB, M, MiB, G, GiB, T, TiB (powers of 1024, K/M/G/T as in nccl-tests); B for bytes. KB, MB, GB, TB are
// refused as ambiguous (issue 52: they were powers of 1000 beside M's 1024, silently); the error names MiB and the bytes. Units are case-insensitive; a fractional number is accepted when the result is a
// whole number of bytes ("1.5KiB" = 1536). Throws InputError naming `field` on anything else.
std::uint64_t parse_bytes(std::string_view text, std::string_view field);

// The shortest exact form with a binary unit: 1073741824 -> "1GiB", 65536 -> "64KiB",
// 1536 -> "1536B" (the count before the unit is always an integer).
std::string format_bytes(std::uint64_t bytes);

}  // namespace dmabench
