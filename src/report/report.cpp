// The campaign report page (see report.h): HTML written by hand, every piece of text escaped,
// the time series handed to dygraphs as numeric arrays.
#include "burnmark/report/report.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "burnmark/campaign/atomic_file.h"

namespace burnmark {

namespace {

namespace fs = std::filesystem;

constexpr const char* kPlotScript = "dygraph.min.js";
constexpr const char* kPlotStyle = "dygraph.min.css";

// A JavaScript string literal that is also safe inside <script> (no "</script>", no "<!--").
std::string js_string(std::string_view text) {
  std::string out = "\"";
  for (const unsigned char c : text) {
    if (c == '"' || c == '\\')
      out += fmt::format("\\{}", static_cast<char>(c));
    else if (c < 0x20 || c == '<' || c == '>' || c == '&')
      out += fmt::format("\\u{:04x}", c);
    else
      out += static_cast<char>(c);
  }
  return out + "\"";
}

// A link to dir/relative when that file exists, else the name as plain text.
std::string file_link(const fs::path& dir, const std::string& relative, const fs::path& page_dir,
                      std::string_view text = "") {
  const std::string shown = html_escape(text.empty() ? std::string_view(relative) : text);
  std::error_code ec;
  const fs::path target = dir / relative;
  if (relative.empty() || !fs::is_regular_file(target, ec))
    return fmt::format("<span class=\"missing\" title=\"not on disk\">{}</span>", shown);
  const fs::path rel = fs::proximate(fs::absolute(target, ec), fs::absolute(page_dir, ec), ec);
  return fmt::format("<a href=\"{}\">{}</a>", html_escape(url_path(rel.generic_string())), shown);
}

// Most inputs first, as ledger.md orders them; first seen breaks ties so the order is stable.
std::vector<const LedgerEntry*> by_count(const Ledger& ledger) {
  std::vector<const LedgerEntry*> out;
  for (const LedgerEntry& e : ledger.entries)
    out.push_back(&e);
  std::stable_sort(out.begin(), out.end(), [](const LedgerEntry* a, const LedgerEntry* b) {
    if (a->count != b->count) return a->count > b->count;
    return a->first_seen < b->first_seen;
  });
  return out;
}

// "libtorch:gradient" -> backend "libtorch", kind "gradient"; each distinct one once.
std::pair<std::string, std::string> backends_and_kinds(const LedgerEntry& e) {
  std::set<std::string> backends, kinds;
  for (const std::string& k : e.kinds) {
    const std::size_t colon = k.find(':');
    backends.insert(colon == std::string::npos ? k : k.substr(0, colon));
    kinds.insert(colon == std::string::npos ? "" : k.substr(colon + 1));
  }
  kinds.erase("");
  return {fmt::format("{}", fmt::join(backends, ", ")), fmt::format("{}", fmt::join(kinds, ", "))};
}

// What the bug is, in words: its root cause, and the older releases that agreed (a regression).
std::string verdict(const LedgerEntry& e) {
  std::string out = fmt::format("{}", fmt::join(e.root_words, " + "));
  for (const std::string& r : e.regressions)
    out += (out.empty() ? "" : "; ") + fmt::format("REGRESSION {}", r);
  return out.empty() ? "-" : out;
}

std::string bug_id(std::size_t campaign, const std::string& signature) {
  return fmt::format("bug-{}-{}", campaign, signature);
}

// One plot's data: a row [minutes, value per campaign] per sample, other campaigns null there
// (dygraphs connects across the gaps), in time order. Not merged by time: two samples of one
// campaign within the same tenth of a second are both drawn.
std::string plot_rows(const std::vector<ReportCampaign>& campaigns,
                      std::uint64_t TimeSample::*field) {
  std::vector<std::pair<double, std::vector<std::string>>> rows;
  for (std::size_t c = 0; c < campaigns.size(); ++c)
    for (const TimeSample& s : campaigns[c].series) {
      std::vector<std::string> values(campaigns.size(), "null");
      values[c] = fmt::format("{}", s.*field);
      rows.emplace_back(s.elapsed_s / 60.0, std::move(values));
    }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out = "[";
  for (const auto& [minutes, values] : rows)
    out += fmt::format("{}[{},{}]", out.size() > 1 ? "," : "", minutes, fmt::join(values, ","));
  return out + "]";
}

std::string campaign_summary(const ReportCampaign& c, const fs::path& page_dir) {
  std::size_t fresh = 0;
  for (const LedgerEntry& e : c.ledger.entries)
    fresh += e.status == "new" ? 1 : 0;
  std::string last = "no time series recorded (timeseries.tsv)";
  if (!c.series.empty()) {
    const TimeSample& s = c.series.back();
    last = fmt::format("{:.0f} s fuzzed, {} executions, coverage {}, corpus {}, {} crashes in the "
                       "last run, last sample {}",
                       s.elapsed_s, s.execs, s.coverage, s.corpus, s.crashes, iso_utc(s.unix_time));
  }
  return fmt::format(
      "<li><code>{}</code> ({}): {} distinct bugs, {} new; {}. Files: {}, {}, {}.</li>\n",
      html_escape(c.dir.string()), html_escape(c.ledger.target.empty() ? "-" : c.ledger.target),
      c.ledger.entries.size(), fresh, html_escape(last), file_link(c.dir, "ledger.md", page_dir),
      file_link(c.dir, "ledger.json", page_dir),
      file_link(c.dir, std::string(kTimeSeriesFile), page_dir));
}

std::string ledger_table(const std::vector<ReportCampaign>& campaigns, std::time_t now) {
  const bool several = campaigns.size() > 1;
  std::string out = fmt::format(
      "<table class=\"ledger\">\n<thead><tr>{}<th>signature</th><th>status</th><th>days since "
      "found</th><th>first seen</th><th>last seen</th><th>count</th><th>backend</th><th>kind</th>"
      "<th>ops</th><th>verdict</th></tr></thead>\n<tbody>\n",
      several ? "<th>campaign</th>" : "");
  std::size_t rows = 0;
  for (std::size_t c = 0; c < campaigns.size(); ++c)
    for (const LedgerEntry* e : by_count(campaigns[c].ledger)) {
      const auto [backends, kinds] = backends_and_kinds(*e);
      const std::string status = e->status + (e->anchor.empty() ? "" : " (" + e->anchor + ")");
      out += fmt::format(
          "<tr class=\"status-{}\">{}<td><a href=\"#{}\"><code>{}</code></a></td><td>{}</td>"
          "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
          "<td>{}</td></tr>\n",
          html_escape(e->status),
          several ? fmt::format("<td>{}</td>", html_escape(campaigns[c].dir.string())) : "",
          html_escape(bug_id(c, e->signature)), html_escape(e->signature), html_escape(status),
          days_since(e->first_seen, now), html_escape(e->first_seen), html_escape(e->last_seen),
          e->count, html_escape(backends), html_escape(kinds),
          html_escape(fmt::format("{}", fmt::join(e->ops, " → "))), html_escape(verdict(*e)));
      ++rows;
    }
  if (rows == 0)
    out += fmt::format("<tr><td colspan=\"{}\">no bugs found</td></tr>\n", several ? 11 : 10);
  return out + "</tbody>\n</table>\n";
}

std::string bug_sections(const std::vector<ReportCampaign>& campaigns, const fs::path& page_dir) {
  std::string out;
  for (std::size_t c = 0; c < campaigns.size(); ++c)
    for (const LedgerEntry* e : by_count(campaigns[c].ledger)) {
      const fs::path& dir = campaigns[c].dir;
      std::string files;
      for (const std::string* f :
           {&e->repro_cpp, &e->repro_cmake, &e->repro_python, &e->repro_shell, &e->example})
        if (!f->empty()) files += "<li>" + file_link(dir, *f, page_dir) + "</li>";
      files += "<li>" + file_link(dir, e->signature + "/minimal.txt", page_dir) + "</li>";
      out += fmt::format("<section class=\"bug\" id=\"{}\">\n<h3><code>{}</code> {}</h3>\n"
                         "<p>{} inputs, first seen {}, last seen {}{}.</p>\n<pre>{}</pre>\n"
                         "<ul class=\"files\">{}</ul>\n</section>\n",
                         html_escape(bug_id(c, e->signature)), html_escape(e->signature),
                         html_escape(e->status), e->count, html_escape(e->first_seen),
                         html_escape(e->last_seen),
                         campaigns.size() > 1 ? " in " + html_escape(dir.string()) : "",
                         html_escape(e->minimal_program), files);
    }
  return out;
}

// Plots: exec/s, coverage, corpus size and distinct bugs, one line per campaign. Each plot's
// drawCallback records the rows it drew (data-drawn-rows) so a test can see it really drew, and
// any script error is recorded on <html data-js-errors> and shown on the page.
std::string plots_script(const std::vector<ReportCampaign>& campaigns) {
  std::string labels = "[\"minutes\"";
  for (const ReportCampaign& c : campaigns)
    labels += "," + js_string(c.dir.string());
  labels += "]";
  struct Plot {
    const char* id;
    const char* title;
    std::uint64_t TimeSample::*field;
  };
  const Plot plots[] = {{"plot-exec-per-s", "executions per second", &TimeSample::exec_per_s},
                        {"plot-coverage", "coverage (libFuzzer cov)", &TimeSample::coverage},
                        {"plot-corpus", "corpus size (inputs)", &TimeSample::corpus},
                        {"plot-bugs", "distinct bugs (ledger signatures)", &TimeSample::bugs}};
  std::string out = "<script>\n\"use strict\";\nconst labels = " + labels + ";\n";
  out += "function plot(id, title, rows) {\n"
         "  const div = document.getElementById(id);\n"
         "  new Dygraph(div, rows, {labels: labels, title: title, xlabel: \"minutes\",\n"
         "    connectSeparatedPoints: true, drawPoints: rows.length < 50, legend: \"always\",\n"
         "    includeZero: true,\n"
         "    drawCallback: function (g) { div.dataset.drawnRows = g.numRows(); }});\n"
         "}\n";
  for (const Plot& p : plots)
    out += fmt::format("plot({}, {}, {});\n", js_string(p.id), js_string(p.title),
                       plot_rows(campaigns, p.field));
  return out + "</script>\n";
}

constexpr std::string_view kStyle = R"(<style>
body { font-family: sans-serif; margin: 1.5em; color: #222; }
table.ledger { border-collapse: collapse; font-size: 0.9em; }
table.ledger th, table.ledger td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; }
tr.status-new td { background: #fff4e5; }
.plots { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 1.5em; }
.plot { height: 260px; }
pre { background: #f6f6f6; padding: 0.6em; overflow-x: auto; }
.missing { color: #999; }
#js-errors { color: #b00; }
#js-errors:empty { display: none; }
</style>
)";

// First in <head>: catches errors of every later script, and a script file that fails to load
// (capture phase: such errors do not bubble).
constexpr std::string_view kErrorCatcher = R"(<script>
const burnmarkErrors = [];
function showErrors() {
  const shown = document.getElementById("js-errors");
  if (shown) shown.textContent = burnmarkErrors.join("\n");
}
window.addEventListener("error", function (ev) {
  burnmarkErrors.push("script error: " +
      (ev.message || "cannot load " + (ev.target && (ev.target.src || ev.target.href))));
  document.documentElement.dataset.jsErrors = String(burnmarkErrors.length);
  showErrors();
}, true);
document.addEventListener("DOMContentLoaded", showErrors);
</script>
)";

} // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    case '\'': out += "&#39;"; break;
    default: out += c;
    }
  }
  return out;
}

