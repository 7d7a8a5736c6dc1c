#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

// What the text formatters of the CLI share: reading fields of a daemon answer that may be
// missing or of the wrong type (shown as "?", never an exception), and laying out columns.
namespace tandem::cli {

inline constexpr std::string_view kUnknown = "?";

// object[key] as text; "?" when it is missing or not a string.
std::string textOf(const nlohmann::json& object, const char* key);
// object[key] as a decimal integer; "?" when it is missing or not an integer.
std::string numberOf(const nlohmann::json& object, const char* key);
// object[key] as "yes"/"no"; "?" when it is missing or not a boolean.
std::string yesNo(const nlohmann::json& object, const char* key);

using Row = std::vector<std::string>;
// Columns two spaces apart, each line prefixed with indent and without trailing blanks. A column
// whose entry in right_aligned is true is padded on the left (numbers); the others on the right.
std::string table(const std::vector<Row>& rows, const std::vector<bool>& right_aligned = {},
                  const std::string& indent = "");

}  // namespace tandem::cli
