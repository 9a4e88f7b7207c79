// oneDNN primitives behind DnnlOps: memory descriptors over the caller's buffers, primitive
// creation keyed by everything that defines the primitive, and execution on the one stream.
#include "dnnl_ops.h"

#include <algorithm>
#include <cstring>
#include <dlfcn.h>
#include <stdexcept>
#include <utility>

#include "burnmark/plugin/plugin_walk.h"

namespace burnmark::onednn {
namespace {

using dnnl::algorithm;
using dnnl::memory;

// oneDNN has no rank-0 tensors: a scalar is one element of rank 1. Shorter shapes get leading
// 1s up to `rank`, which is how NumPy broadcasting aligns them.
Dims dims_of(const BurnmarkShape& s, int rank) {
  rank = std::max(rank, 1);
  Dims d(static_cast<std::size_t>(rank), 1);
  for (int i = 0; i < s.rank; ++i)
    d[static_cast<std::size_t>(rank - s.rank + i)] = s.dims[i];
  return d;
}

Dims plain_strides(const Dims& d) {
  Dims s(d.size(), 0);
  memory::dim step = 1;
  for (std::size_t i = d.size(); i-- > 0;) {
    s[i] = step;
    step *= d[i];
  }
  return s;
}

memory::desc md_typed(const Dims& dims, const Dims& strides, memory::data_type dt) {
  return memory::desc(dims, dt, strides);
}

BurnmarkShape shape_of(const Dims& d) {
  BurnmarkShape s{};
  s.rank = static_cast<std::int32_t>(d.size());
  for (std::size_t i = 0; i < d.size(); ++i)
    s.dims[i] = d[i];
  return s;
}

std::int64_t count(const BurnmarkShape& s) {
  std::int64_t n = 1;
  for (int i = 0; i < s.rank; ++i)
    n *= s.dims[i];
  return n;
}

// Cache keys: the raw bytes of every parameter that defines a primitive.
class Key {
public:
  explicit Key(char kind) { s_.push_back(kind); }
  Key& add(std::int64_t v) {
    s_.append(reinterpret_cast<const char*>(&v), sizeof v);
    return *this;
  }
  Key& add(float v) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return add(static_cast<std::int64_t>(bits));
  }
  Key& add(algorithm a) { return add(static_cast<std::int64_t>(a)); }
  Key& add(const Dims& d) {
    add(static_cast<std::int64_t>(d.size()));
    for (auto v : d)
      add(static_cast<std::int64_t>(v));
    return *this;
  }
  const std::string& str() const { return s_; }

private:
  std::string s_;
};

// Bounds the cache on long campaigns; BurnMark's shapes repeat, so a clear is rare.
constexpr std::size_t kMaxCachedPrimitives = 8192;

} // namespace

DnnlOps::DnnlOps() : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {
#if DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP
  // The OpenMP runtime libdnnl already loaded; looked up rather than linked, so the plugin does
  // not pick an OpenMP library of its own (clang's -fopenmp would bring a second one, libomp).
  if (void* omp = dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD)) {
    omp_get_max_threads_ = reinterpret_cast<int (*)()>(dlsym(omp, "omp_get_max_threads"));
    omp_set_num_threads_ = reinterpret_cast<void (*)(int)>(dlsym(omp, "omp_set_num_threads"));
    dlclose(omp); // still loaded: libdnnl depends on it
    if (omp_get_max_threads_ == nullptr || omp_set_num_threads_ == nullptr)
      omp_set_num_threads_ = nullptr;
  }
#endif
}

// The data type is part of every key: the same shapes make another primitive in bf16.
template <class Make> dnnl::primitive& DnnlOps::cached(const std::string& key, Make&& make) {
  const std::string typed = key + static_cast<char>(dt_);
  auto it = cache_.find(typed);
  if (it != cache_.end()) return it->second;
  if (cache_.size() >= kMaxCachedPrimitives) cache_.clear();
  return cache_.emplace(typed, make()).first->second;
}

