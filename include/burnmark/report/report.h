// `burnmark report`: one static HTML page for one or more campaign directories: the ledger of
// each (status, first/last seen, counts, backend, kind, verdict), each bug's minimal program with
// links to its reproducer files, and plots over time of exec/s, coverage, corpus size and
// distinct bugs drawn from the campaign's timeseries.tsv (timeseries.h).
//
// The plots are drawn by dygraphs (Debian's libjs-dygraphs), whose script and stylesheet are
// copied next to the page, so the page works offline and from any file:// location. Every link
// on the page is relative to the page and is only written when its file exists.
#pragma once

#include <ctime>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "burnmark/campaign/ledger.h"
#include "burnmark/campaign/timeseries.h"

namespace burnmark {

struct ReportCampaign {
  std::filesystem::path dir; // the campaign directory, as given
  Ledger ledger;
  std::vector<TimeSample> series;
};

// Reads dir's ledger (load_ledger) and time series. "" on success, else a one-line reason.
std::string load_report_campaign(const std::filesystem::path& dir, ReportCampaign& out);

// Text made safe inside HTML elements and quoted attributes (& < > " ').
std::string html_escape(std::string_view text);
// A relative path as a URL path: bytes other than letters, digits, "-._~/" percent-encoded.
std::string url_path(std::string_view relative_path);

// The page for `campaigns`, its links relative to `page_dir`. `with_plots`: the plotting
// library is beside the page (else the page says how to get it, and has no plots).
std::string render_report(const std::vector<ReportCampaign>& campaigns,
                          const std::filesystem::path& page_dir, std::time_t now, bool with_plots);

// The plotting library's files (dygraph.min.js, dygraph.min.css), from Debian's libjs-dygraphs.
std::filesystem::path plot_library_dir();

// Writes the page to `out` and copies the plotting library beside it. "" on success, else a
// one-line reason; `warning` is set when the page was written without plots (no library).
std::string write_report(const std::vector<ReportCampaign>& campaigns,
                         const std::filesystem::path& out, std::time_t now, std::string& warning);

} // namespace burnmark
