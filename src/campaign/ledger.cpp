// The ledger's JSON schema and Markdown rendering (see ledger.h).
#include "burnmark/campaign/ledger.h"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "burnmark/campaign/atomic_file.h"

namespace burnmark {

namespace {

constexpr std::string_view kFormat = "burnmark-ledger-1";

// Keys keep the order they are written in, so the file reads top-down (format first) and diffs
// between two ledgers line up.
using Json = nlohmann::ordered_json;

// A field of the given type, or the fallback when it is absent or of another type: ledgers
// written before a field existed still load.
std::string string_or(const Json& o, const char* key, std::string fallback = "") {
  const auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : fallback;
}

double number_or(const Json& o, const char* key, double fallback = 0) {
  const auto it = o.find(key);
  return it != o.end() && it->is_number() ? it->get<double>() : fallback;
}

std::vector<std::string> strings(const Json& o, const char* key) {
  std::vector<std::string> out;
  const auto it = o.find(key);
  if (it == o.end() || !it->is_array()) return out;
  for (const Json& v : *it)
    if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

std::string md_cell(std::string_view text) {
  std::string out;
  for (const char c : text)
    out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out.empty() ? "-" : out;
}

// Most recently seen first would reorder the table on every hit; by count keeps the bugs that
// saturate the channel on top, first-seen breaks ties so the order is stable.
std::vector<const LedgerEntry*> ordered(const Ledger& ledger) {
  std::vector<const LedgerEntry*> out;
  for (const LedgerEntry& e : ledger.entries)
    out.push_back(&e);
  std::stable_sort(out.begin(), out.end(), [](const LedgerEntry* a, const LedgerEntry* b) {
    if (a->regressions.empty() != b->regressions.empty()) return b->regressions.empty();
    if (a->count != b->count) return a->count > b->count;
    return a->first_seen < b->first_seen;
  });
  return out;
}

// The kinds, then "REGRESSION vs <baseline>" for each older release that agreed.
std::string kinds_cell(const LedgerEntry& e) {
  std::string out = fmt::format("{}", fmt::join(e.kinds, ", "));
  for (const std::string& r : e.regressions)
    out += fmt::format("; REGRESSION {}", r);
  return out;
}

} // namespace

std::string root_key_of(const LedgerEntry& e) {
  return e.roots.empty() ? e.signature : fmt::format("{}", fmt::join(e.roots, "+"));
}

LedgerEntry* Ledger::find(std::string_view signature) {
  for (LedgerEntry& e : entries)
    if (e.signature == signature) return &e;
  return nullptr;
}

const LedgerEntry* Ledger::find(std::string_view signature) const {
  return const_cast<Ledger*>(this)->find(signature);
}

std::string iso_utc(std::time_t t) {
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

std::time_t parse_iso_utc(std::string_view text) {
  std::tm tm{};
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  const std::string t(text);
  const int n = std::sscanf(t.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d", &y, &mo, &d, &h, &mi, &s);
  if (n != 3 && n != 6) return -1;
  if (mo < 1 || mo > 12 || d < 1 || d > 31) return -1;
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  return ::timegm(&tm);
}

std::int64_t days_since(std::string_view first_seen, std::time_t now) {
  const std::time_t t = parse_iso_utc(first_seen);
  if (t < 0 || now < t) return 0;
  return static_cast<std::int64_t>((now - t) / 86400);
}

std::string ledger_to_json(const Ledger& ledger, std::time_t now) {
  Json bugs = Json::array();
  for (const LedgerEntry* e : ordered(ledger))
    bugs.push_back({{"signature", e->signature},
                    {"status", e->status},
                    {"anchor", e->anchor},
                    {"first_seen", e->first_seen},
                    {"last_seen", e->last_seen},
                    {"days_since_found", days_since(e->first_seen, now)},
                    {"count", e->count},
                    {"kinds", e->kinds},
                    {"regressions", e->regressions},
                    {"ops", e->ops},
                    {"specials", e->specials},
                    {"minimal_program", e->minimal_program},
                    {"example", e->example},
                    {"repro_cpp", e->repro_cpp},
                    {"repro_cmake", e->repro_cmake},
                    {"repro_python", e->repro_python},
                    {"repro_shell", e->repro_shell},
                    {"pre_signatures", e->pre_signatures},
                    {"f32_signature", e->f32_signature},
                    {"reverse_signature", e->reverse_signature},
                    {"culprit_signature", e->culprit_signature},
                    {"roots", e->roots},
                    {"root_words", e->root_words},
                    {"patches", e->patches}});
  const Json doc = {{"format", kFormat},
                    {"target", ledger.target},
                    {"updated", iso_utc(now)},
                    {"bugs", std::move(bugs)}};
  // Invalid UTF-8 (a program's text is ours, but an anchor comes from a hand-edited file) is
  // replaced rather than thrown on: the ledger must always be written.
  return doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string ledger_from_json(std::string_view text, Ledger& out) {
  Json doc;
  try {
    doc = Json::parse(text);
  } catch (const Json::parse_error& e) {
    return std::string("ledger.json: ") + e.what();
  }
  if (!doc.is_object() || string_or(doc, "format") != kFormat)
    return fmt::format("ledger.json: format is not {}", kFormat);
  Ledger ledger;
  ledger.target = string_or(doc, "target");
  const auto bugs = doc.find("bugs");
  if (bugs == doc.end() || !bugs->is_array()) return "ledger.json: no \"bugs\" array";
  for (const Json& b : *bugs) {
    if (!b.is_object()) return "ledger.json: an entry is not an object";
    LedgerEntry e;
    e.signature = string_or(b, "signature");
    if (e.signature.empty()) return "ledger.json: an entry has no signature";
    e.status = string_or(b, "status", "new");
    e.anchor = string_or(b, "anchor");
    e.first_seen = string_or(b, "first_seen");
    e.last_seen = string_or(b, "last_seen");
    e.count = static_cast<std::uint64_t>(std::max(0.0, number_or(b, "count")));
    e.kinds = strings(b, "kinds");
    e.regressions = strings(b, "regressions"); // absent before version-differential runs
    e.ops = strings(b, "ops");
    e.specials = strings(b, "specials");
    e.minimal_program = string_or(b, "minimal_program");
    e.example = string_or(b, "example");
    e.repro_cpp = string_or(b, "repro_cpp");
    e.repro_cmake = string_or(b, "repro_cmake");
    e.repro_python = string_or(b, "repro_python");
    e.repro_shell = string_or(b, "repro_shell"); // absent before backend failures were signed
    e.pre_signatures = strings(b, "pre_signatures");
    e.f32_signature = string_or(b, "f32_signature");         // absent in ledgers before dtypes
    e.reverse_signature = string_or(b, "reverse_signature"); // and before forward mode
    e.culprit_signature = string_or(b, "culprit_signature");
    e.roots = strings(b, "roots"); // absent before root causes
    e.root_words = strings(b, "root_words");
    e.patches = strings(b, "patches"); // absent before patches
    ledger.entries.push_back(std::move(e));
  }
  out = std::move(ledger);
  return "";
}

std::string ledger_to_markdown(const Ledger& ledger, std::time_t now) {
  std::size_t fresh = 0;
  for (const LedgerEntry& e : ledger.entries)
    fresh += e.status == "new" ? 1 : 0;
  // Root causes first: one line per fault, the signatures (op graphs) that reached it counted.
  struct Root {
    std::string key, words, status;
    std::uint64_t count = 0;
    std::vector<std::string> signatures;
    bool regression = false;
  };
  std::vector<Root> roots;
  for (const LedgerEntry* e : ordered(ledger)) {
    const std::string key = root_key_of(*e);
    auto it = std::find_if(roots.begin(), roots.end(), [&](const Root& r) { return r.key == key; });
    if (it == roots.end()) {
      Root root;
      root.key = key;
      root.words = fmt::format("{}", fmt::join(e->root_words, " + "));
      root.status = "new";
      roots.push_back(std::move(root));
      it = roots.end() - 1;
    }
    it->count += e->count;
    it->signatures.push_back(e->signature);
    it->regression = it->regression || !e->regressions.empty();
    // Known when any of its signatures is known by the list: they are one fault.
    if (e->status != "new" && it->status == "new")
      it->status = e->status + (e->anchor.empty() ? "" : " (" + e->anchor + ")");
  }
  std::size_t fresh_roots = 0;
  for (const Root& r : roots)
    fresh_roots += r.status == "new" ? 1 : 0;
  std::string out = fmt::format(
      "# BurnMark campaign ledger ({})\n\nUpdated {}. {} root causes, {} new; {} distinct "
      "signatures (op graphs), {} new (not yet in corpus/known_bugs.txt).\n\n"
      "## Root causes\n\n| root | status | count | signatures | fault |\n|---|---|---|---|---|\n",
      ledger.target.empty() ? "-" : ledger.target, iso_utc(now), roots.size(), fresh_roots,
      ledger.entries.size(), fresh);
  for (const Root& r : roots)
    out += fmt::format("| `{}` | {} | {} | {} | {}{} |\n", r.key, md_cell(r.status), r.count,
                       md_cell(fmt::format("{}", fmt::join(r.signatures, ", "))), md_cell(r.words),
                       r.regression ? "; REGRESSION" : "");
  out += "\n## Signatures\n\n"
         "| signature | status | days since found | count | first seen | last seen | kinds | ops "
         "| patches | repro |\n|---|---|---|---|---|---|---|---|---|---|\n";
  for (const LedgerEntry* e : ordered(ledger)) {
    std::string status = e->status;
    if (!e->anchor.empty()) status += " (" + e->anchor + ")";
    std::string repro;
    for (const std::string* p : {&e->repro_cpp, &e->repro_python, &e->repro_shell})
      if (!p->empty()) repro += (repro.empty() ? "" : ", ") + fmt::format("[{}]({})", *p, *p);
    out += fmt::format("| `{}` | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", e->signature,
                       md_cell(status), days_since(e->first_seen, now), e->count,
                       md_cell(e->first_seen), md_cell(e->last_seen), md_cell(kinds_cell(*e)),
                       md_cell(fmt::format("{}", fmt::join(e->ops, " -> "))),
                       md_cell(fmt::format("{}", fmt::join(e->patches, ", "))), md_cell(repro));
  }
  for (const LedgerEntry* e : ordered(ledger))
    out += fmt::format("\n## {}\n\n{} {} times, first {}, last {}.{}\n\n```\n{}```\n", e->signature,
                       e->status, e->count, e->first_seen, e->last_seen,
                       (e->example.empty() ? "" : " Example input: `" + e->example + "`.") +
                           (e->patches.empty() ? ""
                                               : fmt::format(" First seen with patches {}.",
                                                             fmt::join(e->patches, ", "))),
                       e->minimal_program);
  return out;
}

std::string save_ledger(const std::filesystem::path& dir, const Ledger& ledger, std::time_t now) {
  // JSON first: it is the one a continued campaign reads back.
  std::string error = write_file_atomically(dir / "ledger.json", ledger_to_json(ledger, now));
  if (error.empty())
    error = write_file_atomically(dir / "ledger.md", ledger_to_markdown(ledger, now));
  return error;
}

std::string load_ledger(const std::filesystem::path& dir, Ledger& out) {
  const std::filesystem::path path = dir / "ledger.json";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    out = Ledger{};
    return "";
  }
  std::string text;
  if (!read_whole_file(path, text)) return fmt::format("cannot read {}", path.string());
  std::string error = ledger_from_json(text, out);
  return error.empty() ? "" : fmt::format("{}: {}", path.string(), error);
}

} // namespace burnmark
