// lab_cli: the lab commands on their own, the same lab_main `harness lab` forwards to; the lab tests drive it.
#include "harness/lab/lab.hpp"

int main(int argc, char** argv) { return lab::lab_main(std::vector<std::string>(argv + 1, argv + argc)); }
