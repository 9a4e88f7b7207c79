// Human-readable rendering of outcomes (see summary.h). Values print in the shortest form that
// round-trips, so a reader can paste them back into a program.
#include "burnmark/oracle/summary.h"

#include <fmt/format.h>

namespace burnmark {

std::string status_name(Status status) {
  switch (status) {
  case Status::Ok: return "ok";
  case Status::Error: return "error";
  case Status::Unsupported: return "unsupported";
  case Status::Crash: return "crash";
  case Status::Hang: return "hang";
  case Status::Oom: return "oom";
  }
  return "unknown";
}

std::string format_values(const HostTensor& tensor, std::size_t max_values) {
  const std::vector<double>& v = tensor.values;
  std::string out = "[";
  auto put = [&](std::size_t i) {
    if (out.size() > 1 && out.back() != ' ') out += ", ";
    fmt::format_to(std::back_inserter(out), "{}", v[i]);
  };
  if (v.size() <= max_values) {
    for (std::size_t i = 0; i < v.size(); ++i)
      put(i);
  } else {
    const std::size_t head = (max_values + 1) / 2;
    const std::size_t tail = max_values - head;
    for (std::size_t i = 0; i < head; ++i)
      put(i);
    fmt::format_to(std::back_inserter(out), ", ... ({} more) ... ", v.size() - head - tail);
    for (std::size_t i = v.size() - tail; i < v.size(); ++i)
      put(i);
  }
  out += "]";
  return out;
}

std::string format_outcome(const Outcome& outcome, std::size_t max_values) {
  std::string out =
      fmt::format("backend={} status={}", outcome.backend, status_name(outcome.status));
  if (outcome.status != Status::Ok) {
    fmt::format_to(std::back_inserter(out), " message=\"{}\"\n", outcome.message);
    return out;
  }
  fmt::format_to(std::back_inserter(out), "\n  root {} = {}\n", outcome.root.shape.to_string(),
                 format_values(outcome.root, max_values));
  if (!outcome.tangent.values.empty())
    fmt::format_to(std::back_inserter(out), "  tangent {} = {}\n",
                   outcome.tangent.shape.to_string(), format_values(outcome.tangent, max_values));
  for (std::size_t leaf = 0; leaf < outcome.grads.size(); ++leaf)
    fmt::format_to(std::back_inserter(out), "  grad leaf={} {} = {}\n", leaf,
                   outcome.grads[leaf].shape.to_string(),
                   format_values(outcome.grads[leaf], max_values));
  for (std::size_t leaf = 0; leaf < outcome.hvp.size(); ++leaf)
    fmt::format_to(std::back_inserter(out), "  hvp leaf={} {} = {}\n", leaf,
                   outcome.hvp[leaf].shape.to_string(),
                   format_values(outcome.hvp[leaf], max_values));
  return out;
}

} // namespace burnmark
