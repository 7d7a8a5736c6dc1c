#pragma once

#include <span>
#include <string>
#include <string_view>

#include "import_report.h"

// The importers' mapping, as data: each keepalived or ldirectord construct, the tandem key it
// becomes (or the nearest one, when it is dropped), and how tandem's behaviour differs. The
// importers report through it, and conf/reference.md's "Coming from keepalived or ldirectord"
// table is generated from it (mappingTableMarkdown), so that the two cannot drift apart.
namespace tandem::importer {

enum class Source { kKeepalived, kLdirectord };

struct Mapping {
  Source source;
  std::string_view block;    // where the keyword is: "virtual_server", "HTTP_GET", "global"...
  std::string_view keyword;  // as the source spells it: "lb_algo", "checktype = connect"...
  std::string_view key;      // the tandem key; for a dropped construct, the nearest one or ""
  Fate fate;
  std::string_view note;  // how the behaviour differs, or why there is no equivalent
};

std::span<const Mapping> keepalivedMappings();  // keepalived_mapping.cpp
std::span<const Mapping> ldirectordMappings();  // ldirectord_mapping.cpp

// The entry for block/keyword, or nullptr.
const Mapping* findMapping(Source source, std::string_view block, std::string_view keyword);

// Records one source line in the report as its mapping says. detail, when given, is appended to
// the reason (a computed value: the failure windows of a check, say). A construct with no
// entry in the table is reported as dropped with "not in the importer's mapping", which the
// tests treat as a bug.
void record(Report& report, Source source, const std::string& file, int line,
            std::string_view block, std::string_view keyword, const std::string& detail = "");

// The Markdown table of both mappings, for conf/reference.md.
std::string mappingTableMarkdown();

}  // namespace tandem::importer
