#include "keepalived_parser.h"

#include <cctype>
#include <map>
#include <set>
#include <string_view>

namespace tandem::importer {

namespace {

constexpr int kMaxIncludeDepth = 16;
constexpr int kMaxBlockDepth = 64;
constexpr size_t kMaxTokens = 1 << 20;

struct Token {
  std::string text;
  bool quoted = false;
  std::string file;
  int line = 0;
  size_t line_id = 0;  // one per physical line read, across files: "on the same line"
  bool isOpen() const { return !quoted && text == "{"; }
  bool isClose() const { return !quoted && text == "}"; }
};

std::string directoryOf(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return "";
  return path.substr(0, slash + 1);
}

bool isNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

class Lexer {
 public:
  Lexer(const SourceReader& reader, std::string config_id, KaParse& out)
      : reader_(reader), config_id_(std::move(config_id)), out_(out) {}

  std::vector<Token> tokens;

  void file(const std::string& path, int depth, const std::string& from_file, int from_line) {
    if (depth > kMaxIncludeDepth) {
      out_.errors.push_back({from_file, from_line,
                             "includes nest deeper than " + std::to_string(kMaxIncludeDepth) +
                                 " levels (does " + path + " include itself?); flatten them"});
      return;
    }
    if (open_.count(path)) {
      out_.errors.push_back(
          {from_file, from_line, path + " includes itself; remove the include that loops"});
      return;
    }
    Result<std::string> text = reader_.read(path);
    if (!text) {
      out_.errors.push_back({from_file, from_line, text.error().message});
      return;
    }
    open_.insert(path);
    size_t pos = 0;
    int line_no = 0;
    const std::string& t = *text;
    while (pos < t.size() && out_.errors.empty()) {
      size_t end = t.find('\n', pos);
      if (end == std::string::npos) end = t.size();
      ++line_no;
      line(path, line_no, std::string_view(t).substr(pos, end - pos), depth);
      pos = end + 1;
    }
    open_.erase(path);
  }

 private:
  void line(const std::string& path, int line_no, std::string_view raw, int depth) {
    std::string text(raw);
    if (!text.empty() && text.back() == '\r') text.pop_back();
    size_t start = text.find_first_not_of(" \t");
    if (start == std::string::npos) return;
    text = text.substr(start);
    if (text[0] == '!' || text[0] == '#') return;
    if (text[0] == '@') {
      size_t sp = text.find_first_of(" \t");
      std::string id = text.substr(1, sp == std::string::npos ? std::string::npos : sp - 1);
      bool negate = !id.empty() && id[0] == '^';
      if (negate) id.erase(0, 1);
      std::string rest = sp == std::string::npos ? "" : text.substr(sp);
      bool applies = !config_id_.empty() && (negate ? id != config_id_ : id == config_id_);
      if (!applies) {
        out_.skipped.push_back(
            {path, line_no,
             std::string(negate ? "for config ids other than " : "for config id ") +
                 (id.empty() ? "(empty)" : id)});
        return;
      }
      size_t s2 = rest.find_first_not_of(" \t");
      if (s2 == std::string::npos) return;
      text = rest.substr(s2);
    }
    if (text[0] == '$') {
      size_t eq = text.find('=');
      size_t n = 1;
      while (n < text.size() && isNameChar(text[n])) ++n;
      if (eq != std::string::npos && n > 1 && text.find_first_not_of(" \t", n) == eq) {
        std::string name = text.substr(1, n - 1);
        std::string value = text.substr(eq + 1);
        size_t b = value.find_first_not_of(" \t");
        value = b == std::string::npos ? "" : value.substr(b);
        while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.pop_back();
        params_[name] = substitute(value);
        out_.consumed.push_back({path, line_no, "$" + name + " (substituted where it is used)"});
        return;
      }
    }
    text = substitute(text);
    ++line_id_;
    std::vector<Token> here;
    size_t i = 0;
    while (i < text.size()) {
      char c = text[i];
      if (c == ' ' || c == '\t') {
        ++i;
      } else if (c == '!' || c == '#') {
        break;
      } else if (c == '{' || c == '}') {
        here.push_back({std::string(1, c), false, path, line_no, line_id_});
        ++i;
      } else if (c == '"') {
        size_t close = text.find('"', i + 1);
        if (close == std::string::npos) {
          out_.errors.push_back(
              {path, line_no, "a quoted string is not closed on its line; add the closing \""});
          return;
        }
        here.push_back({text.substr(i + 1, close - i - 1), true, path, line_no, line_id_});
        i = close + 1;
      } else {
        size_t j = i;
        while (j < text.size() && text[j] != ' ' && text[j] != '\t' && text[j] != '{' &&
               text[j] != '}' && text[j] != '"')
          ++j;
        here.push_back({text.substr(i, j - i), false, path, line_no, line_id_});
        i = j;
      }
    }
    if (!here.empty() && !here[0].quoted && here[0].text == "include") {
      if (here.size() != 2) {
        out_.errors.push_back(
            {path, line_no, "include takes one file name or glob pattern, as `include FILE`"});
        return;
      }
      std::string pattern = here[1].text;
      if (pattern.empty() || pattern[0] != '/') pattern = directoryOf(path) + pattern;
      std::vector<std::string> files = reader_.glob(pattern);
      out_.consumed.push_back({path, line_no,
                               "include " + here[1].text + " (" + std::to_string(files.size()) +
                                   " file" + (files.size() == 1 ? "" : "s") + ")"});
      for (const auto& f : files) file(f, depth + 1, path, line_no);
      return;
    }
    if (tokens.size() + here.size() > kMaxTokens) {
      out_.errors.push_back({path, line_no, "more than a million words; is this a config file?"});
      return;
    }
    for (auto& t : here) tokens.push_back(std::move(t));
  }

