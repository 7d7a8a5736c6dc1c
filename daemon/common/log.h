#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

// The one log facade: a severity and a line with key=value context ("role change node=a
// from=BACKUP to=ACTIVE"). Every module logs through a LogSink handed in by whoever builds it;
// the director hands them all the same one, onto the platform's journal (platform/logger.h).
namespace tandem {

// The levels of [daemon] log_level, most severe first.
enum class LogLevel { kError, kWarning, kNotice, kInfo, kDebug };

std::optional<LogLevel> parseLogLevel(std::string_view name);
std::string_view logLevelName(LogLevel level);

using LogSink = std::function<void(LogLevel level, const std::string& line)>;

// "key=value", the value quoted (with \" and \\) when it would otherwise break key=value
// parsing: empty, or holding a space, a tab, a quote or '='.
std::string kv(std::string_view key, std::string_view value);
std::string kv(std::string_view key, uint64_t value);

}  // namespace tandem
