#include "cli/commands.h"

int main(int argc, char** argv) { return baton::cli::Main(argc, argv); }
