// Loading corpus/known_bugs.txt and the cached per-divergence check (see
// burnmark/triage/suppress.h for the design).
#include "burnmark/triage/suppress.h"

#include "burnmark/ir/input_file.h"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

#include "burnmark/triage/root_cause.h"
#include "burnmark/triage/triage.h"

namespace burnmark {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

// A word from the file as it may be echoed in a one-line error: the list may be any file, even
// a binary one given by mistake, so control and non-ASCII bytes become \xNN, cut short.
std::string printable(std::string_view text) {
  constexpr std::size_t kMax = 40;
  std::string out;
  for (std::size_t i = 0; i < text.size() && i < kMax; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  if (text.size() > kMax) out += "...";
  return out;
}

std::string_view next_word(std::string_view& s) {
  s = trim(s);
  std::size_t n = 0;
  while (n < s.size() && !std::isspace(static_cast<unsigned char>(s[n])))
    ++n;
  const std::string_view w = s.substr(0, n);
  s.remove_prefix(n);
  return w;
}

bool is_signature_id(std::string_view w) {
  if (w.size() != 12) return false;
  for (char c : w)
    if (!std::isxdigit(static_cast<unsigned char>(c)) ||
        std::isupper(static_cast<unsigned char>(c)))
      return false;
  return true;
}

} // namespace

Suppressions Suppressions::parse(std::string_view text, std::string& error) {
  Suppressions out;
  error.clear();
  int line_no = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    if (const std::size_t hash = line.find('#'); hash != std::string_view::npos)
      line = line.substr(0, hash);
    if (trim(line).empty()) continue;
    KnownBug bug;
    bug.id = next_word(line);
    bug.anchor = next_word(line);
    bug.description = trim(line);
    if (!is_signature_id(bug.id)) {
      error = fmt::format("line {}: '{}' is not a 12-digit lowercase hex signature id", line_no,
                          printable(bug.id));
      return {};
    }
    if (bug.anchor.empty()) {
      error = fmt::format("line {}: missing bugs.md anchor after the signature id", line_no);
      return {};
    }
    out.bugs_.push_back(std::move(bug));
  }
  return out;
}

Suppressions Suppressions::load(const std::string& path, std::string& error) {
  const std::optional<std::string> text = read_input_file(path, error);
  if (!text) return {};
  Suppressions out = parse(*text, error);
  if (!error.empty()) error = path + ":" + error.substr(5); // "line N: why" -> "PATH:N: why"
  return out;
}

const KnownBug* Suppressions::find(std::string_view id) const {
  for (const KnownBug& b : bugs_)
    if (b.id == id) return &b;
  return nullptr;
}

const KnownBug* Suppressions::find(const Signature& signature) const {
  if (const KnownBug* known = find_graph(signature)) return known;
  // A compiled root that reproduces eager's own fault is known when eager's root is (PyTorch
  // files a compile bug only when the compiled result is further from the baseline than eager's).
  const std::vector<std::string> root_ids = listed_root_ids(signature.roots);
  return find_root(root_ids);
}

const KnownBug* Suppressions::find_graph(const Signature& signature) const {
  for (const std::string* id : {&signature.id, &signature.f32_id, &signature.reverse_id,
                                &signature.f32_reverse_id, &signature.culprit_id})
    if (!id->empty())
      if (const KnownBug* known = find(std::string_view(*id))) return known;
  // Several backends: known when each one's share is, by any of its ids.
  const KnownBug* first = nullptr;
  // A compiled backend's share that reproduces eager's fault is eager's (listed_root_ids).
  const auto shared = [&](const BackendSignature& share) {
    return std::any_of(signature.roots.begin(), signature.roots.end(), [&](const RootCause& r) {
      return r.backend == share.backend && r.compile == "both-outside-alike";
    });
  };
  for (const BackendSignature& share : signature.per_backend) {
    if (shared(share) && signature.per_backend.size() > 1) continue;
    const KnownBug* known = nullptr;
    for (const std::string* id : {&share.id, &share.f32_id, &share.reverse_id, &share.culprit_id})
      if (!known && !id->empty()) known = find(std::string_view(*id));
    if (!known) return nullptr;
    if (!first) first = known;
  }
  return first;
}

const KnownBug* Suppressions::find_root(const std::vector<std::string>& root_ids) const {
  const KnownBug* first = nullptr;
  for (const std::string& id : root_ids) {
    const KnownBug* known = find(std::string_view(id));
    if (!known) return nullptr;
    if (!first) first = known;
  }
  return first;
}

KnownBugFilter::KnownBugFilter(Suppressions suppressions, Runner runner, MinimizeOptions options)
    : suppressions_(std::move(suppressions)), runner_(std::move(runner)),
      options_(std::move(options)) {
  runner_.memoise(kMemoCapacity);
}

const KnownBug* KnownBugFilter::match(const Program& program) {
  if (suppressions_.empty()) return nullptr;
  return match(program, runner_.check(program));
}

const KnownBug* KnownBugFilter::match(const Program& program, const Verdict& verdict) {
  if (suppressions_.empty()) return nullptr;
  const std::optional<Finding> finding = analyse(runner_, program, verdict);
  if (!finding) return nullptr;
  const std::string pre = pre_signature(program, *finding);
  auto it = known_of_pre_.find(pre);
  if (it == known_of_pre_.end()) {
    // A known root at the culprit needs no minimisation; anything else (no op diverging alone
    // there, an unlisted root, a bug listed by its graph) gets the full characterisation.
    if (const auto roots = culprit_roots(runner_, program, finding->verdict, finding->culprit)) {
      if (const KnownBug* known = suppressions_.find_root(listed_root_ids(*roots))) {
        ++root_answers_;
        return known_of_pre_.emplace(pre, known).first->second;
      }
    }
    ++minimisations_;
    const Characterization c = characterize(runner_, program, *finding, options_);
    it = known_of_pre_.emplace(pre, suppressions_.find(c.signature)).first;
  }
  return it->second;
}

} // namespace burnmark
