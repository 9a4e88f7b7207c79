// Header-only C++ helper for plugin authors: turns a handful of per-op kernels into a complete
// plugin speaking plugin.h. The helper owns the parts every plugin would otherwise get subtly
// different: the register file, the alias protocol, reverse-mode accumulation over the program
// (a tape of dense buffers), zeros-for-unreached leaves, result ownership, and the rule that no
// exception crosses the C boundary.
//
// A plugin author writes a Kernels type:
//
//   struct MyKernels {
//     using Scalar = float;  // or double: the element type the library computes in
//     // Writes op `s.op` applied to `in` into `out`, which is already shaped as s.shape and
//     // zero-filled. Throw Unsupported{s.op} for shapes the library cannot do, any
//     // std::exception for a library error.
//     void forward(const BurnmarkStmt& s, std::span<const Dense<Scalar>* const> in,
//                  Dense<Scalar>& out);
//     // Optional; present = the plugin computes gradients. Writes the gradient of the root with
//     // respect to each operand, given `grad_out` (gradient w.r.t. out), into grad_in[i], which
//     // is already shaped as operand i and zero-filled. The helper sums contributions
//     // (including an operand used twice), so the kernel only ever writes its own op's share.
//     void backward(const BurnmarkStmt& s, std::span<const Dense<Scalar>* const> in,
//                   const Dense<Scalar>& out, const Dense<Scalar>& grad_out,
//                   std::span<Dense<Scalar>* const> grad_in);
//     // Optional, both or neither; present = the plugin takes fix-and-continue patches
//     // (plugin.h's set_patches, docs/patches.md). enable_patch returns false for an id it does
//     // not know; clear_patches deactivates them all.
//     bool enable_patch(std::string_view id);
//     void clear_patches();
//   };
//
// and exports it with make_plugin_table (see plugins/example/example_plugin.cpp) and an op list
// made by op_support (which float dtypes, whether strided leaves are accepted). One Kernels
// object is made per host backend (create) and may keep library state between runs.
//
// Dtypes and strides (ABI v4). The walk gathers every leaf, whatever its strides, dtype and
// offset, into a dense row-major Dense<Scalar>, so kernels never see a stride; it rounds every
// op's result (and every gradient contribution and sum) to the program's float dtype, as
// LibTorch stores each result, whenever Scalar is wider than that dtype; and it returns the
// root and the gradients in the program's dtype. A Kernels type with Scalar = double therefore
// serves f64, f32, bf16 and f16 programs alike.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "burnmark/plugin/plugin.h"

