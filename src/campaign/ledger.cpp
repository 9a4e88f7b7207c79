// The ledger's JSON schema and Markdown rendering (see ledger.h).
#include "burnmark/campaign/ledger.h"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "burnmark/campaign/atomic_file.h"
#include "json.h"

namespace burnmark {

namespace {

constexpr std::string_view kFormat = "burnmark-ledger-1";

std::string json_strings(const std::vector<std::string>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i)
    out += (i ? ", " : "") + json::quote(v[i]);
  return out + "]";
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
    if (a->count != b->count) return a->count > b->count;
    return a->first_seen < b->first_seen;
  });
  return out;
}

} // namespace

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
  std::string out =
      fmt::format("{{\n  \"format\": {},\n  \"target\": {},\n  \"updated\": {},\n"
                  "  \"bugs\": [",
                  json::quote(kFormat), json::quote(ledger.target), json::quote(iso_utc(now)));
  bool first = true;
  for (const LedgerEntry* e : ordered(ledger)) {
    out += first ? "\n" : ",\n";
    first = false;
    out += fmt::format(
        "    {{\"signature\": {}, \"status\": {}, \"anchor\": {},\n"
        "     \"first_seen\": {}, \"last_seen\": {}, \"days_since_found\": {}, \"count\": {},\n"
        "     \"kinds\": {}, \"ops\": {}, \"specials\": {},\n"
        "     \"minimal_program\": {},\n"
        "     \"example\": {}, \"repro_cpp\": {}, \"repro_cmake\": {}, \"repro_python\": {},\n"
        "     \"pre_signatures\": {}, \"f32_signature\": {}, \"reverse_signature\": {},\n"
        "     \"culprit_signature\": {}}}",
        json::quote(e->signature), json::quote(e->status), json::quote(e->anchor),
        json::quote(e->first_seen), json::quote(e->last_seen), days_since(e->first_seen, now),
        e->count, json_strings(e->kinds), json_strings(e->ops), json_strings(e->specials),
        json::quote(e->minimal_program), json::quote(e->example), json::quote(e->repro_cpp),
        json::quote(e->repro_cmake), json::quote(e->repro_python), json_strings(e->pre_signatures),
        json::quote(e->f32_signature), json::quote(e->reverse_signature),
        json::quote(e->culprit_signature));
  }
  out += first ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

std::string ledger_from_json(std::string_view text, Ledger& out) {
  std::string error;
  const std::optional<json::Value> doc = json::parse(text, error);
  if (!doc) return "ledger.json: " + error;
  if (doc->string_or("format") != kFormat)
    return fmt::format("ledger.json: format is not {}", kFormat);
  Ledger ledger;
  ledger.target = doc->string_or("target");
  const json::Value* bugs = doc->get("bugs");
  const json::Array* array = bugs ? std::get_if<json::Array>(&bugs->v) : nullptr;
  if (array == nullptr) return "ledger.json: no \"bugs\" array";
  for (const json::Value& b : *array) {
    LedgerEntry e;
    e.signature = b.string_or("signature");
    if (e.signature.empty()) return "ledger.json: an entry has no signature";
    e.status = b.string_or("status", "new");
    e.anchor = b.string_or("anchor");
    e.first_seen = b.string_or("first_seen");
    e.last_seen = b.string_or("last_seen");
    e.count = static_cast<std::uint64_t>(std::max(0.0, b.number_or("count")));
    e.kinds = b.strings("kinds");
    e.ops = b.strings("ops");
    e.specials = b.strings("specials");
    e.minimal_program = b.string_or("minimal_program");
    e.example = b.string_or("example");
    e.repro_cpp = b.string_or("repro_cpp");
    e.repro_cmake = b.string_or("repro_cmake");
    e.repro_python = b.string_or("repro_python");
    e.pre_signatures = b.strings("pre_signatures");
    e.f32_signature = b.string_or("f32_signature");         // absent in ledgers before dtypes
    e.reverse_signature = b.string_or("reverse_signature"); // and before forward mode
    e.culprit_signature = b.string_or("culprit_signature");
    ledger.entries.push_back(std::move(e));
  }
  out = std::move(ledger);
  return "";
}

std::string ledger_to_markdown(const Ledger& ledger, std::time_t now) {
  std::size_t fresh = 0;
  for (const LedgerEntry& e : ledger.entries)
    fresh += e.status == "new" ? 1 : 0;
  std::string out = fmt::format(
      "# BurnMark campaign ledger ({})\n\nUpdated {}. {} distinct bugs, {} new (not yet in "
      "corpus/known_bugs.txt).\n\n"
      "| signature | status | days since found | count | first seen | last seen | kinds | ops "
      "| repro |\n|---|---|---|---|---|---|---|---|---|\n",
      ledger.target.empty() ? "-" : ledger.target, iso_utc(now), ledger.entries.size(), fresh);
  for (const LedgerEntry* e : ordered(ledger)) {
    std::string status = e->status;
    if (!e->anchor.empty()) status += " (" + e->anchor + ")";
    std::string repro;
    for (const std::string* p : {&e->repro_cpp, &e->repro_python})
      if (!p->empty()) repro += (repro.empty() ? "" : ", ") + fmt::format("[{}]({})", *p, *p);
    out += fmt::format("| `{}` | {} | {} | {} | {} | {} | {} | {} | {} |\n", e->signature,
                       md_cell(status), days_since(e->first_seen, now), e->count,
                       md_cell(e->first_seen), md_cell(e->last_seen),
                       md_cell(fmt::format("{}", fmt::join(e->kinds, ", "))),
                       md_cell(fmt::format("{}", fmt::join(e->ops, " -> "))), md_cell(repro));
  }
  for (const LedgerEntry* e : ordered(ledger))
    out += fmt::format("\n## {}\n\n{} {} times, first {}, last {}.{}\n\n```\n{}```\n", e->signature,
                       e->status, e->count, e->first_seen, e->last_seen,
                       e->example.empty() ? "" : " Example input: `" + e->example + "`.",
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