std::string url_path(std::string_view relative_path) {
  std::string out;
  for (const unsigned char c : relative_path) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '-' || c == '.' || c == '_' || c == '~' || c == '/';
    out += plain ? std::string(1, static_cast<char>(c)) : fmt::format("%{:02X}", c);
  }
  return out;
}

std::string load_report_campaign(const fs::path& dir, ReportCampaign& out) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return fmt::format("{}: not a directory", dir.string());
  if (!fs::exists(dir / "ledger.json", ec) && !fs::exists(dir / kTimeSeriesFile, ec))
    return fmt::format("{}: no ledger.json or {} (not a campaign directory)", dir.string(),
                       kTimeSeriesFile);
  out.dir = dir;
  if (std::string e = load_ledger(dir, out.ledger); !e.empty()) return e;
  out.series = load_timeseries(dir);
  return "";
}

std::string render_report(const std::vector<ReportCampaign>& campaigns, const fs::path& page_dir,
                          std::time_t now, bool with_plots) {
  bool any_series = false;
  for (const ReportCampaign& c : campaigns)
    any_series = any_series || !c.series.empty();
  std::string page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  page += "<title>BurnMark campaign report</title>\n";
  page += kErrorCatcher;
  page += kStyle;
  if (with_plots && any_series)
    page += fmt::format("<link rel=\"stylesheet\" href=\"{}\">\n<script src=\"{}\"></script>\n",
                        kPlotStyle, kPlotScript);
  page += "</head>\n<body>\n<h1>BurnMark campaign report</h1>\n<pre id=\"js-errors\"></pre>\n";
  page +=
      fmt::format("<p>Written {} by <code>burnmark report</code>.</p>\n<ul class=\"campaigns\">\n",
                  iso_utc(now));
  for (const ReportCampaign& c : campaigns)
    page += campaign_summary(c, page_dir);
  page += "</ul>\n<h2>Over time</h2>\n";
  if (!any_series)
    page += "<p>No time series: these campaigns predate timeseries.tsv.</p>\n";
  else if (!with_plots)
    page += "<p>No plots: the plotting library (Debian's libjs-dygraphs) was not found when this "
            "page was written.</p>\n";
  else
    page += "<div class=\"plots\"><div class=\"plot\" id=\"plot-exec-per-s\"></div>"
            "<div class=\"plot\" id=\"plot-coverage\"></div><div class=\"plot\" "
            "id=\"plot-corpus\"></div><div class=\"plot\" id=\"plot-bugs\"></div></div>\n";
  page += "<h2>Ledger</h2>\n" + ledger_table(campaigns, now);
  page += "<h2>Bugs</h2>\n" + bug_sections(campaigns, page_dir);
  if (with_plots && any_series) page += plots_script(campaigns);
  return page + "</body>\n</html>\n";
}

fs::path plot_library_dir() {
  return BURNMARK_DYGRAPHS_DIR;
}

std::string write_report(const std::vector<ReportCampaign>& campaigns, const fs::path& out,
                         std::time_t now, std::string& warning) {
  std::error_code ec;
  const fs::path page_dir = out.has_parent_path() ? out.parent_path() : fs::path(".");
  fs::create_directories(page_dir, ec);
  const fs::path lib = plot_library_dir();
  bool with_plots = true;
  for (const char* f : {kPlotScript, kPlotStyle}) {
    fs::copy_file(lib / f, page_dir / f, fs::copy_options::overwrite_existing, ec);
    if (ec) {
      with_plots = false;
      warning = fmt::format("no plots: cannot copy {} ({}; install Debian's libjs-dygraphs)",
                            (lib / f).string(), ec.message());
      break;
    }
  }
  return write_file_atomically(out, render_report(campaigns, page_dir, now, with_plots));
}

} // namespace burnmark
