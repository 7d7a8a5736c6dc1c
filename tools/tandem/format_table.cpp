#include "format_table.h"

#include <algorithm>
#include <cstdint>

namespace tandem::cli {

using nlohmann::json;

std::string textOf(const json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return std::string(kUnknown);
  return it->get<std::string>();
}

std::string numberOf(const json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end()) return std::string(kUnknown);
  if (it->is_number_unsigned()) return std::to_string(it->get<uint64_t>());
  if (it->is_number_integer()) return std::to_string(it->get<int64_t>());
  return std::string(kUnknown);
}

std::string yesNo(const json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_boolean()) return std::string(kUnknown);
  return it->get<bool>() ? "yes" : "no";
}

std::string table(const std::vector<Row>& rows, const std::vector<bool>& right_aligned,
                  const std::string& indent) {
  std::vector<size_t> width;
  for (const Row& row : rows) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const Row& row : rows) {
    std::string line = indent;
    for (size_t i = 0; i < row.size(); ++i) {
      const bool last = i + 1 == row.size();
      const std::string pad(width[i] - row[i].size(), ' ');
      const bool right = i < right_aligned.size() && right_aligned[i];
      line += right ? pad + row[i] : row[i] + (last ? "" : pad);
      if (!last) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();  // an empty last column
    out += line + "\n";
  }
  return out;
}

}  // namespace tandem::cli
