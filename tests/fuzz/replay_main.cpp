// Runs a libFuzzer target without libFuzzer (GCC builds, CI): every file of the corpus, then a fixed
// number of deterministic mutations spread over them (bit flips, truncations, insertions), so the target
// is exercised on every CI run; in the fuzz preset the same target links against -fsanitize=fuzzer.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

std::vector<std::uint8_t> mutate(std::vector<std::uint8_t> v, std::mt19937_64& rng) {
  int edits = 1 + static_cast<int>(rng() % 8);
  for (int e = 0; e < edits; ++e) {
    switch (rng() % 5) {
      case 0:
        if (!v.empty()) v[rng() % v.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
        break;
      case 1:
        if (!v.empty()) v.resize(rng() % v.size());
        break;
      case 2:
        v.insert(v.begin() + static_cast<long>(v.empty() ? 0 : rng() % v.size()), static_cast<std::uint8_t>(rng()));
        break;
      case 3:
        if (!v.empty()) v[rng() % v.size()] = static_cast<std::uint8_t>("{}[]\":,0-9e"[rng() % 11]);
        break;
      default:
        if (v.size() > 1) v.erase(v.begin() + static_cast<long>(rng() % v.size()));
        break;
    }
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t total = 100'000;
  if (argc < 2 || (argc > 2 && std::from_chars(argv[2], argv[2] + std::strlen(argv[2]), total).ec != std::errc{})) {
    std::cerr << "usage: " << argv[0] << " CORPUS_DIR [MUTATIONS]\n";
    return 2;
  }
  // Sorted, so that the same corpus gets the same mutations on every file system.
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(argv[1])) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  // The mutations are spread over the corpus: a merged corpus of a thousand entries costs CI no more
  // than the nine seeds did.
  const std::size_t rounds = files.empty() ? 0 : std::max<std::size_t>(1, total / files.size());
  std::mt19937_64 rng(20261130);
  std::size_t runs = 0;
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    std::vector<std::uint8_t> seed{std::istreambuf_iterator<char>(in), {}};
    LLVMFuzzerTestOneInput(seed.data(), seed.size());
    for (std::size_t i = 0; i < rounds; ++i, ++runs) {
      auto m = mutate(seed, rng);
      LLVMFuzzerTestOneInput(m.data(), m.size());
    }
  }
  std::cout << "fuzz replay: " << files.size() << " corpus entries and " << runs << " mutations, no crash\n";
  return files.empty() ? 1 : 0;
}
