#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

// What `tandem config import` says about each construct of a keepalived or ldirectord config:
// where it went in tandem.conf, or why it went nowhere, or how tandem will behave differently.
// Pure: the importers fill it, the tool prints it on stderr (or as JSON).
namespace tandem::importer {

enum class Fate {
  kMapped,   // carried over; tandem does the same
  kDiffers,  // carried over, but tandem's behaviour differs (reason says how)
  kDropped,  // no tandem equivalent (reason says why, and the nearest tandem setting)
};

std::string_view fateName(Fate f);  // "mapped", "differs", "dropped"

struct ReportLine {
  std::string file;
  int line = 0;
  std::string construct;  // the source's keyword, e.g. "lb_algo" or "HTTP_GET.digest"
  Fate fate = Fate::kMapped;
  std::string key;     // the tandem key it became ("" when dropped, or the nearest setting)
  std::string reason;  // why it was dropped, or how the behaviour differs
};

// A parse error: the import stops and writes nothing.
struct ImportError {
  std::string file;
  int line = 0;
  std::string message;
  std::string text() const;  // "file:line: message"
};

class Report {
 public:
  void mapped(const std::string& file, int line, std::string construct, std::string key);
  void differs(const std::string& file, int line, std::string construct, std::string key,
               std::string reason);
  void dropped(const std::string& file, int line, std::string construct, std::string nearest,
               std::string reason);
  // A remark about the whole import (no source line), e.g. what the operator must still do.
  void note(std::string text) { notes_.push_back(std::move(text)); }

  const std::vector<ReportLine>& lines() const { return lines_; }
  const std::vector<std::string>& notes() const { return notes_; }
  // Distinct source lines carried over (mapped or differing), and constructs dropped.
  size_t mappedLineCount() const;
  size_t droppedCount() const;

  // One line per entry, sorted by file and line:
  //   keepalived.conf:12 -> virtual_server.scheduler (lb_algo)
  //   keepalived.conf:20: dropped HTTP_GET.digest: tandem checks no digest; nearest: ...
  //   keepalived.conf:21: differs retry -> virtual_server.check.fall: ...
  // then the notes and a count line.
  std::string text() const;
  nlohmann::json json() const;

 private:
  std::vector<ReportLine> lines_;
  std::vector<std::string> notes_;
};

}  // namespace tandem::importer
