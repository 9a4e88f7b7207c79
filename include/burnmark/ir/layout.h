// A leaf's memory layout: how the backends that materialise layouts (LibTorch, the Python repro)
// place the leaf's values in a buffer. Values are the same in every layout, so the reference and
// the oracle ignore it; a layout is a property of the input, not of the mathematics.
//
// Every layout is one as_strided view of a fresh buffer of storage_size() elements (the elements
// no view reaches hold NaN, so a kernel that reads past its view shows):
//   contiguous          row-major strides, offset 0 (the text form prints nothing)
//   permuted(p...)      the dims stored in the order p (outermost first), e.g. permuted(1,0) is
//                       a transposed buffer viewed back as the leaf's shape
//   slice(dim=d, step=k) every k-th element along d of a buffer k times as long there
//   expanded(d...)      stride 0 along the dims d (their values are identical, validate()), the
//                       buffer holding only index 0 of each, as expand() makes
//   offset(o)           contiguous, starting o elements into the buffer
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "burnmark/ir/op.h"
#include "burnmark/ir/shape.h"

namespace burnmark {

enum class LayoutKind : std::uint8_t { Contiguous, Permuted, Slice, Expanded, Offset };
inline constexpr int kLayoutKindCount = 5;

// Slice steps 2..kMaxLayoutStep; storage offsets 1..kMaxLayoutOffset (16 f32s: one AVX-512 line).
inline constexpr int kMaxLayoutStep = 4;
inline constexpr int kMaxLayoutOffset = 16;

struct LeafLayout {
  LayoutKind kind = LayoutKind::Contiguous;
  std::vector<int> dims; // permuted: every dim, outermost in storage first; expanded: ascending
  int dim = 0;           // slice
  int step = 0;          // slice: 2..kMaxLayoutStep
  int offset = 0;        // offset: 1..kMaxLayoutOffset
  bool contiguous() const { return kind == LayoutKind::Contiguous; }
  bool operator==(const LeafLayout&) const = default;
};

// "contiguous", "permuted", "slice", "expanded", "offset".
std::string_view layout_kind_name(LayoutKind kind);

// The text form after a leaf's type: "" for contiguous, else " layout=slice(dim=1, step=2)".
std::string layout_text(const LeafLayout& layout);

// Empty when `layout` is a legal layout of a leaf of shape s: permuted of rank >= 2 and not the
// identity, dims and steps and offsets in range, expanded dims ascending and distinct.
std::string check_layout(const LeafLayout& layout, const Shape& s);

// The as_strided view: element strides, storage offset and the buffer's element count.
struct StridedView {
  std::array<std::int64_t, kMaxRank> strides{};
  std::int64_t storage_offset = 0;
  std::int64_t storage_size = 0;
};
StridedView strided_view(const LeafLayout& layout, const Shape& s);

// The shape whose values the buffer holds: s with every expanded dim 1 (s itself otherwise).
Shape compact_shape(const LeafLayout& layout, const Shape& s);
// Row-major data of shape s reduced to compact_shape (index 0 along expanded dims), and back
// (broadcast along them).
std::vector<double> compact_data(const LeafLayout& layout, const Shape& s,
                                 const std::vector<double>& data);
std::vector<double> expand_data(const LeafLayout& layout, const Shape& s,
                                const std::vector<double>& compact);

// relayout's attribute (ops.def): a layout held in Attrs' fields, and back. The kind is in
// variant; permuted's and expanded's dims are permutation_code digits (dim + 1 each) in times;
// slice's dim is in dim and its step in dim1; offset's offset is in times. attrs_layout of
// attributes no layout_attrs makes gives a layout check_layout rejects.
Attrs layout_attrs(const LeafLayout& layout);
LeafLayout attrs_layout(const Attrs& attrs);
// Empty when relayout may lay out a register of shape s as `layout`: a legal leaf layout
// (check_layout) whose expanded dims have size 1, so that the values stay what they were.
std::string check_relayout(const LeafLayout& layout, const Shape& s);

} // namespace burnmark
