// Reading a program, a raw fuzzer input or a list the user named: a regular file of bounded size,
// or one line saying why not. A directory, a FIFO or a device (`/dev/zero`) is refused before any
// byte is read, so nothing blocks and nothing grows without bound.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

namespace burnmark {

// Generous for every input BurnMark reads (programs and fuzzer inputs are kilobytes, the
// known-bug list and ledgers well under a megabyte).
inline constexpr std::size_t kMaxInputFileBytes = std::size_t{64} << 20;

// The file's bytes, or nullopt with `error` set to "PATH: why" (one line).
std::optional<std::string> read_input_file(const std::filesystem::path& path, std::string& error,
                                           std::size_t max_bytes = kMaxInputFileBytes);

} // namespace burnmark
