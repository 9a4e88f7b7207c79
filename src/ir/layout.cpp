// Leaf layouts (burnmark/ir/layout.h): text, legality and the strided view each one is.
#include "burnmark/ir/layout.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace burnmark {

std::string_view layout_kind_name(LayoutKind kind) {
  switch (kind) {
  case LayoutKind::Contiguous: return "contiguous";
  case LayoutKind::Permuted: return "permuted";
  case LayoutKind::Slice: return "slice";
  case LayoutKind::Expanded: return "expanded";
  case LayoutKind::Offset: return "offset";
  }
  return "?";
}

std::string layout_text(const LeafLayout& l) {
  switch (l.kind) {
  case LayoutKind::Contiguous: return {};
  case LayoutKind::Permuted: return fmt::format(" layout=permuted({})", fmt::join(l.dims, ","));
  case LayoutKind::Slice: return fmt::format(" layout=slice(dim={}, step={})", l.dim, l.step);
  case LayoutKind::Expanded: return fmt::format(" layout=expanded({})", fmt::join(l.dims, ","));
  case LayoutKind::Offset: return fmt::format(" layout=offset({})", l.offset);
  }
  return {};
}

std::string check_layout(const LeafLayout& l, const Shape& s) {
  const int rank = s.rank();
  // Only the fields of the kind may be set, so that one layout has one representation.
  const bool no_dims = l.dims.empty(), no_slice = l.dim == 0 && l.step == 0,
             no_offset = l.offset == 0;
  switch (l.kind) {
  case LayoutKind::Contiguous:
    return no_dims && no_slice && no_offset ? "" : "a contiguous layout has no parameters";
  case LayoutKind::Permuted: {
    if (!no_slice || !no_offset) return "permuted takes only its dims";
    if (rank < 2) return "permuted needs rank >= 2";
    if (static_cast<int>(l.dims.size()) != rank)
      return fmt::format("permuted needs all {} dims", rank);
    std::array<bool, kMaxRank> seen{};
    bool identity = true;
    for (int i = 0; i < rank; ++i) {
      const int d = l.dims[static_cast<std::size_t>(i)];
      if (d < 0 || d >= rank || seen[static_cast<std::size_t>(d)])
        return "permuted dims must be a permutation of 0..rank-1";
      seen[static_cast<std::size_t>(d)] = true;
      identity = identity && d == i;
    }
    return identity ? "permuted in the identity order is contiguous" : "";
  }
  case LayoutKind::Slice:
    if (!no_dims || !no_offset) return "slice takes only dim and step";
    if (l.dim < 0 || l.dim >= rank) return fmt::format("slice dim {} outside rank {}", l.dim, rank);
    if (l.step < 2 || l.step > kMaxLayoutStep)
      return fmt::format("slice step must be 2..{}", kMaxLayoutStep);
    return {};
  case LayoutKind::Expanded:
    if (!no_slice || !no_offset) return "expanded takes only its dims";
    if (l.dims.empty()) return "expanded needs at least one dim";
    for (std::size_t i = 0; i < l.dims.size(); ++i)
      if (l.dims[i] < 0 || l.dims[i] >= rank || (i > 0 && l.dims[i] <= l.dims[i - 1]))
        return "expanded dims must be ascending dims of the leaf";
    return {};
  case LayoutKind::Offset:
    if (!no_dims || !no_slice) return "offset takes only its offset";
    if (l.offset < 1 || l.offset > kMaxLayoutOffset)
      return fmt::format("offset must be 1..{}", kMaxLayoutOffset);
    return {};
  }
  return "unknown layout";
}

Shape compact_shape(const LeafLayout& l, const Shape& s) {
  Shape c = s;
  if (l.kind == LayoutKind::Expanded)
    for (int d : l.dims)
      c[d] = 1;
  return c;
}

StridedView strided_view(const LeafLayout& l, const Shape& s) {
  StridedView v;
  const int rank = s.rank();
  switch (l.kind) {
  case LayoutKind::Contiguous:
  case LayoutKind::Offset: v.strides = s.strides(); break;
  case LayoutKind::Permuted: {
    Shape stored;
    for (int d : l.dims)
      stored.push_back(s[d]);
    const auto cs = stored.strides();
    for (int i = 0; i < rank; ++i)
      v.strides[static_cast<std::size_t>(l.dims[static_cast<std::size_t>(i)])] =
          cs[static_cast<std::size_t>(i)];
    break;
  }
  case LayoutKind::Slice: {
    Shape buffer = s;
    buffer[l.dim] = s[l.dim] * l.step;
    v.strides = buffer.strides();
    v.strides[static_cast<std::size_t>(l.dim)] *= l.step;
    break;
  }
  case LayoutKind::Expanded:
    v.strides = compact_shape(l, s).strides();
    for (int d : l.dims)
      v.strides[static_cast<std::size_t>(d)] = 0;
    break;
  }
  v.storage_offset = l.kind == LayoutKind::Offset ? l.offset : 0;
  // One past the furthest element the view reaches (no element at all: just the offset).
  std::int64_t last = v.storage_offset;
  for (int i = 0; i < rank; ++i) {
    if (s[i] == 0) return v.storage_size = v.storage_offset, v;
    last += (s[i] - 1) * v.strides[static_cast<std::size_t>(i)];
  }
  v.storage_size = last + 1;
  return v;
}

