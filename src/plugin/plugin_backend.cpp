// PluginBackend: Program -> ABI call -> Outcome, trusting nothing the plugin returns.
#include "plugin_backend.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <fmt/format.h>
#include <optional>
#include <string_view>
#include <utility>

#include "burnmark/plugin/plugin_walk.h"

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
  if (!plugin::is_float_dtype(t.dtype))
    return fmt::format("plugin returned {} with unknown dtype {}", what, t.dtype);
  // Row-major unless the plugin gives strides (a view it did not copy out).
  std::int64_t strides[BURNMARK_MAX_RANK] = {};
  std::int64_t offset = 0;
  if (t.has_strides) {
    for (int i = 0; i < t.shape.rank; ++i) {
      if (t.strides[i] < 0)
        return fmt::format("plugin returned {} with negative stride {}", what, t.strides[i]);
      strides[i] = t.strides[i];
    }
    if (t.storage_offset < 0)
      return fmt::format("plugin returned {} with negative offset {}", what, t.storage_offset);
    offset = t.storage_offset;
  } else {
    const auto rm = plugin::strides(t.shape);
    std::copy(rm.begin(), rm.end(), strides);
  }
  out.values.resize(static_cast<std::size_t>(n));
  plugin::for_each_strided(t.shape, strides, offset, [&](std::int64_t o, std::int64_t at) {
    out.values[static_cast<std::size_t>(o)] = plugin::load(t.dtype, t.data, at);
  });
  if (t.error_bound != nullptr) out.error_bound.assign(t.error_bound, t.error_bound + n);
  return {};
}

// The names of the float dtypes in a BurnmarkOpSupport.dtypes mask, for messages.
std::string dtype_names(std::uint32_t mask) {
  std::string out;
  for (FloatDType d : kFloatDTypes)
    if (mask & BURNMARK_DTYPE_BIT(abi_dtype(d)))
      out += fmt::format("{}{}", out.empty() ? "" : ", ", float_dtype_name(d));
  return out.empty() ? "no dtype" : out;
}

} // namespace

PluginBackend::PluginBackend(std::shared_ptr<void> library, const BurnmarkPluginV1* table,
                             void* context, BurnmarkPluginPlatformFn platform,
                             PluginLeafLayout layout, std::vector<std::string> patches)
    : library_(std::move(library)), table_(table), context_(context), name_(table->name),
      layout_(layout), patches_(std::move(patches)) {
  if (platform != nullptr)
    if (const char* line = platform(context); line != nullptr) platform_ = line;
  for (std::uint32_t i = 0; i < table->num_ops; ++i) {
    const BurnmarkOpSupport& entry = table->ops[i];
    if (entry.op >= supported_.size()) supported_.resize(entry.op + 1);
    supported_[entry.op] = entry;
  }
}

// The listed ids this build knows, in ops.def order (an id from a newer ops.def is never in a
// program this build makes).
std::optional<std::vector<Op>> PluginBackend::supported_ops() const {
  std::vector<Op> ops;
  for (const OpInfo& info : kOpTable)
    if (info.stable_id < supported_.size() && supported_[info.stable_id] &&
        supported_[info.stable_id]->dtypes != 0)
      ops.push_back(info.op);
  return ops;
}

PluginBackend::~PluginBackend() {
  if (table_->destroy != nullptr) table_->destroy(context_);
}

Outcome PluginBackend::run(const Program& program, const RunOptions& options) {
  Outcome out;
  out.backend = name_;
  // The host, not the plugin, decides "unsupported": a plugin never sees an op it did not list,
  // nor one in a dtype it did not declare for that op.
  const std::uint32_t dtype_bit = BURNMARK_DTYPE_BIT(abi_dtype(program.float_dtype));
  // Strided leaves only when at least one op reads them and every op accepts them: a program
  // without ops (the root a leaf) is read back as it is, by a plugin that may take no strides.
  bool strided = true, any_op = false;
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
    const BurnmarkOpSupport& entry = *supported_[info.stable_id];
    if (!(entry.dtypes & dtype_bit)) {
      out.status = Status::Unsupported;
      out.message = fmt::format("{} (op id {}) in {}: the plugin declares it for {}", info.name,
                                info.stable_id, float_dtype_name(program.float_dtype),
                                dtype_names(entry.dtypes));
      return out;
    }
    strided = strided && entry.strided_inputs != 0;
    any_op = true;
  }
  if (options.tangents && table_->run_jvp == nullptr) {
    out.status = Status::Unsupported;
    out.message = "forward-mode AD (the plugin has no run_jvp)";
    return out;
  }
  if (options.hessian && table_->run_hvp == nullptr) {
    out.status = Status::Unsupported;
    out.message = "second-order AD (the plugin has no run_hvp)";
    return out;
  }
  if (options.gradients && !table_->computes_gradients) {
    out.status = Status::Unsupported;
    out.message = "gradients (the plugin is forward-only)";
    return out;
  }

  current_layout_ = strided && any_op ? layout_ : PluginLeafLayout::Contiguous;
  // Forward mode and H·v are separate entry points; when both are asked for, the root and the
  // gradients come from the first call.
  if (!call(options.tangents ? Entry::Jvp : Entry::Run, program, options, out)) return out;
  if (options.hessian) {
    Outcome second;
    if (!call(Entry::Hvp, program, options, second)) {
      second.backend = name_;
      return second;
    }
    out.hvp = std::move(second.hvp);
  }
  return out;
}

bool PluginBackend::call(Entry entry, const Program& program, const RunOptions& options,
                         Outcome& out) {
  out.backend = name_;
  const BurnmarkProgram& view = abi_.build(program, current_layout_);
  BurnmarkRunOptions run_options{};
  run_options.gradients = options.gradients ? 1 : 0;
  BurnmarkResult result{};
  std::int32_t status = 0;
  std::vector<HostTensor> directions;
  if (entry != Entry::Run)
    for (std::size_t k = 0; k < program.leaves.size(); ++k)
      directions.push_back(program.leaves[k].dtype == DType::I64
                               ? HostTensor{}
                               : leaf_tangent(program.leaves[k].shape, k));
  switch (entry) {
  case Entry::Run: status = table_->run(context_, &view, &run_options, &result); break;
  case Entry::Jvp:
    status = table_->run_jvp(context_, &view, &run_options, abi_.directions(program, directions),
                             &result);
    break;
  case Entry::Hvp:
    status = table_->run_hvp(context_, &view, &run_options, abi_.directions(program, directions),
                             &result);
    break;
  }
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
    if (err.empty() && entry == Entry::Jvp)
      err = read_tensor(result.tangent, program.shape_of(program.root), "the root's tangent", true,
                        out.tangent);
    if (err.empty() && entry == Entry::Hvp) {
      const std::vector<Reg> leaf_regs = program.leaf_registers();
      if (result.num_hvps != static_cast<std::int32_t>(leaf_regs.size()) || result.hvps == nullptr)
        err = fmt::format("plugin returned {} H·v products for {} leaves",
                          result.hvps ? result.num_hvps : 0, leaf_regs.size());
      for (std::size_t i = 0; err.empty() && i < leaf_regs.size(); ++i) {
        HostTensor h;
        err = read_tensor(result.hvps[i], program.shape_of(leaf_regs[i]),
                          fmt::format("the H·v of leaf {}", i), true, h);
        out.hvp.push_back(std::move(h));
      }
    }
    if (!err.empty()) {
      out.status = Status::Error;
      out.message = std::move(err);
      out.root = {};
      out.grads.clear();
      out.tangent = {};
      out.hvp.clear();
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
  return out.status == Status::Ok;
}

} // namespace burnmark
