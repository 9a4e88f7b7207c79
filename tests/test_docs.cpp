// The user's documentation keeps its shape (issue 31): README.md is a short quick start and map
// (at most 300 lines, none over 100 columns, a table of contents whose links reach its headings),
// its knob table lists every knob of knobs.def, it keeps the test command CI runs, and every
// relative link in README.md, CONTRIBUTING.md and docs/*.md names a file that exists.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// Every knob's environment name, straight from the one table.
const char* const kKnobNames[] = {
#define BURNMARK_KNOB(field, env_name, ...) env_name,
#include "burnmark/config/knobs.def"
#undef BURNMARK_KNOB
};

fs::path source_dir() {
  const char* dir = std::getenv("BURNMARK_SOURCE_DIR");
  return dir ? fs::path(dir) : fs::path(".");
}

std::vector<std::string> lines_of(const fs::path& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

// Columns as a terminal shows them: UTF-8 code points, not bytes (the README has −, ±, ·, …).
std::size_t columns(const std::string& line) {
  std::size_t n = 0;
  for (unsigned char c : line)
    n += (c & 0xC0) != 0x80;
  return n;
}

// The lines outside fenced code blocks, with inline code spans removed, so that a `[x](y)` or
// a `# comment` inside code is neither a link nor a heading.
std::vector<std::string> prose_of(const std::vector<std::string>& lines) {
  std::vector<std::string> prose;
  bool in_code = false;
  for (const std::string& line : lines) {
    if (line.rfind("```", line.find_first_not_of(' ')) == line.find_first_not_of(' ') &&
        line.find("```") != std::string::npos) {
      in_code = !in_code;
      continue;
    }
    if (!in_code) prose.push_back(std::regex_replace(line, std::regex("`[^`]*`"), "``"));
  }
  return prose;
}

// GitHub's anchor for a heading: lower case, spaces to hyphens, punctuation dropped (our
// headings are ASCII; other characters are dropped too).
std::string anchor_of(const std::string& heading) {
  std::string out;
  for (unsigned char c : heading) {
    if (std::isalnum(c) && c < 0x80)
      out += static_cast<char>(std::tolower(c));
    else if (c == ' ' || c == '-')
      out += '-';
    else if (c == '_')
      out += '_';
  }
  return out;
}

std::set<std::string> anchors_of(const std::vector<std::string>& prose) {
  std::set<std::string> anchors;
  static const std::regex heading(R"(^#{1,6} +(.*?) *$)");
  for (const std::string& line : prose) {
    std::smatch m;
    if (std::regex_match(line, m, heading)) anchors.insert(anchor_of(m[1].str()));
  }
  return anchors;
}

std::vector<std::string> link_targets(const std::vector<std::string>& prose) {
  std::vector<std::string> targets;
  static const std::regex link(R"(\]\(([^)\s]+)\))");
  for (const std::string& line : prose)
    for (auto it = std::sregex_iterator(line.begin(), line.end(), link);
         it != std::sregex_iterator(); ++it)
      targets.push_back((*it)[1].str());
  return targets;
}

// Every relative link of `file` names an existing file or folder (anchors are not checked).
void expect_relative_links_exist(const fs::path& file) {
  const std::vector<std::string> targets = link_targets(prose_of(lines_of(file)));
  for (const std::string& target : targets) {
    if (target.rfind("http://", 0) == 0 || target.rfind("https://", 0) == 0 ||
        target.rfind("mailto:", 0) == 0 || target[0] == '#')
      continue;
    const std::string path = target.substr(0, target.find('#'));
    EXPECT_TRUE(fs::exists(file.parent_path() / path))
        << file.filename() << " links to " << target << ", which does not exist";
  }
}

} // namespace

TEST(Readme, IsAtMost300LinesNoneOver100Columns) {
  const std::vector<std::string> lines = lines_of(source_dir() / "README.md");
  EXPECT_LE(lines.size(), 300u);
  for (std::size_t i = 0; i < lines.size(); ++i)
    EXPECT_LE(columns(lines[i]), 100u) << "README.md:" << i + 1 << ": " << lines[i];
}

TEST(Readme, TableOfContentsReachesEveryHeadingOfItsLevel) {
  const std::vector<std::string> prose = prose_of(lines_of(source_dir() / "README.md"));
  const std::set<std::string> anchors = anchors_of(prose);
  // The contents: the list right under "## Contents", before the next heading.
  std::set<std::string> listed;
  bool in_contents = false;
  for (const std::string& line : prose) {
    if (line.rfind("#", 0) == 0) {
      if (in_contents) break;
      in_contents = line == "## Contents";
      continue;
    }
    if (!in_contents) continue;
    for (const std::string& target : link_targets({line}))
      if (target[0] == '#') listed.insert(target.substr(1));
  }
  ASSERT_FALSE(listed.empty()) << "README.md has no \"## Contents\" list of #anchor links";
  for (const std::string& anchor : listed)
    EXPECT_TRUE(anchors.count(anchor))
        << "the contents link to #" << anchor << ", which is no heading of README.md";
  // Every second-level section but the contents itself is listed.
  static const std::regex section(R"(^## +(.*?) *$)");
  for (const std::string& line : prose) {
    std::smatch m;
    if (!std::regex_match(line, m, section) || m[1] == "Contents") continue;
    EXPECT_TRUE(listed.count(anchor_of(m[1].str())))
        << "section \"" << m[1] << "\" is missing from the contents";
  }
  // Every #anchor link elsewhere in the README reaches a heading too.
  for (const std::string& target : link_targets(prose))
    if (target[0] == '#')
      EXPECT_TRUE(anchors.count(target.substr(1))) << "README.md links to " << target;
}

TEST(Readme, KnobTableListsEveryKnob) {
  std::ostringstream text;
  for (const std::string& line : lines_of(source_dir() / "README.md"))
    text << line << '\n';
  const std::string readme = text.str();
  const std::size_t knobs = readme.find("\n## Knobs\n");
  ASSERT_NE(knobs, std::string::npos) << "README.md has no \"## Knobs\" section";
  const std::string section = readme.substr(knobs, readme.find("\n## ", knobs + 1) - knobs);
  for (const char* name : kKnobNames)
    EXPECT_NE(section.find(std::string("`") + name + "`"), std::string::npos)
        << name << " (knobs.def) is missing from the README's knob table";
}

TEST(Readme, KeepsTheTestCommandCiRuns) {
  // .ci/run is "exactly the README's test command": tools/test.sh, in a shell block.
  const std::vector<std::string> ci = lines_of(source_dir() / ".ci" / "run");
  ASSERT_FALSE(ci.empty());
  EXPECT_EQ(ci.back(), "exec bash tools/test.sh");
  bool found = false;
  for (const std::string& line : lines_of(source_dir() / "README.md"))
    found = found || line.rfind("tools/test.sh ", 0) == 0;
  EXPECT_TRUE(found) << "README.md has no line starting with the test command tools/test.sh";
}

TEST(Docs, EveryRelativeLinkNamesAFileThatExists) {
  expect_relative_links_exist(source_dir() / "README.md");
  expect_relative_links_exist(source_dir() / "CONTRIBUTING.md");
  for (const auto& entry : fs::directory_iterator(source_dir() / "docs"))
    if (entry.path().extension() == ".md") expect_relative_links_exist(entry.path());
}