void DnnlOps::run(dnnl::primitive& p, std::initializer_list<Arg> args) {
  std::vector<std::vector<std::uint16_t>> staged; // one per 16-bit argument, in args' order
  std::unordered_map<int, memory> bound;
  for (const Arg& a : args) {
    const memory::data_type dt = a.md.data_type();
    if (dt == memory::data_type::f32) {
      // Sources are only ever read by a primitive; oneDNN takes a non-const handle regardless.
      bound.emplace(a.id, memory(a.md, engine_, a.to ? a.to : const_cast<float*>(a.from)));
      continue;
    }
    // The walk's registers hold values of the dtype, so narrowing them is exact; a constant the
    // plugin makes is rounded to nearest even, as LibTorch's cast does. An output is staged too:
    // the sum post-op reads its prior contents.
    std::vector<std::uint16_t>& bits = staged.emplace_back(a.count);
    for (std::size_t i = 0; i < a.count; ++i)
      bits[i] = dt == memory::data_type::bf16 ? plugin::double_to_bf16(a.from[i])
                                              : plugin::double_to_half(a.from[i]);
    bound.emplace(a.id, memory(a.md, engine_, bits.data()));
  }
  p.execute(stream_, bound);
  stream_.wait();
  // 16-bit results back into the caller's floats: widening is exact.
  std::size_t k = 0;
  for (const Arg& a : args) {
    const memory::data_type dt = a.md.data_type();
    if (dt == memory::data_type::f32) continue;
    const std::vector<std::uint16_t>& bits = staged[k++];
    if (a.to == nullptr) continue;
    for (std::size_t i = 0; i < a.count; ++i)
      a.to[i] = static_cast<float>(dt == memory::data_type::bf16 ? plugin::bf16_to_double(bits[i])
                                                                 : plugin::half_to_double(bits[i]));
  }
}

void DnnlOps::set_dtype(memory::data_type dt) {
  if (dt != memory::data_type::f32 && dt != memory::data_type::bf16 && dt != memory::data_type::f16)
    throw std::invalid_argument("DnnlOps computes in f32, bf16 or f16");
  dt_ = dt;
}

memory::desc DnnlOps::md_(const Dims& dims, const Dims& strides) const {
  return md_typed(dims, strides, dt_);
}
memory::desc DnnlOps::md_(const Dims& dims) const {
  return md_(dims, plain_strides(dims));
}

// One thread: BurnMark's tensors have at most 8192 elements, where OpenMP's fork and join cost
// more than the work (measured on a loaded 2-core machine: about 4x the programs/s of two
// threads). Primitive creation is covered too, since oneDNN sizes a primitive for the thread
// count it sees then. The caller's count is restored: the host's other backends (LibTorch) share
// the thread and the OpenMP runtime.
DnnlOps::SingleThreaded::SingleThreaded(const DnnlOps& ops) : ops_(ops) {
  if (ops_.omp_set_num_threads_ == nullptr) return;
  saved_ = ops_.omp_get_max_threads_();
  if (saved_ != 1) ops_.omp_set_num_threads_(1);
}

DnnlOps::SingleThreaded::~SingleThreaded() {
  if (ops_.omp_set_num_threads_ != nullptr && saved_ != 1) ops_.omp_set_num_threads_(saved_);
}

DnnlOps::Arg DnnlOps::in(int id, const memory::desc& d, ConstView v) {
  return Arg{id, d, v.data, nullptr, static_cast<std::size_t>(count(v.shape))};
}

DnnlOps::Arg DnnlOps::out(int id, const memory::desc& d, View v) {
  return Arg{id, d, v.data, v.data, static_cast<std::size_t>(count(v.shape))};
}

void DnnlOps::eltwise(algorithm alg, float alpha, float beta, ConstView src, View dst) {
  const Dims d{count(src.shape)};
  auto& p = cached(Key('E').add(alg).add(alpha).add(beta).add(d).str(), [&] {
    const dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_training, alg, md_(d), alpha,
                                           beta);
    return dnnl::primitive(
        dnnl::eltwise_forward(dnnl::eltwise_forward::primitive_desc(desc, engine_)));
  });
  run(p, {in(DNNL_ARG_SRC, md_(d), src), out(DNNL_ARG_DST, md_(d), dst)});
}

void DnnlOps::eltwise_backward(algorithm alg, float alpha, float beta, ConstView saved,
                               ConstView diff_dst, View diff_src) {
  const Dims d{count(saved.shape)};
  auto& p = cached(Key('e').add(alg).add(alpha).add(beta).add(d).str(), [&] {
    // A backward primitive descriptor needs its forward one as a hint.
    const dnnl::eltwise_forward::primitive_desc hint(
        dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_training, alg, md_(d), alpha, beta),
        engine_);
    const dnnl::eltwise_backward::desc desc(alg, md_(d), md_(d), alpha, beta);
    return dnnl::primitive(
        dnnl::eltwise_backward(dnnl::eltwise_backward::primitive_desc(desc, engine_, hint)));
  });
  // The *_use_dst_for_bwd algorithms read DST, the others SRC; the unused one is ignored.
  run(p, {in(DNNL_ARG_SRC, md_(d), saved), in(DNNL_ARG_DST, md_(d), saved),
          in(DNNL_ARG_DIFF_DST, md_(d), diff_dst), out(DNNL_ARG_DIFF_SRC, md_(d), diff_src)});
}

