#include "app/cli/cli.h"

int main(int argc, char** argv) { return flashviz::cli::run(argc, argv); }
