// Runs a libFuzzer target without libFuzzer (GCC builds, CI): every file of the seed corpus, then a
// fixed number of deterministic mutations of each (bit flips, truncations, insertions), so the target
// is exercised on every CI run; with Clang, the same target links against -fsanitize=fuzzer instead.
#include <cstdint>
#include <cstdlib>
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
      case 0: if (!v.empty()) v[rng() % v.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8)); break;
      case 1: if (!v.empty()) v.resize(rng() % v.size()); break;
      case 2: v.insert(v.begin() + static_cast<long>(v.empty() ? 0 : rng() % v.size()), static_cast<std::uint8_t>(rng())); break;
      case 3: if (!v.empty()) v[rng() % v.size()] = static_cast<std::uint8_t>("{}[]\":,0-9e"[rng() % 11]); break;
      default: if (v.size() > 1) v.erase(v.begin() + static_cast<long>(rng() % v.size())); break;
    }
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " CORPUS_DIR [MUTATIONS_PER_FILE]\n";
    return 2;
  }
  int rounds = argc > 2 ? std::atoi(argv[2]) : 2000;
  std::mt19937_64 rng(20261130);
  std::size_t runs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(argv[1])) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::vector<std::uint8_t> seed{std::istreambuf_iterator<char>(in), {}};
    LLVMFuzzerTestOneInput(seed.data(), seed.size());
    for (int i = 0; i < rounds; ++i, ++runs) {
      auto m = mutate(seed, rng);
      LLVMFuzzerTestOneInput(m.data(), m.size());
    }
  }
  std::cout << "fuzz replay: " << runs << " inputs, no crash\n";
  return runs > 0 ? 0 : 1;
}
