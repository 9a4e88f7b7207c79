// Printing and parsing of the program text form (see burnmark/ir/text.h for an example).
#include "burnmark/ir/text.h"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <span>
#include <string>
#include <vector>

#include "burnmark/ir/shape_rules.h"

namespace burnmark {

std::string float_to_text(float value) {
  if (std::isnan(value)) return std::signbit(value) ? "-nan" : "nan";
  // fmt prints the shortest decimal that reads back to the same float, "-0" and "inf" included.
  return fmt::format("{}", value);
}

std::string value_to_text(double value, FloatDType dtype) {
  if (dtype != FloatDType::F64) return float_to_text(static_cast<float>(value));
  if (std::isnan(value)) return std::signbit(value) ? "-nan" : "nan";
  return fmt::format("{}", value);
}

std::string double_literal(double value, const std::string& nan, const std::string& inf) {
  if (std::isnan(value)) return nan;
  if (std::isinf(value)) return value > 0 ? inf : "-" + inf;
  std::string s = fmt::format("{}", value);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

namespace {

// A float register is spelled with the program's float dtype (f32[2,3], bf16[2,3]).
std::string shape_text(const Shape& s, DType dtype, FloatDType float_dtype) {
  return std::string(dtype == DType::F32 ? float_dtype_name(float_dtype) : dtype_name(dtype)) +
         s.to_string();
}

std::string real_text(double v) {
  return float_to_text(static_cast<float>(v));
}

// Names of the variant values, per attribute kind, in variant order.
constexpr std::array<std::string_view, 2> kGeluNames = {"none", "tanh"};
constexpr std::array<std::string_view, 2> kRoundingNames = {"trunc", "floor"};

std::string attrs_text(Op op, const Attrs& a) {
  switch (op_info(op).attr_kind) {
  case AttrKind::None: return {};
  case AttrKind::Exponent:
    return fmt::format(", exponent={}", float_to_text(static_cast<float>(a.exponent)));
  case AttrKind::DimKeep: return fmt::format(", dim={}, keepdim={}", a.dim, a.keepdim);
  case AttrKind::TwoDims: return fmt::format(", dim0={}, dim1={}", a.dim, a.dim1);
  case AttrKind::Dim: return fmt::format(", dim={}", a.dim);
  case AttrKind::DimTimes: return fmt::format(", dim={}, times={}", a.dim, a.times);
  case AttrKind::Bounds: return fmt::format(", min={}, max={}", real_text(a.lo), real_text(a.hi));
  case AttrKind::Min: return fmt::format(", min={}", real_text(a.lo));
  case AttrKind::Max: return fmt::format(", max={}", real_text(a.hi));
  case AttrKind::Alpha: return fmt::format(", alpha={}", real_text(a.alpha));
  case AttrKind::Slope: return fmt::format(", negative_slope={}", real_text(a.slope));
  case AttrKind::Lambd: return fmt::format(", lambd={}", real_text(a.lambd));
  case AttrKind::Softplus:
    return fmt::format(", beta={}, threshold={}", real_text(a.beta), real_text(a.threshold));
  case AttrKind::Gelu:
    return fmt::format(", approximate={}", kGeluNames[static_cast<std::size_t>(a.variant & 1)]);
  case AttrKind::Rounding:
    return fmt::format(", rounding_mode={}",
                       kRoundingNames[static_cast<std::size_t>(a.variant & 1)]);
  case AttrKind::Weight: return fmt::format(", weight={}", real_text(a.weight));
  case AttrKind::Eps: return a.variant == 0 ? ", eps=none" : ", eps=" + real_text(a.eps);
  case AttrKind::Correction: return fmt::format(", correction={}", a.variant);
  case AttrKind::DimKeepCorrection:
    return fmt::format(", dim={}, keepdim={}, correction={}", a.dim, a.keepdim, a.variant);
  case AttrKind::Ord: return fmt::format(", ord={}", real_text(a.exponent));
  case AttrKind::DimKeepOrd:
    return fmt::format(", ord={}, dim={}, keepdim={}", real_text(a.exponent), a.dim, a.keepdim);
  case AttrKind::PDim: return fmt::format(", p={}, dim={}", real_text(a.exponent), a.dim);
  case AttrKind::BetaAlpha:
    return fmt::format(", beta={}, alpha={}", real_text(a.beta), real_text(a.alpha));
  case AttrKind::Shift: return fmt::format(", shifts={}, dim={}", a.times, a.dim);
  case AttrKind::Diagonal: return fmt::format(", diagonal={}", a.times);
  case AttrKind::Narrow:
    return fmt::format(", dim={}, start={}, length={}", a.dim, a.dim1, a.times);
  case AttrKind::DimIndex: return fmt::format(", dim={}, index={}", a.dim, a.dim1);
  case AttrKind::DimSize: return fmt::format(", dim={}, size={}", a.dim, a.times);
  case AttrKind::DiagonalDims:
    return fmt::format(", offset={}, dim1={}, dim2={}", a.times, a.dim, a.dim1);
  case AttrKind::ScatterReduce:
    return fmt::format(", dim={}, reduce={}, include_self={}", a.dim,
                       a.variant >= 0 && a.variant < 5
                           ? kScatterReduceNames[static_cast<std::size_t>(a.variant)]
                           : "?",
                       a.include_self);
  case AttrKind::Fill: return fmt::format(", value={}", real_text(a.fill));
  case AttrKind::DimFill: return fmt::format(", dim={}, value={}", a.dim, real_text(a.fill));
  case AttrKind::Accumulate: return fmt::format(", accumulate={}", a.variant != 0);
  case AttrKind::Reshape:
    return a.variant == 0 ? fmt::format(", start_dim={}, end_dim={}", a.dim, a.dim1)
                          : fmt::format(", split_dim={}, factor={}", a.dim, a.times);
  case AttrKind::Permutation: {
    // The code's digits, most significant first, each one more than its dim.
    std::string digits = a.times > 0 ? std::to_string(a.times) : "";
    std::string dims;
    for (char c : digits)
      dims += fmt::format("{}{}", dims.empty() ? "" : ",", c - '1');
    return fmt::format(", dims=[{}]", dims);
  }
  case AttrKind::Slice:
    return fmt::format(", dim={}, start={}, end={}, step={}", a.dim, a.dim1, a.times, a.variant);
  case AttrKind::Chunk: return fmt::format(", chunks={}, dim={}, index={}", a.times, a.dim, a.dim1);
  case AttrKind::Offset: return fmt::format(", offset={}", a.times);
  // ", layout=slice(dim=1, step=2)", as a leaf's; nothing for contiguous.
  case AttrKind::Layout: {
    const std::string text = layout_text(attrs_layout(a));
    return text.empty() ? text : "," + text;
  }
  }
  return {};
}

} // namespace

std::string stmt_to_text(const Program& p, Reg reg) {
  const Stmt& s = p.stmts[static_cast<std::size_t>(reg)];
  switch (s.kind) {
  case StmtKind::Leaf:
    return fmt::format("%{} = leaf {}{}", reg, shape_text(s.shape, s.dtype, p.float_dtype),
                       layout_text(p.leaves[static_cast<std::size_t>(s.leaf)].layout));
  case StmtKind::Alias:
    return fmt::format("%{} = alias %{} : {}", reg, s.source,
                       shape_text(s.shape, s.dtype, p.float_dtype));
  case StmtKind::Op: {
    std::string line = fmt::format("%{} = {}", reg, op_name(s.instr.op));
    for (std::size_t i = 0; i < s.instr.operands.size(); ++i)
      line += fmt::format("{}%{}", i ? ", " : " ", s.instr.operands[i]);
    line += attrs_text(s.instr.op, s.instr.attrs);
    line += " : " + shape_text(s.shape, s.dtype, p.float_dtype);
    return line;
  }
  }
  return {};
}

std::string to_text(const Program& p) {
  std::string out = "# burnmark program v1\n";
  // f32 programs keep the form they always had.
  if (p.float_dtype != FloatDType::F32)
    out += fmt::format("dtype {}\n", float_dtype_name(p.float_dtype));
  for (std::size_t r = 0; r < p.stmts.size(); ++r) {
    out += stmt_to_text(p, static_cast<Reg>(r));
    const Stmt& s = p.stmts[r];
    if (s.kind == StmtKind::Leaf) {
      out += " [";
      const Leaf& leaf = p.leaves[static_cast<std::size_t>(s.leaf)];
      for (std::size_t i = 0; i < leaf.data.size(); ++i) {
        if (i) out += ", ";
        out += value_to_text(leaf.data[i], p.float_dtype);
      }
      for (std::size_t i = 0; i < leaf.indices.size(); ++i)
        out += fmt::format("{}{}", i ? ", " : "", leaf.indices[i]);
      out += ']';
    }
    out += '\n';
  }
  out += fmt::format("root %{}\n", p.root);
  return out;
}

namespace {

// A cursor over one line; every method leaves `error` set on failure and returns false.
struct LineParser {
  std::string_view rest;
  std::string error;
  FloatDType float_dtype = FloatDType::F32; // how float registers are spelled

  void skip_space() {
    while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t'))
      rest.remove_prefix(1);
  }
  bool done() {
    skip_space();
    return rest.empty();
  }
  bool fail(std::string why) {
    if (error.empty()) error = std::move(why);
    return false;
  }
  bool literal(std::string_view lit) {
    skip_space();
    if (rest.substr(0, lit.size()) != lit) return fail("expected '" + std::string(lit) + "'");
    rest.remove_prefix(lit.size());
    return true;
  }
  bool peek(std::string_view lit) {
    skip_space();
    return rest.substr(0, lit.size()) == lit;
  }
  std::string_view word() {
    skip_space();
    std::size_t n = 0;
    while (n < rest.size() && (std::isalnum(static_cast<unsigned char>(rest[n])) || rest[n] == '_'))
      ++n;
    const std::string_view w = rest.substr(0, n);
    rest.remove_prefix(n);
    return w;
  }
  bool integer(long long& out) {
    skip_space();
    const auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), out);
    if (ec != std::errc()) return fail("expected an integer");
    rest.remove_prefix(static_cast<std::size_t>(ptr - rest.data()));
    return true;
  }
  bool real(float& out) {
    skip_space();
    std::size_t n = 0;
    while (n < rest.size() && rest[n] != ',' && rest[n] != ']' && rest[n] != ' ' && rest[n] != ':')
      ++n;
    const std::string token(rest.substr(0, n));
    if (token.empty()) return fail("expected a number");
    char* end = nullptr;
    // strtof, not from_chars: it reads nan/inf, and rounds subnormals exactly.
    out = std::strtof(token.c_str(), &end);
    if (end != token.c_str() + token.size()) return fail("bad number '" + token + "'");
    rest.remove_prefix(n);
    return true;
  }
  // A leaf value: read as a double in f64 programs, as a float (exactly as ever) otherwise.
  bool value(double& out) {
    if (float_dtype != FloatDType::F64) {
      float v = 0;
      if (!real(v)) return false;
      out = v;
      return true;
    }
    skip_space();
    std::size_t n = 0;
    while (n < rest.size() && rest[n] != ',' && rest[n] != ']' && rest[n] != ' ')
      ++n;
    const std::string token(rest.substr(0, n));
    if (token.empty()) return fail("expected a number");
    char* end = nullptr;
    out = std::strtod(token.c_str(), &end);
    if (end != token.c_str() + token.size()) return fail("bad number '" + token + "'");
    rest.remove_prefix(n);
    return true;
  }
  bool reg(Reg& out) {
    long long v = 0;
    if (!literal("%") || !integer(v)) return fail("expected a register like %3");
    out = static_cast<Reg>(v);
    return true;
  }
  bool shape(Shape& out) {
    DType ignored = DType::F32;
    return typed_shape(out, ignored);
  }
  bool typed_shape(Shape& out, DType& dtype) {
    dtype = DType::F32;
    if (peek("bool[")) {
      dtype = DType::Bool;
      literal("bool");
    } else if (peek("i64[")) {
      dtype = DType::I64;
      literal("i64");
    } else if (peek(float_dtype_name(float_dtype))) {
      literal(float_dtype_name(float_dtype));
    } else {
      return fail(fmt::format("expected a type like {}[2,3] (the program's float dtype), bool[...] "
                              "or i64[...]",
                              float_dtype_name(float_dtype)));
    }
    if (!literal("[")) return false;
    out = Shape{};
    if (peek("]")) return literal("]");
    for (;;) {
      long long d = 0;
      if (!integer(d)) return false;
      if (out.rank() == kMaxRank) return fail("rank above " + std::to_string(kMaxRank));
      out.push_back(d);
      if (peek("]")) return literal("]");
      if (!literal(",")) return false;
    }
  }
  bool key(std::string_view name) { return literal(",") && literal(name) && literal("="); }
  bool int_attr(std::string_view name, int& out) {
    long long v = 0;
    if (!key(name) || !integer(v)) return false;
    out = static_cast<int>(v);
    return true;
  }
  bool real_attr(std::string_view name, double& out) {
    float v = 0;
    if (!key(name) || !real(v)) return false;
    out = v;
    return true;
  }
  bool bool_attr(std::string_view name, bool& out) {
    if (!key(name)) return false;
    const std::string_view w = word();
    if (w != "true" && w != "false") return fail("expected true or false");
    out = w == "true";
    return true;
  }
  bool named_attr(std::string_view name, std::span<const std::string_view> names, int& out) {
    if (!key(name)) return false;
    const std::string_view w = word();
    for (std::size_t i = 0; i < names.size(); ++i)
      if (w == names[i]) {
        out = static_cast<int>(i);
        return true;
      }
    return fail("unknown " + std::string(name) + " '" + std::string(w) + "'");
  }
  bool eps_attr(Attrs& a) {
    if (!key("eps")) return false;
    if (peek("none")) {
      word();
      a.variant = 0;
      return true;
    }
    float v = 0;
    if (!real(v)) return false;
    a.eps = v;
    a.variant = 1;
    return true;
  }
  // reshape: a merge (start_dim, end_dim) or a split (split_dim, factor), told by the first key.
  bool reshape_attrs(Attrs& a) {
    const std::string_view saved = rest;
    if (int_attr("start_dim", a.dim)) {
      a.variant = 0;
      return int_attr("end_dim", a.dim1);
    }
    rest = saved;
    error.clear();
    a.variant = 1;
    return int_attr("split_dim", a.dim) && int_attr("factor", a.times);
  }
  // permute's dims list, stored as permutation_code digits (so each dim is 0..8).
  bool permutation_attr(Attrs& a) {
    if (!key("dims") || !literal("[")) return false;
    std::vector<int> dims;
    while (!peek("]")) {
      long long d = 0;
      if (!dims.empty() && !literal(",")) return false;
      if (!integer(d)) return false;
      if (d < 0 || d > 8 || dims.size() >= static_cast<std::size_t>(kMaxRank))
        return fail("permute dims are 0..8, at most " + std::to_string(kMaxRank) + " of them");
      dims.push_back(static_cast<int>(d));
    }
    a.times = permutation_code(dims);
    return literal("]");
  }
  // A parenthesised list of dims: "(1,0)".
  bool dim_list(std::vector<int>& out) {
    if (!literal("(")) return false;
    while (!peek(")")) {
      long long d = 0;
      if (!out.empty() && !literal(",")) return false;
      if (!integer(d)) return false;
      if (d < 0 || d >= kMaxRank || out.size() >= static_cast<std::size_t>(kMaxRank))
        return fail("layout dims are 0.." + std::to_string(kMaxRank - 1));
      out.push_back(static_cast<int>(d));
    }
    return literal(")");
  }
  // A leaf's optional " layout=kind(...)" (layout.h); absent means contiguous.
  bool layout(LeafLayout& out) {
    if (!peek("layout")) return true;
    word();
    if (!literal("=")) return false;
    const std::string_view kind = word();
    long long v = 0;
    if (kind == "permuted") {
      out.kind = LayoutKind::Permuted;
      return dim_list(out.dims);
    }
    if (kind == "expanded") {
      out.kind = LayoutKind::Expanded;
      return dim_list(out.dims);
    }
    if (kind == "slice") {
      out.kind = LayoutKind::Slice;
      if (!literal("(") || !literal("dim") || !literal("=") || !integer(v)) return false;
      if (v < 0 || v >= kMaxRank) return fail("slice dim out of range");
      out.dim = static_cast<int>(v);
      if (!key("step") || !integer(v)) return false;
      if (v < 0 || v > kMaxLayoutStep) return fail("slice step out of range");
      out.step = static_cast<int>(v);
      return literal(")");
    }
    if (kind == "offset") {
      out.kind = LayoutKind::Offset;
      if (!literal("(") || !integer(v)) return false;
      if (v < 0 || v > kMaxLayoutOffset) return fail("offset out of range");
      out.offset = static_cast<int>(v);
      return literal(")");
    }
    return fail("unknown layout '" + std::string(kind) + "' (permuted, slice, expanded or offset)");
  }
  bool attrs(Op op, Attrs& a) {
    switch (op_info(op).attr_kind) {
    case AttrKind::None: return true;
    case AttrKind::Exponent: return real_attr("exponent", a.exponent);
    case AttrKind::DimKeep: return int_attr("dim", a.dim) && bool_attr("keepdim", a.keepdim);
    case AttrKind::TwoDims: return int_attr("dim0", a.dim) && int_attr("dim1", a.dim1);
    case AttrKind::Dim: return int_attr("dim", a.dim);
    case AttrKind::DimTimes: return int_attr("dim", a.dim) && int_attr("times", a.times);
    case AttrKind::Bounds: return real_attr("min", a.lo) && real_attr("max", a.hi);
    case AttrKind::Min: return real_attr("min", a.lo);
    case AttrKind::Max: return real_attr("max", a.hi);
    case AttrKind::Alpha: return real_attr("alpha", a.alpha);
    case AttrKind::Slope: return real_attr("negative_slope", a.slope);
    case AttrKind::Lambd: return real_attr("lambd", a.lambd);
    case AttrKind::Softplus:
      return real_attr("beta", a.beta) && real_attr("threshold", a.threshold);
    case AttrKind::Gelu: return named_attr("approximate", kGeluNames, a.variant);
    case AttrKind::Rounding: return named_attr("rounding_mode", kRoundingNames, a.variant);
    case AttrKind::Weight: return real_attr("weight", a.weight);
    case AttrKind::Eps: return eps_attr(a);
    case AttrKind::Correction: return int_attr("correction", a.variant);
    case AttrKind::DimKeepCorrection:
      return int_attr("dim", a.dim) && bool_attr("keepdim", a.keepdim) &&
             int_attr("correction", a.variant);
    case AttrKind::Ord: return real_attr("ord", a.exponent);
    case AttrKind::DimKeepOrd:
      return real_attr("ord", a.exponent) && int_attr("dim", a.dim) &&
             bool_attr("keepdim", a.keepdim);
    case AttrKind::PDim: return real_attr("p", a.exponent) && int_attr("dim", a.dim);
    case AttrKind::BetaAlpha: return real_attr("beta", a.beta) && real_attr("alpha", a.alpha);
    case AttrKind::Shift: return int_attr("shifts", a.times) && int_attr("dim", a.dim);
    case AttrKind::Diagonal: return int_attr("diagonal", a.times);
    case AttrKind::Narrow:
      return int_attr("dim", a.dim) && int_attr("start", a.dim1) && int_attr("length", a.times);
    case AttrKind::DimIndex: return int_attr("dim", a.dim) && int_attr("index", a.dim1);
    case AttrKind::DimSize: return int_attr("dim", a.dim) && int_attr("size", a.times);
    case AttrKind::DiagonalDims:
      return int_attr("offset", a.times) && int_attr("dim1", a.dim) && int_attr("dim2", a.dim1);
    case AttrKind::ScatterReduce:
      return int_attr("dim", a.dim) && named_attr("reduce", kScatterReduceNames, a.variant) &&
             bool_attr("include_self", a.include_self);
    case AttrKind::Fill: return real_attr("value", a.fill);
    case AttrKind::DimFill: return int_attr("dim", a.dim) && real_attr("value", a.fill);
    case AttrKind::Accumulate: {
      bool accumulate = false;
      if (!bool_attr("accumulate", accumulate)) return false;
      a.variant = accumulate ? 1 : 0;
      return true;
    }
    case AttrKind::Reshape: return reshape_attrs(a);
    case AttrKind::Permutation: return permutation_attr(a);
    case AttrKind::Slice:
      return int_attr("dim", a.dim) && int_attr("start", a.dim1) && int_attr("end", a.times) &&
             int_attr("step", a.variant);
    case AttrKind::Chunk:
      return int_attr("chunks", a.times) && int_attr("dim", a.dim) && int_attr("index", a.dim1);
    case AttrKind::Offset: return int_attr("offset", a.times);
    case AttrKind::Layout: {
      // Absent: contiguous.
      LeafLayout l;
      if (peek(",") && !(literal(",") && peek("layout") && layout(l)))
        return error.empty() ? fail("expected layout=...") : false;
      a = layout_attrs(l);
      return true;
    }
    }
    return false;
  }
};

} // namespace

