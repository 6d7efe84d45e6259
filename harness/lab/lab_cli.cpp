// `harness lab` on its own, for the lab tests.
#include "harness/lab/lab.hpp"

int main(int argc, char** argv) { return lab::lab_main(std::vector<std::string>(argv + 1, argv + argc)); }