namespace burnmark::plugin {

// Stable op ids (ops.def) as named constants, so a kernel switches on OpId::Matmul rather than
// on 20. Switching over every enumerator with no default makes a new op a compile error in the
// plugin too; a plugin may instead throw Unsupported for the ops it lacks.
enum class OpId : std::uint32_t {
#define BURNMARK_OP(Enum, name, id, arity, attrs, family, params, edges) Enum = id,
#include "burnmark/ir/ops.def"
#undef BURNMARK_OP
};

inline std::string_view op_id_name(std::uint32_t id) {
  switch (id) {
#define BURNMARK_OP(Enum, name, id, arity, attrs, family, params, edges)                           \
  case id:                                                                                         \
    return name;
#include "burnmark/ir/ops.def"
#undef BURNMARK_OP
  }
  return "unknown op";
}

// Throw from a kernel to report that this program is outside what the library can do; the run
// ends with BURNMARK_STATUS_UNSUPPORTED naming the op, which the host counts as a skip.
struct Unsupported {
  std::uint32_t op;
  std::string detail;
};

inline std::int64_t numel(const BurnmarkShape& shape) {
  std::int64_t n = 1;
  for (int i = 0; i < shape.rank; ++i)
    n *= shape.dims[i];
  return n;
}

inline bool same_shape(const BurnmarkShape& a, const BurnmarkShape& b) {
  if (a.rank != b.rank) return false;
  for (int i = 0; i < a.rank; ++i)
    if (a.dims[i] != b.dims[i]) return false;
  return true;
}

// Row-major strides in elements; entries past the rank are 0.
inline std::array<std::int64_t, BURNMARK_MAX_RANK> strides(const BurnmarkShape& shape) {
  std::array<std::int64_t, BURNMARK_MAX_RANK> s{};
  std::int64_t step = 1;
  for (int i = shape.rank - 1; i >= 0; --i) {
    s[static_cast<std::size_t>(i)] = step;
    step *= shape.dims[i];
  }
  return s;
}

// ---- Element types (shared with the host, which decodes results with the same functions). ----

inline bool is_float_dtype(std::int32_t d) {
  return d == BURNMARK_DTYPE_F32 || d == BURNMARK_DTYPE_F64 || d == BURNMARK_DTYPE_BF16 ||
         d == BURNMARK_DTYPE_F16;
}
// x rounded to float dtype d (ties to even, overflow to infinity), directly from double:
// rounding through f32 first would round twice. F64: x itself.
inline double round_to_dtype(double x, std::int32_t d) {
  if (d == BURNMARK_DTYPE_F64) return x;
  if (d == BURNMARK_DTYPE_F32) return static_cast<double>(static_cast<float>(x));
  if (!std::isfinite(x) || x == 0) return x;
  // Significand bits (hidden one included), smallest normal exponent, largest finite.
  const bool bf16 = d == BURNMARK_DTYPE_BF16;
  const int digits = bf16 ? 8 : 11, min_exponent = bf16 ? -126 : -14;
  const double max_finite = bf16 ? 0x1.fep127 : 65504.0;
  const int quantum = std::max(std::ilogb(x) + 1 - digits, min_exponent + 1 - digits);
  const double r = std::ldexp(std::nearbyint(std::ldexp(x, -quantum)), quantum);
  return std::fabs(r) > max_finite ? std::copysign(std::numeric_limits<double>::infinity(), x) : r;
}
inline std::size_t dtype_size(std::int32_t d) {
  return d == BURNMARK_DTYPE_F64 || d == BURNMARK_DTYPE_I64    ? 8
         : d == BURNMARK_DTYPE_BF16 || d == BURNMARK_DTYPE_F16 ? 2
                                                               : 4;
}

// binary16 bits <-> double, exactly (every binary16 is a double).
inline double half_to_double(std::uint16_t h) {
  const int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (exp == 0x1f)
    return mant ? std::numeric_limits<double>::quiet_NaN()
                : sign * std::numeric_limits<double>::infinity();
  if (exp == 0) return sign * std::ldexp(mant, -24);
  return sign * std::ldexp(1024 + mant, exp - 25);
}
// x rounded to binary16 (ties to even) and encoded.
inline std::uint16_t double_to_half(double x) {
  const std::uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (std::isnan(x)) return 0x7e00;
  const double r = std::fabs(round_to_dtype(x, BURNMARK_DTYPE_F16));
  if (std::isinf(r)) return sign | 0x7c00;
  if (r < 0x1p-14) return sign | static_cast<std::uint16_t>(std::ldexp(r, 24)); // subnormal/0
  const int e = std::ilogb(r);
  const auto mant = static_cast<std::uint16_t>(std::ldexp(r, 10 - e) - 1024);
  return sign | static_cast<std::uint16_t>((e + 15) << 10) | mant;
}
inline double bf16_to_double(std::uint16_t b) {
  const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
// x rounded to bfloat16 (ties to even, directly from double) and encoded.
inline std::uint16_t double_to_bf16(double x) {
  const float f = std::isnan(x) ? std::numeric_limits<float>::quiet_NaN()
                                : static_cast<float>(round_to_dtype(x, BURNMARK_DTYPE_BF16));
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return static_cast<std::uint16_t>(bits >> 16);
}

// Element i (in elements, not bytes) of a buffer of float dtype d, widened exactly to double.
inline double load(std::int32_t d, const void* data, std::int64_t i) {
  const auto k = static_cast<std::size_t>(i);
  switch (d) {
  case BURNMARK_DTYPE_F32: return static_cast<const float*>(data)[k];
  case BURNMARK_DTYPE_F64: return static_cast<const double*>(data)[k];
  case BURNMARK_DTYPE_BF16: return bf16_to_double(static_cast<const std::uint16_t*>(data)[k]);
  case BURNMARK_DTYPE_F16: return half_to_double(static_cast<const std::uint16_t*>(data)[k]);
  case BURNMARK_DTYPE_I64: return static_cast<double>(static_cast<const std::int64_t*>(data)[k]);
  default: throw std::runtime_error("unknown dtype " + std::to_string(d));
  }
}

// The storage index of every element of a (shape, strides, offset) view, in row-major order.
template <class F>
void for_each_strided(const BurnmarkShape& shape, const std::int64_t* strides, std::int64_t offset,
                      F&& f) {
  std::array<std::int64_t, BURNMARK_MAX_RANK> idx{};
  std::int64_t n = 1;
  for (int i = 0; i < shape.rank; ++i)
    n *= shape.dims[i];
  std::int64_t at = offset;
  for (std::int64_t o = 0; o < n; ++o) {
    f(o, at);
    for (int ax = shape.rank - 1; ax >= 0; --ax) {
      const auto u = static_cast<std::size_t>(ax);
      if (++idx[u] < shape.dims[ax]) {
        at += strides[ax];
        break;
      }
      at -= strides[ax] * (idx[u] - 1);
      idx[u] = 0;
    }
  }
}

// The op list entries for `ids`, all declaring the same float dtypes and strided-input flag.
template <std::size_t N>
constexpr std::array<BurnmarkOpSupport, N> op_support(const std::uint32_t (&ids)[N],
                                                      std::uint32_t dtypes, bool strided_inputs) {
  std::array<BurnmarkOpSupport, N> out{};
  for (std::size_t i = 0; i < N; ++i)
    out[i] = BurnmarkOpSupport{ids[i], dtypes, strided_inputs ? 1 : 0, 0};
  return out;
}

// A dense row-major tensor: the helper's register and gradient type.
template <class T> struct Dense {
  BurnmarkShape shape{};
  std::vector<T> data;

  static Dense zeros(const BurnmarkShape& shape) {
    return Dense{shape, std::vector<T>(static_cast<std::size_t>(plugin::numel(shape)), T(0))};
  }
  std::int64_t numel() const { return static_cast<std::int64_t>(data.size()); }
};

// Calls f(i_out, i_a, i_b) for every element of `out`, with the flat indices of the elements of
// `a` and `b` that NumPy broadcasting pairs with it. Shapes must broadcast to `out`.
template <class F>
void for_each_broadcast(const BurnmarkShape& out, const BurnmarkShape& a, const BurnmarkShape& b,
                        F&& f) {
  // Strides of a and b aligned to out's axes, 0 where the operand broadcasts.
  std::array<std::int64_t, BURNMARK_MAX_RANK> sa{}, sb{};
  const auto da = strides(a), db = strides(b);
  for (int i = 0; i < out.rank; ++i) {
    const int ia = i - (out.rank - a.rank), ib = i - (out.rank - b.rank);
    sa[static_cast<std::size_t>(i)] =
        (ia >= 0 && a.dims[ia] != 1) ? da[static_cast<std::size_t>(ia)] : 0;
    sb[static_cast<std::size_t>(i)] =
        (ib >= 0 && b.dims[ib] != 1) ? db[static_cast<std::size_t>(ib)] : 0;
  }
  std::array<std::int64_t, BURNMARK_MAX_RANK> idx{};
  const std::int64_t n = numel(out);
  std::int64_t ia = 0, ib = 0;
  for (std::int64_t o = 0; o < n; ++o) {
    f(o, ia, ib);
    // Odometer increment over out's axes, keeping ia and ib in step.
    for (int ax = out.rank - 1; ax >= 0; --ax) {
      const auto u = static_cast<std::size_t>(ax);
      if (++idx[u] < out.dims[ax]) {
        ia += sa[u];
        ib += sb[u];
        break;
      }
      ia -= sa[u] * (idx[u] - 1);
      ib -= sb[u] * (idx[u] - 1);
      idx[u] = 0;
    }
  }
}

// Owns everything a BurnmarkResult points at. attach() hands it to the result (through
// plugin_data); release() is the matching release_result. Also usable on its own by a plugin
// that does not use walk() (plugins/reference does).
class ResultStorage {
public:
  // `dtype` (a float BurnmarkDType, -1 = T's own) is the dtype the values are returned in;
  // values are rounded to it.
  template <class T>
  void set_root(const BurnmarkShape& shape, std::vector<T> values,
                std::vector<double> error_bound = {}, std::int32_t dtype = -1) {
    root_ = store(shape, std::move(values), std::move(error_bound), dtype);
  }
  template <class T>
  void set_tangent(const BurnmarkShape& shape, std::vector<T> values, std::int32_t dtype = -1) {
    tangent_ = store(shape, std::move(values), {}, dtype);
  }
  // A gradient per leaf, in leaf order; `values` nullopt = no gradient reached the leaf.
  template <class T>
  void add_grad(const BurnmarkShape& shape, std::optional<std::vector<T>> values,
                std::vector<double> error_bound = {}, std::int32_t dtype = -1) {
    add_to(grads_, shape, std::move(values), std::move(error_bound), dtype);
  }
  // An H·v per leaf, in leaf order (run_hvp); nullopt = zeros.
  template <class T>
  void add_hvp(const BurnmarkShape& shape, std::optional<std::vector<T>> values,
               std::int32_t dtype = -1) {
    add_to(hvps_, shape, std::move(values), {}, dtype);
  }
  void set_error(std::string message) {
    status_ = BURNMARK_STATUS_ERROR;
    message_ = std::move(message);
  }
  void set_unsupported(std::uint32_t op, std::string detail) {
    status_ = BURNMARK_STATUS_UNSUPPORTED;
    unsupported_op_ = op;
    message_ = std::move(detail);
  }

  // Fills `result` from this storage and transfers ownership into it. Returns the status.
  static std::int32_t attach(std::unique_ptr<ResultStorage> self, BurnmarkResult* result) {
    *result = BurnmarkResult{};
    result->status = self->status_;
    result->unsupported_op = self->unsupported_op_;
    result->message = self->message_.empty() ? nullptr : self->message_.c_str();
    if (self->status_ == BURNMARK_STATUS_OK) {
      result->root = self->root_;
      result->num_grads = static_cast<std::int32_t>(self->grads_.size());
      result->grads = self->grads_.empty() ? nullptr : self->grads_.data();
      result->tangent = self->tangent_;
      result->num_hvps = static_cast<std::int32_t>(self->hvps_.size());
      result->hvps = self->hvps_.empty() ? nullptr : self->hvps_.data();
    }
    result->plugin_data = self.release();
    return result->status;
  }
  static void release(BurnmarkResult* result) {
    if (result == nullptr) return;
    delete static_cast<ResultStorage*>(result->plugin_data);
    result->plugin_data = nullptr;
  }

private:
  // A NULL-data entry (zeros) when `values` is nullopt.
  template <class T>
  void add_to(std::vector<BurnmarkTensorOut>& list, const BurnmarkShape& shape,
              std::optional<std::vector<T>> values, std::vector<double> error_bound,
              std::int32_t dtype) {
    if (values) {
      list.push_back(store(shape, std::move(*values), std::move(error_bound), dtype));
    } else {
      BurnmarkTensorOut t{};
      t.shape = shape;
      t.numel = numel(shape);
      t.dtype = dtype < 0 ? BURNMARK_DTYPE_F32 : dtype;
      list.push_back(t);
    }
  }

  template <class T>
  BurnmarkTensorOut store(const BurnmarkShape& shape, std::vector<T> values,
                          std::vector<double> error_bound, std::int32_t dtype) {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "results are f32 or f64");
    BurnmarkTensorOut t{};
    t.shape = shape;
    t.numel = static_cast<std::int64_t>(values.size());
    if (dtype < 0) dtype = std::is_same_v<T, float> ? BURNMARK_DTYPE_F32 : BURNMARK_DTYPE_F64;
    t.dtype = dtype;
    // Vectors' heap buffers do not move when the vector object moves, so the pointers stay valid.
    switch (dtype) {
    case BURNMARK_DTYPE_F32:
      if constexpr (std::is_same_v<T, float>) {
        f32_.push_back(std::move(values));
      } else {
        f32_.emplace_back(values.begin(), values.end());
      }
      t.data = f32_.back().data();
      break;
    case BURNMARK_DTYPE_F64:
      f64_.emplace_back(values.begin(), values.end());
      t.data = f64_.back().data();
      break;
    case BURNMARK_DTYPE_BF16:
    case BURNMARK_DTYPE_F16: {
      std::vector<std::uint16_t> bits(values.size());
      for (std::size_t i = 0; i < values.size(); ++i)
        bits[i] =
            dtype == BURNMARK_DTYPE_BF16 ? double_to_bf16(values[i]) : double_to_half(values[i]);
      u16_.push_back(std::move(bits));
      t.data = u16_.back().data();
      break;
    }
    default: throw std::runtime_error("results are f32, f64, bf16 or f16");
    }
    if (!error_bound.empty()) {
      bounds_.push_back(std::move(error_bound));
      t.error_bound = bounds_.back().data();
    }
    return t;
  }

  std::int32_t status_ = BURNMARK_STATUS_OK;
  std::uint32_t unsupported_op_ = 0;
  std::string message_;
  BurnmarkTensorOut root_{};
  std::vector<BurnmarkTensorOut> grads_;
  BurnmarkTensorOut tangent_{};
  std::vector<BurnmarkTensorOut> hvps_;
  std::vector<std::vector<std::uint16_t>> u16_;
  std::vector<std::vector<float>> f32_;
  std::vector<std::vector<double>> f64_;
  std::vector<std::vector<double>> bounds_;
};

// Runs `body(storage)` and attaches the storage to `result`, turning every exception into a
// status so that nothing unwinds into the host.
template <class Body> std::int32_t guarded_run(BurnmarkResult* result, Body&& body) noexcept {
  std::unique_ptr<ResultStorage> storage;
  try {
    storage = std::make_unique<ResultStorage>();
  } catch (...) {
    *result = BurnmarkResult{};
    result->status = BURNMARK_STATUS_ERROR;
    result->message = "plugin out of memory";
    return result->status;
  }
  try {
    body(*storage);
  } catch (const Unsupported& u) {
    storage = std::make_unique<ResultStorage>();
    storage->set_unsupported(u.op, u.detail.empty() ? std::string(op_id_name(u.op)) : u.detail);
  } catch (const std::exception& e) {
    storage = std::make_unique<ResultStorage>();
    storage->set_error(e.what());
  } catch (...) {
    storage = std::make_unique<ResultStorage>();
    storage->set_error("plugin threw a non-standard exception");
  }
  return ResultStorage::attach(std::move(storage), result);
}

template <class K>
concept ForwardKernels = requires(K k, const BurnmarkStmt& s,
                                  std::span<const Dense<typename K::Scalar>* const> in,
                                  Dense<typename K::Scalar>& out) {
  typename K::Scalar;
  {k.forward(s, in, out)};
};

template <class K>
concept GradientKernels = ForwardKernels<K> &&
    requires(K k, const BurnmarkStmt& s, std::span<const Dense<typename K::Scalar>* const> in,
             const Dense<typename K::Scalar>& out,
             std::span<Dense<typename K::Scalar>* const> grad_in) {
  {k.backward(s, in, out, out, grad_in)};
};

// Walks `program` with `kernels`, filling `storage`. Throws what the kernels throw.
template <ForwardKernels K>
void walk(K& kernels, const BurnmarkProgram& program, const BurnmarkRunOptions& options,
          ResultStorage& storage) {
  using T = typename K::Scalar;
  const std::int32_t dtype = program.float_dtype;
  if (!is_float_dtype(dtype))
    throw std::runtime_error("unknown float dtype " + std::to_string(dtype));
  // Rounds a register (or gradient) to the program's dtype, as LibTorch stores every result;
  // nothing to do when Scalar is that dtype.
  const bool rounds = !(std::is_same_v<T, double> && dtype == BURNMARK_DTYPE_F64) &&
                      !(std::is_same_v<T, float> && dtype == BURNMARK_DTYPE_F32);
  const auto round_all = [&](std::vector<T>& v) {
    if (!rounds) return;
    for (T& x : v)
      x = static_cast<T>(round_to_dtype(static_cast<double>(x), dtype));
  };
  const auto n = static_cast<std::size_t>(program.num_stmts);
  // Aliases share their source's buffer and gradient: node[r] is the register that really
  // holds r's tensor.
  std::vector<std::size_t> node(n);
  std::vector<Dense<T>> regs(n);
  std::array<const Dense<T>*, BURNMARK_MAX_OPERANDS> in{};
  for (std::size_t r = 0; r < n; ++r) {
    const BurnmarkStmt& s = program.stmts[r];
    node[r] = r;
    switch (s.kind) {
    case BURNMARK_STMT_LEAF: {
      const BurnmarkLeaf& leaf = program.leaves[s.leaf];
      regs[r].shape = leaf.shape;
      // Gathered through the strides into row-major order. Index leaves arrive as their values
      // (small integers, exact in any Scalar); only the indexing ops read them.
      regs[r].data.resize(static_cast<std::size_t>(leaf.numel));
      for_each_strided(leaf.shape, leaf.strides, leaf.storage_offset,
                       [&](std::int64_t o, std::int64_t at) {
                         regs[r].data[static_cast<std::size_t>(o)] =
                             static_cast<T>(load(leaf.dtype, leaf.data, at));
                       });
      break;
    }
    case BURNMARK_STMT_ALIAS: node[r] = node[static_cast<std::size_t>(s.source)]; break;
    case BURNMARK_STMT_OP: {
      for (int i = 0; i < s.num_operands; ++i)
        in[static_cast<std::size_t>(i)] = &regs[node[static_cast<std::size_t>(s.operands[i])]];
      regs[r] = Dense<T>::zeros(s.shape);
      kernels.forward(
          s, std::span<const Dense<T>* const>(in.data(), static_cast<std::size_t>(s.num_operands)),
          regs[r]);
      if (s.dtype != BURNMARK_DTYPE_BOOL) round_all(regs[r].data);
      break;
    }
    default: throw std::runtime_error("unknown statement kind " + std::to_string(s.kind));
    }
  }
  const auto root = node[static_cast<std::size_t>(program.root)];
  storage.set_root<T>(regs[root].shape, regs[root].data, {}, dtype);
  // A mask root has no gradient (LibTorch's bool tensors have no grad_fn): no leaf gets one.
  const bool mask_root = program.stmts[root].dtype == BURNMARK_DTYPE_BOOL;
  if (!options.gradients) return;
  if (mask_root) {
    for (std::size_t r = 0; r < n; ++r)
      if (program.stmts[r].kind == BURNMARK_STMT_LEAF)
        storage.template add_grad<T>(regs[r].shape, std::nullopt, {}, dtype);
    return;
  }
  if constexpr (GradientKernels<K>) {
    std::vector<std::optional<Dense<T>>> grads(n);
    grads[root] = Dense<T>{regs[root].shape, std::vector<T>(regs[root].data.size(), T(1))};
    std::array<Dense<T>, BURNMARK_MAX_OPERANDS> gin;
    std::array<Dense<T>*, BURNMARK_MAX_OPERANDS> gin_ptr{};
    // Registers are in topological order, so reverse order visits a node only after every use.
    for (std::size_t r = n; r-- > 0;) {
      const BurnmarkStmt& s = program.stmts[r];
      if (s.kind != BURNMARK_STMT_OP || !grads[r]) continue;
      const auto arity = static_cast<std::size_t>(s.num_operands);
      for (std::size_t i = 0; i < arity; ++i) {
        const auto src = node[static_cast<std::size_t>(s.operands[i])];
        in[i] = &regs[src];
        gin[i] = Dense<T>::zeros(regs[src].shape);
        gin_ptr[i] = &gin[i];
      }
      kernels.backward(s, std::span<const Dense<T>* const>(in.data(), arity), regs[r], *grads[r],
                       std::span<Dense<T>* const>(gin_ptr.data(), arity));
      for (std::size_t i = 0; i < arity; ++i) {
        // No gradient enters a mask (LibTorch's bool tensors have no grad_fn): a comparison
        // fed a zero gradient would still run its operands' backward, and 0 * inf there is NaN.
        const auto src = node[static_cast<std::size_t>(s.operands[i])];
        if (program.stmts[src].dtype == BURNMARK_DTYPE_BOOL) continue;
        round_all(gin[i].data);
        auto& acc = grads[src];
        if (!acc) {
          acc = std::move(gin[i]);
        } else {
          for (std::size_t k = 0; k < acc->data.size(); ++k)
            acc->data[k] += gin[i].data[k];
          round_all(acc->data);
        }
      }
      grads[r].reset(); // no longer needed: every use of r was visited
    }
    for (std::size_t r = 0; r < n; ++r) {
      const BurnmarkStmt& s = program.stmts[r];
      if (s.kind != BURNMARK_STMT_LEAF) continue;
      auto& g = grads[r];
      storage.add_grad<T>(regs[r].shape,
                          g ? std::optional<std::vector<T>>(std::move(g->data)) : std::nullopt, {},
                          dtype);
    }
  } else {
    throw std::runtime_error("gradients requested from a forward-only plugin");
  }
}

// A Kernels type that takes patches (see the top of this file).
template <class K>
concept PatchableKernels = requires(K k, std::string_view id) {
  { k.enable_patch(id) } -> std::same_as<bool>;
  k.clear_patches();
};

namespace detail {

inline thread_local std::string create_error;

template <ForwardKernels K> struct Thunks {
  static void* create(const char** error) {
    try {
      return new K();
    } catch (const std::exception& e) {
      create_error = e.what();
    } catch (...) {
      create_error = "plugin constructor threw";
    }
    if (error != nullptr) *error = create_error.c_str();
    return nullptr;
  }
  static void destroy(void* context) { delete static_cast<K*>(context); }
  static std::int32_t run(void* context, const BurnmarkProgram* program,
                          const BurnmarkRunOptions* options, BurnmarkResult* result) {
    return guarded_run(result, [&](ResultStorage& storage) {
      walk(*static_cast<K*>(context), *program, *options, storage);
    });
  }
  static void release(void*, BurnmarkResult* result) { ResultStorage::release(result); }
  // All or nothing, as plugin.h asks: an unknown id leaves no patch active.
  static std::int32_t set_patches(void* context, const char* const* ids, std::uint32_t count,
                                  const char** unknown_id) {
    K& kernels = *static_cast<K*>(context);
    try {
      kernels.clear_patches();
      for (std::uint32_t i = 0; i < count; ++i)
        if (!kernels.enable_patch(ids[i])) {
          kernels.clear_patches();
          if (unknown_id != nullptr) *unknown_id = ids[i];
          return 1;
        }
      return 0;
    } catch (...) {
      kernels.clear_patches();
      return 1;
    }
  }
};

} // namespace detail

// The plugin table for Kernels type K. `name`, `description` and `ops` must have static storage.
// run_jvp and run_hvp are left NULL: the walk does reverse mode only. set_patches is set when K
// is PatchableKernels.
template <ForwardKernels K>
constexpr BurnmarkPluginV1 make_plugin_table(const char* name, const char* description,
                                             std::span<const BurnmarkOpSupport> ops) {
  BurnmarkPluginV1 t{};
  t.abi_version = BURNMARK_PLUGIN_ABI_VERSION;
  t.name = name;
  t.description = description;
  t.ops = ops.data();
  t.num_ops = static_cast<std::uint32_t>(ops.size());
  t.computes_gradients = GradientKernels<K> ? 1 : 0;
  t.create = &detail::Thunks<K>::create;
  t.destroy = &detail::Thunks<K>::destroy;
  t.run = &detail::Thunks<K>::run;
  t.release_result = &detail::Thunks<K>::release;
  if constexpr (PatchableKernels<K>) t.set_patches = &detail::Thunks<K>::set_patches;
  return t;
}

} // namespace burnmark::plugin
