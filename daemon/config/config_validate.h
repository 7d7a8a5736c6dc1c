#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "config/file_system.h"
#include "config/toml_reader.h"

// Internal to the config library: the loader reads each table on its own, then hands the whole
// config, with where each entity stood in the file, to the cross checks.
namespace tandem::config {

// Where each entity stands in the file, and whether it read without error (cross checks
// skip the broken ones, whose fields hold defaults and would only add false findings).
struct VipPos {
  Position table, address, interface;
  bool ok = true;
};
struct RealPos {
  Position address, forwarding;
  bool ok = true;
};
struct VsPos {
  Position table, address, fallback, route;
  bool ok = true;
  std::vector<RealPos> reals;
};

struct Positions {
  Position cluster;
  Position tiebreaker;
  std::vector<Position> nodes;
  std::vector<Position> keys;
  std::vector<VipPos> vips;
  std::vector<VsPos> virtual_servers;
  std::optional<Position> routes;  // [route], when the file has one
};

// Why an argv command's program, named by its absolute path, cannot run ("runs /x, which does
// not exist; install it, or fix the path"); nullopt when it can, and for a shell line (the
// shell's to resolve) or a bare name (PATH's).
std::optional<std::string> programProblem(const Command& cmd, const FileSystem& files);

// Adds the findings that need more than one table to ctx's diagnostics.
void crossCheck(const Config& cfg, const Positions& pos, const FileSystem& files, ReadContext& ctx);

}  // namespace tandem::config
