// `burnmark report DIR [DIR...] [--out FILE]`: the static HTML page of one or more campaign
// directories (burnmark_report, report.h): ledger, bugs with their reproducers, plots over time.
#include <filesystem>

#include <fmt/format.h>

#include "app.h"
#include "burnmark/report/report.h"
#include "cli_common.h"
#include "commands.h"

namespace burnmark::cli {

Action define_report(CLI::App& app) {
  struct Args {
    std::vector<std::string> dirs;
    std::string out;
  };
  auto a = std::make_shared<Args>();
  app.add_option("--out", a->out, "the page to write (default DIR/report.html, DIR the first)")
      ->type_name("FILE");
  app.add_option("DIR", a->dirs, "campaign directories (burnmark campaign --out)")->required();
  return [a](std::span<const std::string>) {
    std::vector<ReportCampaign> campaigns;
    for (const std::string& d : a->dirs) {
      ReportCampaign c;
      if (const std::string e = load_report_campaign(d, c); !e.empty())
        return usage_error("report: " + e);
      campaigns.push_back(std::move(c));
    }
    const std::filesystem::path out = a->out.empty()
                                          ? std::filesystem::path(a->dirs.front()) / "report.html"
                                          : std::filesystem::path(a->out);
    std::string warning;
    if (const std::string e = write_report(campaigns, out, std::time(nullptr), warning); !e.empty())
      return usage_error("report: " + e);
    if (!warning.empty()) fmt::print(stderr, "report: {}\n", warning);
    fmt::print("REPORT {}\n", out.string());
    return kExitAgree;
  };
}

} // namespace burnmark::cli