void DnnlOps::binary(algorithm alg, ConstView a, ConstView b, View dst) {
  const int rank = std::max(dst.shape.rank, 1);
  const Dims dd = dims_of(dst.shape, rank);
  Dims da = dims_of(a.shape, rank), db = dims_of(b.shape, rank);
  // oneDNN broadcasts src1 only. Addition and multiplication commute bit for bit, so a
  // broadcast first operand is swapped to second; otherwise it is expanded to dst's shape
  // first (an exact copy), since e.g. x - y is not -(y - x) at signed zeros.
  const bool commutes = alg == algorithm::binary_add || alg == algorithm::binary_mul;
  std::vector<float> expanded;
  if (da != dd && commutes && db == dd) {
    std::swap(a, b);
    std::swap(da, db);
  } else if (da != dd) {
    expanded.resize(static_cast<std::size_t>(count(dst.shape)));
    expand(a, View{dst.shape, expanded.data()});
    a = ConstView{dst.shape, expanded.data()};
    da = dd;
  }
  auto& p = cached(Key('B').add(alg).add(db).add(dd).str(), [&] {
    const dnnl::binary::desc desc(alg, md_(dd), md_(db), md_(dd));
    return dnnl::primitive(dnnl::binary(dnnl::binary::primitive_desc(desc, engine_)));
  });
  run(p, {in(DNNL_ARG_SRC_0, md_(dd), a), in(DNNL_ARG_SRC_1, md_(db), b),
          out(DNNL_ARG_DST, md_(dd), dst)});
}

void DnnlOps::divide_by(ConstView src, float divisor, View dst) {
  binary_scalar(algorithm::binary_div, src, divisor, dst);
}

// The scalar stays an f32 operand in every dtype (oneDNN's binary takes src1 in another data
// type): LibTorch computes a 16-bit tensor op a scalar in f32 (opmath) and rounds the result
// once, and a count like 300 is not a bf16 value.
void DnnlOps::binary_scalar(algorithm alg, ConstView src, float scalar, View dst) {
  const int rank = std::max(dst.shape.rank, 1);
  const Dims dd = dims_of(dst.shape, rank), db(static_cast<std::size_t>(rank), 1);
  const memory::desc scalar_md = md_typed(db, plain_strides(db), memory::data_type::f32);
  auto& p = cached(Key('b').add(alg).add(dd).str(), [&] {
    const dnnl::binary::desc desc(alg, md_(dd), scalar_md, md_(dd));
    return dnnl::primitive(dnnl::binary(dnnl::binary::primitive_desc(desc, engine_)));
  });
  run(p, {in(DNNL_ARG_SRC_0, md_(dd), src),
          in(DNNL_ARG_SRC_1, scalar_md, ConstView{BurnmarkShape{}, &scalar}),
          out(DNNL_ARG_DST, md_(dd), dst)});
}

void DnnlOps::reduce_to(algorithm alg, ConstView src, View dst) {
  const int rank = std::max(src.shape.rank, 1);
  const Dims ds = dims_of(src.shape, rank), dd = dims_of(dst.shape, rank);
  // oneDNN refuses a reduction that reduces nothing; summing or averaging one element is a copy.
  if (ds == dd) {
    std::copy_n(src.data, count(src.shape), dst.data);
    return;
  }
  auto& p = cached(Key('R').add(alg).add(ds).add(dd).str(), [&] {
    const dnnl::reduction::desc desc(alg, md_(ds), md_(dd), 0.0f, 0.0f);
    return dnnl::primitive(dnnl::reduction(dnnl::reduction::primitive_desc(desc, engine_)));
  });
  run(p, {in(DNNL_ARG_SRC, md_(ds), src), out(DNNL_ARG_DST, md_(dd), dst)});
}

