#pragma once
// A file of a folder from elsewhere, read as untrusted: no symlink out of the folder, a regular file only
// (a FIFO would block, /dev/zero never ends), at most `max_bytes`; else std::runtime_error.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

namespace nb {

// nullopt when there is no such file (a dangling symlink included).
std::optional<std::string> read_file_beneath(const std::filesystem::path& folder, const std::filesystem::path& relative,
                                             std::size_t max_bytes);

// "64 MiB", "100 bytes".
std::string byte_size_words(std::size_t bytes);

}  // namespace nb
