#pragma once
// A file with given text and mode in a fresh private directory under /tmp; both removed with the object.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

namespace nb::test {

struct temp_file {
  temp_file(const std::string& text, mode_t mode) {
    char tmpl[] = "/tmp/netbench-test-XXXXXX";
    if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
    dir = tmpl;
    path = dir + "/file";
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
  }
  ~temp_file() {
    ::unlink(path.c_str());
    ::rmdir(dir.c_str());
  }
  temp_file(const temp_file&) = delete;
  temp_file& operator=(const temp_file&) = delete;
  std::string dir, path;
};

// A fresh private directory under /tmp, removed with all it holds with the object.
struct temp_dir {
  temp_dir() {
    char tmpl[] = "/tmp/netbench-test-XXXXXX";
    if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
    path = tmpl;
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  std::filesystem::path path;
};

// A whole file's text; empty when it cannot be read (a test then fails on what it expected in it).
inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace nb::test
