#pragma once
// A file of a folder that may come from elsewhere (a results folder copied from another host, a tarball)
// read as untrusted input: opened beneath the folder, so that no symlink leads out of it; a regular file
// only (a FIFO would block the reader, a device such as /dev/zero never ends); and at most `max_bytes` of
// it. Each refusal is a std::runtime_error naming the file and why.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

namespace nb {

// The text of `relative` beneath `folder`; nullopt when there is no such file (a symlink that leads
// nowhere, or no such folder, included). A symlink is followed while it stays inside `folder`.
std::optional<std::string> read_file_beneath(const std::filesystem::path& folder, const std::filesystem::path& relative,
                                             std::size_t max_bytes);

// "64 MiB", "1 MiB", "512 KiB", "100 bytes": a cap as its messages state it.
std::string byte_size_words(std::size_t bytes);

}  // namespace nb
