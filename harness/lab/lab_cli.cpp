// lab_cli: the lab commands on their own, for the lab tests until `harness lab` forwards to lab_main.
#include "harness/lab/lab.hpp"

int main(int argc, char** argv) { return lab::lab_main(std::vector<std::string>(argv + 1, argv + argc)); }
