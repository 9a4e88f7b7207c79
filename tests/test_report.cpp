// `burnmark report` and the campaign's time series: timeseries.tsv survives kills and continues
// across resumes; the page escapes every text it shows; and on a real short campaign (the planted
// plugin of test_campaign) the page opened in headless Chromium loads without script errors, draws
// its four plots with one row per recorded sample, and every link in it resolves to a file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "burnmark/campaign/atomic_file.h"
#include "burnmark/campaign/ledger.h"
#include "burnmark/campaign/timeseries.h"
#include "burnmark/report/report.h"

#include "scratch_dir.h"

using namespace burnmark;
namespace fs = std::filesystem;
using burnmark::testing::scratch_dir;

namespace {

std::string slurp(const fs::path& p) {
  std::string s;
  read_whole_file(p, s);
  return s;
}

int sh(const std::string& cmd) {
  const int raw = std::system(cmd.c_str());
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
}

TimeSample sample(double elapsed, std::uint64_t execs, std::uint64_t bugs) {
  TimeSample s;
  s.elapsed_s = elapsed;
  s.unix_time = 1796000000 + static_cast<std::time_t>(elapsed);
  s.execs = execs;
  s.exec_per_s = 100;
  s.coverage = 1000 + execs / 10;
  s.features = 2000;
  s.corpus = 30;
  s.bugs = bugs;
  return s;
}

// Percent-decoding of a URL path (the page encodes everything but letters, digits, "-._~/").
std::string url_decode(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i)
    if (s[i] == '%' && i + 2 < s.size()) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  return out;
}

// Every href/src of `page`: "#id" must name an element of the page, anything else a file
// relative to the page. Returns the links checked.
std::set<std::string> expect_links_resolve(const fs::path& page) {
  const std::string html = slurp(page);
  std::set<std::string> links;
  const std::regex attr(R"re((?:href|src)="([^"]*)")re");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), attr); it != std::sregex_iterator();
       ++it) {
    const std::string link = (*it)[1];
    links.insert(link);
    EXPECT_EQ(link.find("://"), std::string::npos) << "not a relative link: " << link;
    if (link.starts_with("#")) {
      EXPECT_NE(html.find("id=\"" + link.substr(1) + "\""), std::string::npos) << link;
      continue;
    }
    EXPECT_TRUE(fs::is_regular_file(page.parent_path() / url_decode(link)))
        << link << " from " << page;
  }
  return links;
}

// The page after Chromium ran its scripts ("" when Chromium failed).
std::string dom_of(const fs::path& page, const fs::path& profile) {
  const fs::path out = profile.parent_path() / "dom.html";
  // --virtual-time-budget: the page's scripts run on virtual time, so a loaded machine cannot
  // cut them short. --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  const int rc =
      sh(fmt::format("chromium --headless --no-sandbox --disable-gpu "
                     "--user-data-dir={} --virtual-time-budget=10000 --dump-dom "
                     "'file://{}' >{} 2>{}.err",
                     profile.string(), fs::absolute(page).string(), out.string(), out.string()));
  EXPECT_EQ(rc, 0) << slurp(out.string() + ".err");
  return slurp(out);
}

bool have_chromium() {
  return sh("command -v chromium >/dev/null 2>&1") == 0;
}

// Skips without Chromium on a developer's machine; CI (CI set, tools/install-deps.sh installs
// Chromium) must have it.
#define REQUIRE_CHROMIUM()                                                                         \
  if (!have_chromium()) {                                                                          \
    if (std::getenv("CI") != nullptr) FAIL() << "CI is set but chromium is not installed";         \
    GTEST_SKIP() << "no chromium on PATH (tools/install-deps.sh installs Debian's chromium)";      \
  }

// What the page's plot div `id` says it drew ("" when it drew nothing).
std::string drawn_rows(const std::string& dom, const std::string& id) {
  const std::regex div("<div class=\"plot\" id=\"" + id + "\"[^>]*data-drawn-rows=\"([0-9]+)\"");
  std::smatch m;
  if (!std::regex_search(dom, m, div)) return "";
  // The plot holds its canvas (dygraphs draws into canvases inside the div).
  const std::size_t at = static_cast<std::size_t>(m.position(0));
  EXPECT_NE(dom.find("<canvas", at), std::string::npos) << id;
  return m[1];
}

} // namespace

