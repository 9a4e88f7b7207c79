// The reference backend as the oracle sees it, optionally with registered conventions switched
// to their other side for the duration of each run.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "burnmark/backends/builtin.h"
#include "tape.h"

namespace burnmark {
namespace {

class ReferenceBackend final : public Backend {
public:
  explicit ReferenceBackend(ConventionSet other_side) : other_side_(other_side) {
    if (other_side.empty()) return;
    for (const ConventionInfo& c : kConventions)
      if (other_side.has(c.convention)) name_ += "[" + std::string(c.name) + "]";
  }
  const std::string& name() const override { return name_; }
  Outcome run(const Program& program, const RunOptions& options) override {
    const ref::ConventionScope scope(other_side_);
    const ref::StorageScope storage(program.float_dtype);
    ref::reached_conventions = {};
    Outcome out = run_program(framework_, program, options);
    out.backend = name_;
    out.conventions_reached = ref::reached_conventions.bits();
    if (out.status == Status::Error && out.message.starts_with(ref::kNoSecondOrderRule))
      out.status = Status::Unsupported;
    return out;
  }

  std::vector<std::optional<std::vector<double>>>
  register_gradients(const Program& program) override {
    const ref::ConventionScope scope(other_side_);
    const ref::StorageScope storage(program.float_dtype);
    std::vector<ref::ReferenceFramework::Tensor> registers;
    const Outcome out = run_program(framework_, program, RunOptions{true}, &registers);
    std::vector<std::optional<std::vector<double>>> grads;
    if (out.status != Status::Ok) return grads;
    grads.reserve(registers.size());
    for (const ref::ReferenceFramework::Tensor& r : registers)
      grads.push_back(framework_.node_gradient(r));
    return grads;
  }

private:
  ConventionSet other_side_;
  std::string name_ = "ref";
  ref::ReferenceFramework framework_;
};

} // namespace

std::unique_ptr<Backend> make_reference_backend(ConventionSet other_side) {
  return std::make_unique<ReferenceBackend>(other_side);
}

std::vector<std::pair<Convention, std::unique_ptr<Backend>>> make_convention_references() {
  std::vector<std::pair<Convention, std::unique_ptr<Backend>>> out;
  for (const ConventionInfo& c : kConventions)
    out.emplace_back(c.convention, make_reference_backend(ConventionSet(c.convention)));
  return out;
}

std::vector<std::pair<std::string, std::unique_ptr<Backend>>> make_all_conventions_references() {
  std::vector<std::pair<std::string, std::unique_ptr<Backend>>> out;
  out.emplace_back("", make_reference_backend(ConventionSet::unscoped()));
  for (const ConventionInfo& c : kConventions)
    for (std::string_view rest = c.scope; c.scope != "any" && !rest.empty();) {
      const std::size_t comma = rest.find(',');
      const std::string library(rest.substr(0, comma));
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
      if (std::none_of(out.begin(), out.end(), [&](const auto& e) { return e.first == library; }))
        out.emplace_back(library, make_reference_backend(ConventionSet::for_library(library)));
    }
  return out;
}

} // namespace burnmark