  std::string substitute(const std::string& text) const {
    if (params_.empty() || text.find('$') == std::string::npos) return text;
    std::string out;
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '$') {
        bool braced = i + 1 < text.size() && text[i + 1] == '{';
        size_t b = i + (braced ? 2 : 1);
        size_t e = b;
        while (e < text.size() && isNameChar(text[e])) ++e;
        auto it = params_.find(text.substr(b, e - b));
        if (it != params_.end() && (!braced || (e < text.size() && text[e] == '}'))) {
          out += it->second;
          i = braced ? e : e - 1;
          continue;
        }
      }
      out += text[i];
    }
    return out;
  }

  const SourceReader& reader_;
  std::string config_id_;
  KaParse& out_;
  std::map<std::string, std::string> params_;
  std::set<std::string> open_;
  size_t line_id_ = 0;
};

class TreeBuilder {
 public:
  TreeBuilder(const std::vector<Token>& tokens, KaParse& out) : t_(tokens), out_(out) {}

  std::vector<KaStatement> block(const KaStatement* opener, int depth) {
    std::vector<KaStatement> list;
    if (depth > kMaxBlockDepth) {
      out_.errors.push_back({opener->file, opener->line,
                             "blocks nest deeper than " + std::to_string(kMaxBlockDepth) +
                                 " levels; a } is probably missing"});
      i_ = t_.size();
      return list;
    }
    while (i_ < t_.size() && out_.errors.empty()) {
      const Token& tok = t_[i_];
      if (tok.isClose()) {
        ++i_;
        if (opener != nullptr) return list;
        out_.errors.push_back({tok.file, tok.line,
                               "this } closes no block; remove it, or add the { it should close"});
        return list;
      }
      if (tok.isOpen()) {
        // A { on its own line opens the block of the statement above it.
        if (list.empty() || list.back().has_block) {
          out_.errors.push_back(
              {tok.file, tok.line, "this { follows no keyword; put it after the keyword it opens"});
          return list;
        }
        ++i_;
        list.back().has_block = true;
        list.back().children = block(&list.back(), depth + 1);
        continue;
      }
      KaStatement s;
      s.keyword = tok.text;
      s.file = tok.file;
      s.line = tok.line;
      size_t line_id = tok.line_id;
      ++i_;
      while (i_ < t_.size() && t_[i_].line_id == line_id && !t_[i_].isOpen() && !t_[i_].isClose()) {
        s.args.push_back(t_[i_].text);
        ++i_;
      }
      list.push_back(std::move(s));
      if (i_ < t_.size() && t_[i_].line_id == line_id && t_[i_].isOpen()) {
        ++i_;
        list.back().has_block = true;
        list.back().children = block(&list.back(), depth + 1);
      }
    }
    if (opener != nullptr && out_.errors.empty()) {
      out_.errors.push_back(
          {opener->file, opener->line,
           "the block of " + opener->keyword + " opened here is never closed; add its }"});
    }
    return list;
  }

 private:
  const std::vector<Token>& t_;
  KaParse& out_;
  size_t i_ = 0;
};

}  // namespace

KaParse parseKeepalived(const std::string& path, const SourceReader& reader,
                        const std::string& config_id) {
  KaParse out;
  Lexer lexer(reader, config_id, out);
  lexer.file(path, 0, path, 0);
  if (!out.errors.empty()) return out;
  TreeBuilder builder(lexer.tokens, out);
  out.statements = builder.block(nullptr, 0);
  return out;
}

}  // namespace tandem::importer