TEST(TimeSeries, AppendsLinesAndAResumedCampaignContinuesTimeAndExecutions) {
  const fs::path dir = scratch_dir("resume");
  {
    TimeSeriesWriter w;
    ASSERT_EQ(w.open(dir), "");
    EXPECT_EQ(w.append(sample(3, 100, 0)), "");
    EXPECT_EQ(w.append(sample(6.5, 250, 1)), "");
  }
  {
    // A second campaign: libFuzzer counts from 0 again, and its clock starts at 0.
    TimeSeriesWriter w;
    ASSERT_EQ(w.open(dir), "");
    EXPECT_EQ(w.elapsed_offset(), 6.5);
    EXPECT_EQ(w.execs_offset(), 250u);
    EXPECT_EQ(w.append(sample(2, 40, 1)), "");
  }
  const std::vector<TimeSample> s = load_timeseries(dir);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[1].elapsed_s, 6.5);
  EXPECT_EQ(s[2].elapsed_s, 8.5); // 6.5 + 2
  EXPECT_EQ(s[2].execs, 290u);    // 250 + 40
  EXPECT_EQ(s[2].bugs, 1u);
  EXPECT_EQ(s[0].coverage, 1010u);
  EXPECT_TRUE(slurp(dir / "timeseries.tsv").starts_with("# burnmark-timeseries-1\n"));
}

TEST(TimeSeries, ALineCutByAKillIsSkippedAndTheNextSampleStartsALineOfItsOwn) {
  const fs::path dir = scratch_dir("cut");
  {
    TimeSeriesWriter w;
    ASSERT_EQ(w.open(dir), "");
    EXPECT_EQ(w.append(sample(3, 100, 0)), "");
  }
  // A kill in the middle of a write: half a line, no newline.
  const std::string half = time_sample_line(sample(6, 200, 0)).substr(0, 12);
  {
    const int fd = ::open((dir / "timeseries.tsv").c_str(), O_WRONLY | O_APPEND);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, half.data(), half.size()), static_cast<ssize_t>(half.size()));
    ::close(fd);
  }
  EXPECT_EQ(load_timeseries(dir).size(), 1u);
  TimeSeriesWriter w;
  ASSERT_EQ(w.open(dir), "");
  EXPECT_EQ(w.elapsed_offset(), 3.0); // the whole line before the cut one
  EXPECT_EQ(w.append(sample(1, 10, 0)), "");
  const std::vector<TimeSample> s = load_timeseries(dir);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[1].elapsed_s, 4.0);
  EXPECT_EQ(s[1].execs, 110u);
}