void DnnlOps::expand(ConstView src, View dst) {
  const int rank = std::max(dst.shape.rank, 1);
  const Dims ds = dims_of(src.shape, rank), dd = dims_of(dst.shape, rank);
  Dims strides = plain_strides(ds);
  for (std::size_t i = 0; i < dd.size(); ++i)
    if (ds[i] != dd[i]) strides[i] = 0;
  auto& p = cached(Key('X').add(dd).add(strides).str(), [&] {
    return dnnl::primitive(
        dnnl::reorder(dnnl::reorder::primitive_desc(engine_, md_(dd, strides), engine_, md_(dd))));
  });
  run(p, {in(DNNL_ARG_FROM, md_(dd, strides), src), out(DNNL_ARG_TO, md_(dd), dst)});
}

void DnnlOps::transpose(ConstView src, int d0, int d1, View dst) {
  const Dims dd = dims_of(dst.shape, dst.shape.rank);
  Dims strides = plain_strides(dims_of(src.shape, src.shape.rank));
  std::swap(strides[static_cast<std::size_t>(d0)], strides[static_cast<std::size_t>(d1)]);
  auto& p = cached(Key('T').add(dd).add(strides).str(), [&] {
    return dnnl::primitive(
        dnnl::reorder(dnnl::reorder::primitive_desc(engine_, md_(dd, strides), engine_, md_(dd))));
  });
  run(p, {in(DNNL_ARG_FROM, md_(dd, strides), src), out(DNNL_ARG_TO, md_(dd), dst)});
}

namespace {
// A tensor seen as [elements before dim, `mid`, elements from dim on (/ mid)]: repeat tiles
// whole blocks along dim, so the tiles are the middle axis of this view.
Dims tiled_dims(const BurnmarkShape& s, int dim, std::int64_t mid, std::int64_t rest) {
  std::int64_t outer = 1;
  for (int i = 0; i < dim; ++i)
    outer *= s.dims[i];
  return Dims{outer, mid, rest};
}
std::int64_t block_of(const BurnmarkShape& s, int dim) {
  std::int64_t n = 1;
  for (int i = dim; i < s.rank; ++i)
    n *= s.dims[i];
  return n;
}
} // namespace

void DnnlOps::repeat(ConstView src, int dim, int times, View dst) {
  const std::int64_t rest = block_of(src.shape, dim);
  expand(ConstView{shape_of(tiled_dims(src.shape, dim, 1, rest)), src.data},
         View{shape_of(tiled_dims(src.shape, dim, times, rest)), dst.data});
}

void DnnlOps::unrepeat(ConstView src, int dim, int times, View dst) {
  const std::int64_t rest = block_of(dst.shape, dim);
  reduce_to(algorithm::reduction_sum,
            ConstView{shape_of(tiled_dims(dst.shape, dim, times, rest)), src.data},
            View{shape_of(tiled_dims(dst.shape, dim, 1, rest)), dst.data});
}

void DnnlOps::concat(ConstView a, ConstView b, int dim, View dst) {
  const Dims da = dims_of(a.shape, a.shape.rank), db = dims_of(b.shape, b.shape.rank),
             dd = dims_of(dst.shape, dst.shape.rank);
  auto& p = cached(Key('C').add(static_cast<std::int64_t>(dim)).add(da).add(db).str(), [&] {
    return dnnl::primitive(
        dnnl::concat(dnnl::concat::primitive_desc(md_(dd), dim, {md_(da), md_(db)}, engine_)));
  });
  run(p, {in(DNNL_ARG_MULTIPLE_SRC, md_(da), a), in(DNNL_ARG_MULTIPLE_SRC + 1, md_(db), b),
          out(DNNL_ARG_DST, md_(dd), dst)});
}

void DnnlOps::slice(ConstView src, int dim, std::int64_t offset, View dst) {
  const Dims ds = dims_of(src.shape, src.shape.rank), dd = dims_of(dst.shape, dst.shape.rank);
  Dims offsets(ds.size(), 0);
  offsets[static_cast<std::size_t>(dim)] = offset;
  const memory::desc part = md_(ds).submemory_desc(dd, offsets);
  auto& p = cached(Key('S').add(ds).add(dd).add(offsets).str(), [&] {
    return dnnl::primitive(
        dnnl::reorder(dnnl::reorder::primitive_desc(engine_, part, engine_, md_(dd))));
  });
  run(p, {in(DNNL_ARG_FROM, part, src), out(DNNL_ARG_TO, md_(dd), dst)});
}

