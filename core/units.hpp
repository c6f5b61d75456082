#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace dmabench {

// Parses a byte count: a plain integer ("4096") or a number with a unit. Binary units:
// K, KiB, M, MiB, G, GiB, T, TiB (powers of 1024); decimal units: KB, MB, GB, TB (powers of 1000);
// B for bytes. Units are case-insensitive; a fractional number is accepted when the result is a
// whole number of bytes ("1.5KiB" = 1536). Throws InputError naming `field` on anything else.
std::uint64_t parse_bytes(std::string_view text, std::string_view field);

// The shortest exact form with a binary unit: 1073741824 -> "1GiB", 65536 -> "64KiB",
// 1536 -> "1536B" (the count before the unit is always an integer).
std::string format_bytes(std::uint64_t bytes);

}  // namespace dmabench