namespace {

int dims_code(const std::vector<int>& dims) {
  int code = 0;
  for (int d : dims)
    code = code * 10 + d + 1;
  return code;
}

// The digits of a dims code, most significant first; a digit 0 (no dim) becomes -1, which
// check_layout rejects.
std::vector<int> code_dims(int code) {
  std::vector<int> dims;
  for (; code > 0 && dims.size() <= static_cast<std::size_t>(kMaxRank); code /= 10)
    dims.insert(dims.begin(), code % 10 - 1);
  if (code < 0) dims.push_back(-1);
  return dims;
}

} // namespace

Attrs layout_attrs(const LeafLayout& l) {
  Attrs a;
  a.variant = static_cast<int>(l.kind);
  switch (l.kind) {
  case LayoutKind::Contiguous: break;
  case LayoutKind::Permuted:
  case LayoutKind::Expanded: a.times = dims_code(l.dims); break;
  case LayoutKind::Slice:
    a.dim = l.dim;
    a.dim1 = l.step;
    break;
  case LayoutKind::Offset: a.times = l.offset; break;
  }
  return a;
}

LeafLayout attrs_layout(const Attrs& a) {
  LeafLayout l;
  // An out-of-range kind reads as a permuted layout without dims, which check_layout rejects.
  if (a.variant < 0 || a.variant >= kLayoutKindCount) {
    l.kind = LayoutKind::Permuted;
    return l;
  }
  l.kind = static_cast<LayoutKind>(a.variant);
  switch (l.kind) {
  case LayoutKind::Contiguous: break;
  case LayoutKind::Permuted:
  case LayoutKind::Expanded: l.dims = code_dims(a.times); break;
  case LayoutKind::Slice:
    l.dim = a.dim;
    l.step = a.dim1;
    break;
  case LayoutKind::Offset: l.offset = a.times; break;
  }
  return l;
}

std::string check_relayout(const LeafLayout& l, const Shape& s) {
  std::string why = check_layout(l, s);
  if (!why.empty()) return why;
  if (l.kind == LayoutKind::Expanded)
    for (int d : l.dims)
      if (s[d] != 1) return fmt::format("relayout expands only dims of size 1, not dim {}", d);
  return {};
}

namespace {

// The row-major index in shape c of the element at row-major index i of shape s, each coordinate
// clamped to c's extent (0 along an expanded dim).
std::int64_t compact_index(const Shape& s, const Shape& c, std::int64_t i) {
  std::int64_t out = 0, scale = 1;
  for (int d = s.rank() - 1; d >= 0; --d) {
    const std::int64_t coord = i % s[d];
    i /= s[d];
    out += (c[d] == s[d] ? coord : 0) * scale;
    scale *= c[d];
  }
  return out;
}

} // namespace

std::vector<double> compact_data(const LeafLayout& l, const Shape& s,
                                 const std::vector<double>& data) {
  const Shape c = compact_shape(l, s);
  if (c == s) return data;
  std::vector<double> out(static_cast<std::size_t>(c.numel()));
  // Every element writes its compact slot; the last write wins, and validate() has checked that
  // all writes to one slot agree.
  for (std::int64_t i = 0; i < s.numel(); ++i)
    out[static_cast<std::size_t>(compact_index(s, c, i))] = data[static_cast<std::size_t>(i)];
  return out;
}

std::vector<double> expand_data(const LeafLayout& l, const Shape& s,
                                const std::vector<double>& compact) {
  const Shape c = compact_shape(l, s);
  if (c == s) return compact;
  std::vector<double> out(static_cast<std::size_t>(s.numel()));
  for (std::int64_t i = 0; i < s.numel(); ++i)
    out[static_cast<std::size_t>(i)] = compact[static_cast<std::size_t>(compact_index(s, c, i))];
  return out;
}

} // namespace burnmark
