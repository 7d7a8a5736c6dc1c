#include "format_explain.h"

#include <vector>

#include "format_table.h"

namespace tandem::cli {

CommandOutput renderExplain(const Result<nlohmann::json>& answer, bool json_output) {
  using nlohmann::json;
  return renderAnswer(answer, json_output, "tandem explain", [](const json& body) {
    auto active = body.find("active");
    const bool has_active = active != body.end() && active->is_string();
    const std::string name = has_active ? active->get<std::string>() : "";
    std::vector<Row> head{
        {"Active:", has_active ? name : "none"},
        {"Why:", textOf(body, "why_active")},
        {has_active ? "If " + name + " fails now:" : "Next:", textOf(body, "if_active_fails")}};
    std::vector<Row> nodes{{"Node", "Can be ACTIVE", "Why not"}};
    if (auto c = body.find("candidates"); c != body.end() && c->is_array()) {
      for (const json& n : *c) {
        if (!n.is_object()) continue;
        nodes.push_back({textOf(n, "name"), yesNo(n, "eligible"), textOf(n, "why_not")});
      }
    }
    return "As " + textOf(body, "node") + " sees it:\n" + table(head) + "\n" + table(nodes);
  });
}

}  // namespace tandem::cli
