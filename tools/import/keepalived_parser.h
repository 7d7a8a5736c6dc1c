#pragma once

#include <string>
#include <vector>

#include "import_report.h"
#include "source_reader.h"

// keepalived.conf's syntax, as a tree of statements: a keyword, its arguments and, where a
// brace follows, a block of child statements; each with the file and line it came from.
// `include` is followed (globs, relative to the including file's directory), `!` and `#` start
// comments, "quoted strings" are one argument, `$NAME=value` defines a parameter that `$NAME`
// and `${NAME}` later stand for, and `@ID` / `@^ID` lines apply only to (or not to) keepalived's
// config id. Pure apart from the reader; bounded: 16 levels of include, 64 of blocks.
namespace tandem::importer {

struct KaStatement {
  std::string keyword;
  std::vector<std::string> args;
  std::string file;
  int line = 0;
  bool has_block = false;
  std::vector<KaStatement> children;
};

struct KaParse {
  std::vector<KaStatement> statements;
  std::vector<ImportError> errors;
  // Where the config id left a line out, and each include: the report says so.
  struct Skipped {
    std::string file;
    int line = 0;
    std::string what;
  };
  std::vector<Skipped> skipped;
  // Lines the parser itself consumed: each include, each $NAME=value definition.
  std::vector<Skipped> consumed;
};

KaParse parseKeepalived(const std::string& path, const SourceReader& reader,
                        const std::string& config_id);

}  // namespace tandem::importer