TEST(Report, EscapesTextAndEncodesLinks) {
  EXPECT_EQ(html_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(url_path("ab/c d#e%.py"), "ab/c%20d%23e%25.py");
  Ledger l;
  LedgerEntry e;
  e.signature = "0123456789ab";
  e.status = "new";
  e.count = 3;
  e.first_seen = "2026-11-01T10:00:00Z";
  e.kinds = {"libtorch:gradient"};
  e.minimal_program = "%0 = leaf f32[1] [0]\n</pre><script>alert(1)</script>\n";
  e.root_words = {"culprit=<b>x</b>"};
  l.entries = {e};
  const std::string page =
      render_report({ReportCampaign{"dir</script>", l, {sample(1, 1, 1)}}}, ".", 0, true);
  EXPECT_EQ(page.find("<script>alert"), std::string::npos);
  EXPECT_NE(page.find("&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(page.find("culprit=&lt;b&gt;x&lt;/b&gt;"), std::string::npos);
  // The campaign's name in the plots' labels, inside a script: no "</script>" may end it.
  EXPECT_EQ(page.find("dir</script>"), std::string::npos);
  EXPECT_NE(page.find("\"dir\\u003c/script\\u003e\""), std::string::npos);
}

TEST(ReportCommand, ARealCampaignsPageLoadsDrawsItsPlotsAndEveryLinkResolves) {
  REQUIRE_CHROMIUM();
  const fs::path dir = scratch_dir("campaign");
  const std::string cli = BURNMARK_CAMPAIGN_CLI;
  const std::string env = "cd " + dir.string() +
                          " && env -u BACKENDS -u MODE -u BURNMARK_FINDINGS_DIR BACKENDS=ref," +
                          BURNMARK_PLANTED_PLUGIN + " ";
  const int campaign = sh(env + cli + " campaign --fuzzer " + BURNMARK_FUZZ_AUTOGRAD +
                          " --time 8 --workers 2 --out findings --seeds " +
                          BURNMARK_TEST_SOURCE_DIR + "/corpus/fuzz_autograd -- -seed=7 >out 2>err");
  ASSERT_EQ(campaign, 1) << slurp(dir / "err"); // the planted bug is new
  // The samples, counted from the file itself: every line not a comment.
  std::size_t samples = 0;
  {
    const std::string tsv = slurp(dir / "findings" / "timeseries.tsv");
    for (std::size_t at = 0, eol; (eol = tsv.find('\n', at)) != std::string::npos; at = eol + 1)
      samples += tsv[at] != '#' ? 1 : 0;
  }
  ASSERT_GE(samples, 1u); // at least the final one
  Ledger ledger;
  ASSERT_EQ(load_ledger(dir / "findings", ledger), "");
  ASSERT_GE(ledger.entries.size(), 1u);

  // A second "campaign" beside it, hand-made, whose text tries to break out of the page.
  const fs::path other = dir / "other";
  fs::create_directories(other);
  Ledger hostile;
  hostile.target = "fuzz_autograd";
  LedgerEntry e;
  e.signature = "fedcba987654";
  e.status = "new";
  e.count = 1;
  e.minimal_program = "</pre><script>document.title = 'broken';</script>";
  hostile.entries = {e};
  ASSERT_EQ(save_ledger(other, hostile, 0), "");
  {
    TimeSeriesWriter w;
    ASSERT_EQ(w.open(other), "");
    ASSERT_EQ(w.append(sample(4321, 10, 1)), ""); // at a time the real campaign never reached
  }

  struct Case {
    std::string args;
    fs::path page;
    std::size_t rows;
  };
  const Case cases[] = {
      {"report findings", dir / "findings" / "report.html", samples},
      {"report --out pages/all/index.html findings other", dir / "pages" / "all" / "index.html",
       samples + 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args);
    ASSERT_EQ(sh(env + cli + " " + c.args + " >out 2>err"), 0) << slurp(dir / "err");
    const std::set<std::string> links = expect_links_resolve(c.page);
    for (const LedgerEntry& entry : ledger.entries)
      EXPECT_TRUE(std::any_of(links.begin(), links.end(), [&](const std::string& l) {
        return l.ends_with(entry.repro_cpp);
      })) << entry.repro_cpp;
    EXPECT_TRUE(links.count("dygraph.min.js")) << "the plotting library beside the page";
    const std::string dom = dom_of(c.page, dir / "profile");
    ASSERT_FALSE(dom.empty());
    EXPECT_EQ(dom.find("data-js-errors"), std::string::npos) << dom;
    EXPECT_NE(dom.find("<title>BurnMark campaign report</title>"), std::string::npos);
    for (const char* plot : {"plot-exec-per-s", "plot-coverage", "plot-corpus", "plot-bugs"})
      EXPECT_EQ(drawn_rows(dom, plot), std::to_string(c.rows)) << plot;
  }
}
