// The oneDNN side of the onednn plugin: every tensor operation the kernels need, each done by
// oneDNN primitives (eltwise, binary, reduction, matmul, concat, reorder) on dense row-major
// float32 buffers. Owns the one engine and stream of a plugin instance and a cache of created
// primitives, since creating a primitive costs far more than running it on BurnMark's small
// tensors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <unordered_map>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "burnmark/plugin/plugin.h"

namespace burnmark::onednn {

using Dims = dnnl::memory::dims;

// A dense row-major float tensor the caller owns, seen by oneDNN. Rank 0 is a one-element
// tensor.
struct View {
  BurnmarkShape shape;
  float* data;
};
struct ConstView {
  BurnmarkShape shape;
  const float* data;
};

class DnnlOps {
public:
  DnnlOps();

  // The data type of the memory every following primitive reads and writes: f32, bf16 or f16.
  // Buffers stay float; in bf16 and f16 they are staged to 16 bits around each primitive.
  void set_dtype(dnnl::memory::data_type dt);
  dnnl::memory::data_type dtype() const { return dt_; }

  // dst = alg(src) elementwise; alpha and beta as oneDNN defines them per algorithm.
  void eltwise(dnnl::algorithm alg, float alpha, float beta, ConstView src, View dst);
  // diff_src = the backward of alg at `saved` (the forward's src, or its dst for the
  // *_use_dst_for_bwd algorithms) applied to diff_dst.
  void eltwise_backward(dnnl::algorithm alg, float alpha, float beta, ConstView saved,
                        ConstView diff_dst, View diff_src);
  // dst = a alg b with NumPy broadcasting to dst's shape.
  void binary(dnnl::algorithm alg, ConstView a, ConstView b, View dst);
  // dst = src / divisor, divisor a scalar.
  void divide_by(ConstView src, float divisor, View dst);
  // dst = src alg scalar, the scalar an f32 operand whatever the dtype.
  void binary_scalar(dnnl::algorithm alg, ConstView src, float scalar, View dst);
  // Sums (reduction_sum) or averages (reduction_mean) src down to dst's shape, which src's
  // broadcasts from: what undoes broadcasting in every backward, and the forward reductions.
  void reduce_to(dnnl::algorithm alg, ConstView src, View dst);
  // dst = src broadcast to dst's shape (a reorder reading src with stride 0 along the broadcast
  // axes).
  void expand(ConstView src, View dst);
  // dst = src with axes d0 and d1 swapped (a reorder reading src with swapped strides).
  void transpose(ConstView src, int d0, int d1, View dst);
  // dst = src tiled `times` times along dim (an expand over a [outer, times, rest] view).
  void repeat(ConstView src, int dim, int times, View dst);
  // dst = the sum of src's tiles along dim, the backward of repeat.
  void unrepeat(ConstView src, int dim, int times, View dst);
  // dst = concat(a, b) along dim, and the slices of grad each operand filled.
  void concat(ConstView a, ConstView b, int dim, View dst);
  void slice(ConstView src, int dim, std::int64_t offset, View dst);
  // dst = op(a) @ op(b) with batch broadcasting, where op transposes the last two axes when the
  // flag is set. dst's shape is the product's. With `scale` the product is multiplied by it
  // (oneDNN's output scale); with `accumulate` the sum post-op adds sum_scale * dst's prior
  // contents: dst = scale * (a @ b) + sum_scale * dst.
  void matmul(ConstView a, bool transpose_a, ConstView b, bool transpose_b, View dst,
              float scale = 1.0f, bool accumulate = false, float sum_scale = 1.0f);
  // dst = softmax (softmax_accurate) or log_softmax (softmax_log) of src along axis, by the
  // softmax_v2 primitive; the backward primitive reads the forward's dst.
  void softmax(dnnl::algorithm alg, ConstView src, int axis, View dst);
  void softmax_backward(dnnl::algorithm alg, ConstView dst, ConstView diff_dst, int axis,
                        View diff_src);
  // A reduction primitive of src down to dst's shape (src broadcasts from it) with the
  // algorithm's p and eps. Unlike reduce_to it never copies: the caller handles a reduction that
  // reduces nothing, which oneDNN refuses.
  void reduce(dnnl::algorithm alg, float p, float eps, ConstView src, View dst);

  std::size_t cached_primitives() const { return cache_.size(); }

  // While alive, oneDNN creates and runs primitives on one OpenMP thread; the caller's thread
  // count comes back afterwards. Wrap every call into DnnlOps in one.
  class SingleThreaded {
  public:
    explicit SingleThreaded(const DnnlOps& ops);
    ~SingleThreaded();
    SingleThreaded(const SingleThreaded&) = delete;
    SingleThreaded& operator=(const SingleThreaded&) = delete;

  private:
    const DnnlOps& ops_;
    int saved_ = 1;
  };

private:
  // Returns the cached primitive under key, or makes one with make() and caches it.
  template <class Make> dnnl::primitive& cached(const std::string& key, Make&& make);
  // One argument of a primitive: the caller's float buffer (count floats) and the memory the
  // primitive sees it as. An output (`to` set) is written back into the caller's floats.
  struct Arg {
    int id;
    dnnl::memory::desc md;
    const float* from;
    float* to;
    std::size_t count;
  };
  // The caller's buffer bound as a primitive's source or destination.
  static Arg in(int id, const dnnl::memory::desc& md, ConstView v);
  static Arg out(int id, const dnnl::memory::desc& md, View v);
  // Runs p on args. A bf16 or f16 argument is staged as 16-bit patterns in run()'s own frame and
  // widened back only once p has run: nothing staged outlives the call, so a primitive that
  // throws (oneDNN may refuse at execution what it accepted at creation) leaves no write pending
  // into buffers its caller then frees.
  void run(dnnl::primitive& p, std::initializer_list<Arg> args);
  // A memory descriptor of the current data type.
  dnnl::memory::desc md_(const Dims& dims, const Dims& strides) const;
  dnnl::memory::desc md_(const Dims& dims) const;

  // OpenMP's thread count for the calling thread (nullptr when oneDNN does not use OpenMP).
  int (*omp_get_max_threads_)() = nullptr;
  void (*omp_set_num_threads_)(int) = nullptr;
  dnnl::engine engine_;
  dnnl::stream stream_;
  std::unordered_map<std::string, dnnl::primitive> cache_;
  std::vector<float> scratch_;
  dnnl::memory::data_type dt_ = dnnl::memory::data_type::f32;
};

} // namespace burnmark::onednn
