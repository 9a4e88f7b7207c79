// PluginBackend: Program -> ABI call -> Outcome, trusting nothing the plugin returns.
#include "plugin_backend.h"

#include <cstddef>
#include <cstdint>
#include <fmt/format.h>
#include <optional>
#include <string_view>
#include <utility>

namespace burnmark {

namespace {

std::string shape_text(const BurnmarkShape& s) {
  if (s.rank < 0 || s.rank > BURNMARK_MAX_RANK) return fmt::format("<rank {}>", s.rank);
  std::string out = "[";
  for (int i = 0; i < s.rank; ++i)
    out += fmt::format("{}{}", i ? "," : "", s.dims[i]);
  return out + "]";
}

// Reads one returned tensor after checking it has exactly the shape the program says; the
// error text names `what` (root, gradient of leaf N).
std::string read_tensor(const BurnmarkTensorOut& t, const Shape& expected, std::string_view what,
                        bool null_means_zeros, HostTensor& out) {
  const BurnmarkShape want = to_abi_shape(expected);
  bool same = t.shape.rank == want.rank;
  for (int i = 0; same && i < want.rank; ++i)
    same = t.shape.dims[i] == want.dims[i];
  if (!same)
    return fmt::format("plugin returned {} of shape {}, expected {}", what, shape_text(t.shape),
                       expected.to_string());
  const std::int64_t n = expected.numel();
  out.shape = expected;
  out.values.clear();
  out.error_bound.clear();
  if (t.data == nullptr) {
    if (!null_means_zeros) return fmt::format("plugin returned {} without data", what);
    out.values.assign(static_cast<std::size_t>(n), 0.0);
    return {};
  }
  if (t.numel != n)
    return fmt::format("plugin returned {} with {} values, expected {}", what, t.numel, n);
  out.values.resize(static_cast<std::size_t>(n));
  switch (t.dtype) {
  case BURNMARK_DTYPE_F32: {
    const auto* p = static_cast<const float*>(t.data);
    for (std::int64_t i = 0; i < n; ++i)
      out.values[static_cast<std::size_t>(i)] = p[i];
    break;
  }
  case BURNMARK_DTYPE_F64: {
    const auto* p = static_cast<const double*>(t.data);
    out.values.assign(p, p + n);
    break;
  }
  default: return fmt::format("plugin returned {} with unknown dtype {}", what, t.dtype);
  }
  if (t.error_bound != nullptr) out.error_bound.assign(t.error_bound, t.error_bound + n);
  return {};
}

} // namespace

PluginBackend::PluginBackend(std::shared_ptr<void> library, const BurnmarkPluginV1* table,
                             void* context, BurnmarkPluginPlatformFn platform)
    : library_(std::move(library)), table_(table), context_(context), name_(table->name) {
  if (platform != nullptr)
    if (const char* line = platform(context); line != nullptr) platform_ = line;
  for (std::uint32_t i = 0; i < table->num_supported_ops; ++i) {
    const std::uint32_t id = table->supported_ops[i];
    if (id >= supported_.size()) supported_.resize(id + 1, false);
    supported_[id] = true;
  }
}

// The listed ids this build knows, in ops.def order (an id from a newer ops.def is never in a
// program this build makes).
std::optional<std::vector<Op>> PluginBackend::supported_ops() const {
  std::vector<Op> ops;
  for (const OpInfo& info : kOpTable)
    if (info.stable_id < supported_.size() && supported_[info.stable_id]) ops.push_back(info.op);
  return ops;
}

PluginBackend::~PluginBackend() {
  if (table_->destroy != nullptr) table_->destroy(context_);
}

Outcome PluginBackend::run(const Program& program, const RunOptions& options) {
  Outcome out;
  out.backend = name_;
  // The host, not the plugin, decides "unsupported": a plugin never sees an op it did not list.
  // ABI v3 carries f32 buffers only.
  if (program.float_dtype != FloatDType::F32) {
    out.status = Status::Unsupported;
    out.message = fmt::format("{} programs (plugin ABI v3 takes f32 only)",
                              float_dtype_name(program.float_dtype));
    return out;
  }
  for (const Stmt& s : program.stmts) {
    if (s.shape.numel() > BURNMARK_MAX_ELEMENTS) {
      out.status = Status::Unsupported;
      out.message = fmt::format("a tensor of {} elements (the plugin ABI promises at most {})",
                                s.shape.numel(), BURNMARK_MAX_ELEMENTS);
      return out;
    }
    if (s.kind != StmtKind::Op) continue;
    const OpInfo& info = op_info(s.instr.op);
    if (info.stable_id >= supported_.size() || !supported_[info.stable_id]) {
      out.status = Status::Unsupported;
      out.message = fmt::format("{} (op id {})", info.name, info.stable_id);
      return out;
    }
  }
  if (options.tangents) { // ABI v3 carries no tangents
    out.status = Status::Unsupported;
    out.message = "forward-mode AD (not in the plugin ABI)";
    return out;
  }
  if (options.hessian) {
    out.status = Status::Unsupported;
    out.message = "second-order AD (not in the plugin ABI)";
    return out;
  }
  if (options.gradients && !table_->computes_gradients) {
    out.status = Status::Unsupported;
    out.message = "gradients (the plugin is forward-only)";
    return out;
  }

  const BurnmarkProgram& view = abi_.build(program);
  BurnmarkRunOptions run_options{};
  run_options.gradients = options.gradients ? 1 : 0;
  BurnmarkResult result{};
  const std::int32_t status = table_->run(context_, &view, &run_options, &result);

  switch (status) {
  case BURNMARK_STATUS_OK: {
    std::string err =
        read_tensor(result.root, program.shape_of(program.root), "the root", false, out.root);
    if (err.empty() && options.gradients) {
      const std::vector<Reg> leaf_regs = program.leaf_registers();
      if (result.num_grads != static_cast<std::int32_t>(leaf_regs.size()) ||
          result.grads == nullptr) {
        err = fmt::format("plugin returned {} gradients for {} leaves",
                          result.grads ? result.num_grads : 0, leaf_regs.size());
      }
      for (std::size_t i = 0; err.empty() && i < leaf_regs.size(); ++i) {
        HostTensor g;
        err = read_tensor(result.grads[i], program.shape_of(leaf_regs[i]),
                          fmt::format("the gradient of leaf {}", i), true, g);
        out.grads.push_back(std::move(g));
      }
    }
    if (!err.empty()) {
      out.status = Status::Error;
      out.message = std::move(err);
      out.root = {};
      out.grads.clear();
    }
    break;
  }
  case BURNMARK_STATUS_UNSUPPORTED:
    out.status = Status::Unsupported;
    {
      const std::optional<Op> op = op_from_stable_id(result.unsupported_op);
      // Same "name (op id N)" form as the host's own check, so reports group both alike.
      out.message =
          fmt::format("{} (op id {}){}{}", op ? op_name(*op) : "unknown op", result.unsupported_op,
                      result.message ? ": " : "", result.message ? result.message : "");
    }
    break;
  case BURNMARK_STATUS_ERROR:
    out.status = Status::Error;
    out.message = result.message ? result.message : "plugin reported an error without a message";
    break;
  default:
    out.status = Status::Error;
    out.message = fmt::format("plugin returned unknown status {}", status);
    break;
  }
  if (table_->release_result != nullptr) table_->release_result(context_, &result);
  return out;
}

} // namespace burnmark