bool looks_like_program_text(std::string_view rest) {
  while (!rest.empty()) {
    const std::size_t eol = rest.find('\n');
    std::string_view line = rest.substr(0, eol);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t' || line.front() == '\r'))
      line.remove_prefix(1);
    if (line.starts_with("# burnmark program") || line.starts_with("%0 =") ||
        line.starts_with("dtype "))
      return true;
    if (!line.empty() && line.front() != '#') return false;
    if (eol == std::string_view::npos) break;
    rest.remove_prefix(eol + 1);
  }
  return false;
}

ParseResult parse_program(std::string_view text) {
  Program p;
  bool have_root = false;
  int line_no = 0;
  const auto error = [&](const std::string& why) {
    return ParseResult{fmt::format("line {}: {}", line_no, why)};
  };
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    if (const std::size_t hash = line.find('#'); hash != std::string_view::npos)
      line = line.substr(0, hash);
    LineParser lp{line, {}, p.float_dtype};
    if (lp.done()) continue;
    if (have_root) return error("nothing may follow the root line");
    if (lp.peek("dtype")) {
      lp.word();
      const auto dtype = float_dtype_from_name(lp.word());
      if (!dtype || !lp.done()) return error("dtype must be f32, bf16, f16 or f64");
      if (!p.stmts.empty()) return error("the dtype line comes before the first statement");
      p.float_dtype = *dtype;
      continue;
    }
    if (lp.peek("root")) {
      lp.word();
      if (!lp.reg(p.root) || !lp.done())
        return error(lp.error.empty() ? "trailing text after root" : lp.error);
      have_root = true;
      continue;
    }
    Reg dst = -1;
    if (!lp.reg(dst) || !lp.literal("=")) return error(lp.error);
    if (dst != static_cast<Reg>(p.stmts.size()))
      return error(fmt::format("expected register %{} next, found %{}", p.stmts.size(), dst));
    const std::string_view head = lp.word();
    Stmt s;
    if (head == "leaf") {
      Leaf leaf;
      if (!lp.typed_shape(leaf.shape, leaf.dtype) || !lp.layout(leaf.layout) || !lp.literal("["))
        return error(lp.error);
      if (leaf.dtype == DType::Bool) return error("a leaf is f32 or i64, never a mask");
      for (bool first = true; !lp.peek("]"); first = false) {
        if (!first && !lp.literal(",")) return error(lp.error);
        if (leaf.dtype == DType::I64) {
          long long v = 0;
          if (!lp.integer(v)) return error(lp.error);
          leaf.indices.push_back(v);
          continue;
        }
        double v = 0;
        if (!lp.value(v)) return error(lp.error);
        leaf.data.push_back(v);
      }
      lp.literal("]");
      s.kind = StmtKind::Leaf;
      s.leaf = static_cast<int>(p.leaves.size());
      s.shape = leaf.shape;
      s.dtype = leaf.dtype;
      p.leaves.push_back(std::move(leaf));
    } else if (head == "alias") {
      s.kind = StmtKind::Alias;
      if (!lp.reg(s.source) || !lp.literal(":") || !lp.typed_shape(s.shape, s.dtype))
        return error(lp.error);
    } else {
      const auto op = op_from_name(head);
      if (!op) return error("unknown op '" + std::string(head) + "'");
      s.kind = StmtKind::Op;
      s.instr.op = *op;
      for (int i = 0; i < op_arity(*op); ++i) {
        Reg r = -1;
        if ((i > 0 && !lp.literal(",")) || !lp.reg(r)) return error(lp.error);
        s.instr.operands.push_back(r);
      }
      if (!lp.attrs(*op, s.instr.attrs) || !lp.literal(":") || !lp.typed_shape(s.shape, s.dtype))
        return error(lp.error);
    }
    if (!lp.done()) return error("unexpected text: '" + std::string(lp.rest) + "'");
    p.stmts.push_back(std::move(s));
  }
  if (!have_root) {
    if (p.stmts.empty()) return ParseResult{std::string("empty program")};
    p.root = static_cast<Reg>(p.stmts.size() - 1);
  }
  if (std::string why = validate(p); !why.empty()) return ParseResult{"invalid program: " + why};
  return ParseResult{std::move(p)};
}

} // namespace burnmark