void DnnlOps::matmul(ConstView a, bool transpose_a, ConstView b, bool transpose_b, View dst,
                     float scale, bool accumulate, float sum_scale) {
  const int rank = dst.shape.rank;
  // A transposed operand is the same buffer read with its last two strides swapped.
  auto logical = [rank](const BurnmarkShape& s, bool t) {
    Dims d = dims_of(s, rank);
    Dims st = plain_strides(d);
    if (t) {
      std::swap(d[d.size() - 1], d[d.size() - 2]);
      std::swap(st[st.size() - 1], st[st.size() - 2]);
    }
    return std::pair{d, st};
  };
  // Plain pairs, not structured bindings: clang 14 cannot capture those in the lambda below.
  const std::pair<Dims, Dims> la = logical(a.shape, transpose_a),
                              lb = logical(b.shape, transpose_b);
  const Dims &da = la.first, &sa = la.second, &db = lb.first, &sb = lb.second;
  const Dims dd = dims_of(dst.shape, rank);
  const Key key = Key('M')
                      .add(da)
                      .add(sa)
                      .add(db)
                      .add(sb)
                      .add(dd)
                      .add(scale)
                      .add(static_cast<std::int64_t>(accumulate))
                      .add(sum_scale);
  auto& p = cached(key.str(), [&] {
    const dnnl::matmul::desc desc(md_(da, sa), md_(db, sb), md_(dd));
    dnnl::primitive_attr attr;
    if (scale != 1.0f) attr.set_output_scales(0, {scale});
    if (accumulate) {
      dnnl::post_ops po;
      po.append_sum(sum_scale);
      attr.set_post_ops(po);
    }
    return dnnl::primitive(dnnl::matmul(dnnl::matmul::primitive_desc(desc, attr, engine_)));
  });
  run(p, {in(DNNL_ARG_SRC, md_(da, sa), a), in(DNNL_ARG_WEIGHTS, md_(db, sb), b),
          out(DNNL_ARG_DST, md_(dd), dst)});
}

void DnnlOps::softmax(algorithm alg, ConstView src, int axis, View dst) {
  const Dims d = dims_of(src.shape, src.shape.rank);
  auto& p = cached(Key('Z').add(alg).add(static_cast<std::int64_t>(axis)).add(d).str(), [&] {
    const dnnl::softmax_v2_forward::desc desc(dnnl::prop_kind::forward_training, alg, md_(d),
                                              md_(d), axis);
    return dnnl::primitive(
        dnnl::softmax_v2_forward(dnnl::softmax_v2_forward::primitive_desc(desc, engine_)));
  });
  run(p, {in(DNNL_ARG_SRC, md_(d), src), out(DNNL_ARG_DST, md_(d), dst)});
}

void DnnlOps::softmax_backward(algorithm alg, ConstView dst, ConstView diff_dst, int axis,
                               View diff_src) {
  const Dims d = dims_of(dst.shape, dst.shape.rank);
  auto& p = cached(Key('z').add(alg).add(static_cast<std::int64_t>(axis)).add(d).str(), [&] {
    const dnnl::softmax_v2_forward::primitive_desc hint(
        dnnl::softmax_v2_forward::desc(dnnl::prop_kind::forward_training, alg, md_(d), md_(d),
                                       axis),
        engine_);
    const dnnl::softmax_v2_backward::desc desc(alg, md_(d), md_(d), md_(d), axis);
    return dnnl::primitive(
        dnnl::softmax_v2_backward(dnnl::softmax_v2_backward::primitive_desc(desc, engine_, hint)));
  });
  run(p, {in(DNNL_ARG_DST, md_(d), dst), in(DNNL_ARG_DIFF_DST, md_(d), diff_dst),
          out(DNNL_ARG_DIFF_SRC, md_(d), diff_src)});
}

void DnnlOps::reduce(algorithm alg, float p_, float eps, ConstView src, View dst) {
  const int rank = std::max(src.shape.rank, 1);
  const Dims ds = dims_of(src.shape, rank), dd = dims_of(dst.shape, rank);
  auto& p = cached(Key('r').add(alg).add(p_).add(eps).add(ds).add(dd).str(), [&] {
    const dnnl::reduction::desc desc(alg, md_(ds), md_(dd), p_, eps);
    return dnnl::primitive(dnnl::reduction(dnnl::reduction::primitive_desc(desc, engine_)));
  });
  run(p, {in(DNNL_ARG_SRC, md_(ds), src), out(DNNL_ARG_DST, md_(dd), dst)});
}

} // namespace burnmark::onednn
