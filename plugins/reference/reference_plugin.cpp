// BurnMark's own reference backend behind the plugin ABI. It exists to test the ABI end to end:
// the built-in `ref` and this plugin must agree bit for bit, so any difference is a bug in the
// program encoding, the result decoding or the loader, never in arithmetic.
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "burnmark/backends/builtin.h"
#include "burnmark/driver/driver.h"
#include "burnmark/ir/program.h"
#include "burnmark/plugin/plugin_walk.h"

namespace {

using namespace burnmark;

Shape from_abi(const BurnmarkShape& s) {
  if (s.rank < 0 || s.rank > kMaxRank) throw std::runtime_error("shape rank out of range");
  Shape shape;
  for (int i = 0; i < s.rank; ++i)
    shape.push_back(s.dims[i]);
  return shape;
}

// A leaf's values (or indices) in row-major order, read through its strides and dtype.
std::vector<double> gather(const BurnmarkLeaf& l) {
  std::vector<double> values(static_cast<std::size_t>(l.numel));
  plugin::for_each_strided(
      l.shape, l.strides, l.storage_offset, [&](std::int64_t o, std::int64_t at) {
        values[static_cast<std::size_t>(o)] = plugin::load(l.dtype, l.data, at);
      });
  return values;
}

std::optional<FloatDType> float_dtype_of(std::int32_t d) {
  switch (d) {
  case BURNMARK_DTYPE_F32: return FloatDType::F32;
  case BURNMARK_DTYPE_F64: return FloatDType::F64;
  case BURNMARK_DTYPE_BF16: return FloatDType::BF16;
  case BURNMARK_DTYPE_F16: return FloatDType::F16;
  default: return std::nullopt;
  }
}

// The inverse of the host's Program -> BurnmarkProgram encoding.
Program from_abi(const BurnmarkProgram& p) {
  Program program;
  const std::optional<FloatDType> dtype = float_dtype_of(p.float_dtype);
  if (!dtype) throw std::runtime_error("unknown float dtype " + std::to_string(p.float_dtype));
  program.float_dtype = *dtype;
  for (int i = 0; i < p.num_leaves; ++i) {
    const BurnmarkLeaf& l = p.leaves[i];
    std::vector<double> values = gather(l);
    if (l.dtype == BURNMARK_DTYPE_I64)
      program.leaves.push_back(Leaf{from_abi(l.shape),
                                    {},
                                    DType::I64,
                                    std::vector<std::int64_t>(values.begin(), values.end())});
    else
      program.leaves.push_back(Leaf{from_abi(l.shape), std::move(values)});
  }
  for (int i = 0; i < p.num_stmts; ++i) {
    const BurnmarkStmt& s = p.stmts[i];
    Stmt stmt;
    stmt.shape = from_abi(s.shape);
    stmt.dtype = s.dtype == BURNMARK_DTYPE_BOOL  ? DType::Bool
                 : s.dtype == BURNMARK_DTYPE_I64 ? DType::I64
                                                 : DType::F32; // any float dtype
    switch (s.kind) {
    case BURNMARK_STMT_LEAF:
      stmt.kind = StmtKind::Leaf;
      stmt.leaf = s.leaf;
      break;
    case BURNMARK_STMT_ALIAS:
      stmt.kind = StmtKind::Alias;
      stmt.source = s.source;
      break;
    case BURNMARK_STMT_OP: {
      const std::optional<Op> op = op_from_stable_id(s.op);
      if (!op) throw plugin::Unsupported{s.op, "unknown op id " + std::to_string(s.op)};
      stmt.kind = StmtKind::Op;
      stmt.instr.op = *op;
      stmt.instr.operands.assign(s.operands, s.operands + s.num_operands);
      // Only the fields of the op's AttrKind are set, as the IR requires for exact equality.
      stmt.instr.attrs.dim = s.attrs.dim;
      stmt.instr.attrs.dim1 = s.attrs.dim1;
      stmt.instr.attrs.keepdim = s.attrs.keepdim != 0;
      stmt.instr.attrs.times = s.attrs.times;
      stmt.instr.attrs.exponent = s.attrs.exponent;
      stmt.instr.attrs.lo = s.attrs.lo;
      stmt.instr.attrs.hi = s.attrs.hi;
      stmt.instr.attrs.alpha = s.attrs.alpha;
      stmt.instr.attrs.slope = s.attrs.slope;
      stmt.instr.attrs.lambd = s.attrs.lambd;
      stmt.instr.attrs.beta = s.attrs.beta;
      stmt.instr.attrs.threshold = s.attrs.threshold;
      stmt.instr.attrs.weight = s.attrs.weight;
      stmt.instr.attrs.eps = s.attrs.eps;
      stmt.instr.attrs.variant = s.attrs.variant;
      stmt.instr.attrs.include_self = s.attrs.include_self != 0;
      stmt.instr.attrs.fill = s.attrs.fill;
      break;
    }
    default: throw std::runtime_error("unknown statement kind " + std::to_string(s.kind));
    }
    program.stmts.push_back(std::move(stmt));
  }
  program.root = p.root;
  return program;
}

BurnmarkShape to_abi(const Shape& shape) {
  BurnmarkShape s{};
  s.rank = shape.rank();
  for (int i = 0; i < shape.rank(); ++i)
    s.dims[i] = shape[i];
  return s;
}

void* create(const char** error) {
  try {
    return make_reference_backend().release();
  } catch (const std::exception& e) {
    static std::string message;
    message = e.what();
    if (error != nullptr) *error = message.c_str();
    return nullptr;
  }
}

void destroy(void* context) {
  delete static_cast<Backend*>(context);
}

// The reference differentiates along BurnMark's own leaf_tangent only (driver.h); any other
// direction is outside what this plugin can do, so it says so rather than answer wrongly.
void check_directions(const Program& program, const BurnmarkLeaf* directions) {
  for (std::size_t k = 0; k < program.leaves.size(); ++k) {
    if (program.leaves[k].dtype == DType::I64) continue;
    const std::vector<double> got = gather(directions[k]);
    if (got != leaf_tangent(program.leaves[k].shape, k).values)
      throw plugin::Unsupported{0, "directions other than BurnMark's leaf_tangent"};
  }
}

std::int32_t run_with(void* context, const BurnmarkProgram* abi_program,
                      const BurnmarkRunOptions* options, const BurnmarkLeaf* tangents,
                      const BurnmarkLeaf* directions, BurnmarkResult* result) {
  return plugin::guarded_run(result, [&](plugin::ResultStorage& storage) {
    const Program program = from_abi(*abi_program);
    RunOptions run_options;
    run_options.gradients = options->gradients != 0;
    run_options.tangents = tangents != nullptr;
    run_options.hessian = directions != nullptr;
    if (tangents != nullptr) check_directions(program, tangents);
    if (directions != nullptr) check_directions(program, directions);
    Outcome outcome = static_cast<Backend*>(context)->run(program, run_options);
    // Values go back as f64 whatever the program's dtype: the reference's values and bounds
    // carry more precision than the dtype, and the host compares them bit for bit.
    switch (outcome.status) {
    case Status::Ok:
      storage.set_root(to_abi(outcome.root.shape), std::move(outcome.root.values),
                       std::move(outcome.root.error_bound));
      for (HostTensor& g : outcome.grads)
        storage.add_grad(to_abi(g.shape), std::optional<std::vector<double>>(std::move(g.values)),
                         std::move(g.error_bound));
      if (tangents != nullptr)
        storage.set_tangent(to_abi(outcome.tangent.shape), std::move(outcome.tangent.values));
      for (HostTensor& h : outcome.hvp)
        storage.add_hvp(to_abi(h.shape), std::optional<std::vector<double>>(std::move(h.values)));
      return;
    case Status::Error: storage.set_error(outcome.message); return;
    // The in-process reference never reports these (only child backends do).
    case Status::Crash:
    case Status::Hang:
    case Status::Oom: storage.set_error(outcome.message); return;
    case Status::Unsupported: {
      const std::optional<Op> op = op_from_name(outcome.message);
      storage.set_unsupported(op ? op_info(*op).stable_id : 0, outcome.message);
      return;
    }
    }
  });
}

std::int32_t run(void* context, const BurnmarkProgram* program, const BurnmarkRunOptions* options,
                 BurnmarkResult* result) {
  return run_with(context, program, options, nullptr, nullptr, result);
}
std::int32_t run_jvp(void* context, const BurnmarkProgram* program,
                     const BurnmarkRunOptions* options, const BurnmarkLeaf* tangents,
                     BurnmarkResult* result) {
  return run_with(context, program, options, tangents, nullptr, result);
}
std::int32_t run_hvp(void* context, const BurnmarkProgram* program,
                     const BurnmarkRunOptions* options, const BurnmarkLeaf* directions,
                     BurnmarkResult* result) {
  return run_with(context, program, options, nullptr, directions, result);
}

void release(void*, BurnmarkResult* result) {
  plugin::ResultStorage::release(result);
}

// Every op in every float dtype, strided leaves accepted (from_abi gathers them).
constexpr std::array<BurnmarkOpSupport, kOpCount> all_ops() {
  std::array<BurnmarkOpSupport, kOpCount> ops{};
  for (std::size_t i = 0; i < kOpCount; ++i)
    ops[i] = BurnmarkOpSupport{kOpTable[i].stable_id, BURNMARK_DTYPES_ALL_FLOAT, 1, 0};
  return ops;
}
constexpr std::array<BurnmarkOpSupport, kOpCount> kOps = all_ops();

} // namespace

extern "C" BURNMARK_PLUGIN_EXPORT const BurnmarkPluginV1*
burnmark_plugin_entry(uint32_t /*host_abi_version*/) {
  static constexpr BurnmarkPluginV1 table = [] {
    BurnmarkPluginV1 t{};
    t.abi_version = BURNMARK_PLUGIN_ABI_VERSION;
    t.name = "ref_plugin";
    t.description =
        "BurnMark's CPU reference (double precision) behind the plugin ABI, for testing the ABI";
    t.ops = kOps.data();
    t.num_ops = static_cast<std::uint32_t>(kOps.size());
    t.computes_gradients = 1;
    t.create = &create;
    t.destroy = &destroy;
    t.run = &run;
    t.release_result = &release;
    t.run_jvp = &run_jvp;
    t.run_hvp = &run_hvp;
    return t;
  }();
  return &table;
}
