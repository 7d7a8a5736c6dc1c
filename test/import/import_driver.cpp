// A stand-in for `tandem config import` (written on main) for the tests of this directory:
//   import_driver ldirectord FILE [KEY_FILE]
// prints the tandem.conf on stdout and the report on stderr; on errors, the errors on stderr
// and exit 1. Exit 2 for a wrong command line.
#include <iostream>
#include <string>

#include "importer.h"

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4 || std::string(argv[1]) != "ldirectord") {
    std::cerr << "usage: import_driver ldirectord FILE [KEY_FILE]\n";
    return 2;
  }
  tandem::importer::ImportOptions options;
  if (argc == 4) options.key_file = argv[3];
  tandem::importer::PosixSourceReader reader;
  tandem::importer::ImportResult r = tandem::importer::importLdirectord(argv[2], reader, options);
  if (!r.ok()) {
    for (const auto& e : r.errors) std::cerr << e.text() << "\n";
    return 1;
  }
  std::cout << r.conf;
  std::cerr << r.report.text();
  return 0;
}
