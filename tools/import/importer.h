#pragma once

#include <string>
#include <vector>

#include "import_report.h"
#include "source_reader.h"

// `tandem config import`: a keepalived or ldirectord config in, a complete, commented
// tandem.conf and a report of what became of each construct out. Pure apart from the reader.
namespace tandem::importer {

struct ImportOptions {
  // The cluster key file the written config names (relative: beside the config file).
  std::string key_file = "authkey";
  // keepalived's config id (`keepalived -i ID`): lines marked @ID apply, @^ID do not. Empty:
  // every conditional line is left out, and reported.
  std::string config_id;
};

struct ImportResult {
  std::vector<ImportError> errors;  // non-empty: nothing to write
  std::string conf;                 // the tandem.conf
  Report report;
  bool ok() const { return errors.empty(); }
};

// One keepalived.conf, or two: one per director (they differ in state and priority, and every
// other difference is reported). Includes are followed through the reader.
ImportResult importKeepalived(const std::vector<std::string>& files, const SourceReader& reader,
                              const ImportOptions& options);

// ldirectord's config (ldirectord.cf): the same on both directors.
ImportResult importLdirectord(const std::string& file, const SourceReader& reader,
                              const ImportOptions& options);

}  // namespace tandem::importer
