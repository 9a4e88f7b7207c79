// The registered conventions (conventions.def) as an enum and a set, shared by the reference
// backend, which can compute either side of each, and the triage layer, which names the side a
// backend took.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace burnmark {

enum class Convention : std::uint8_t {
#define BURNMARK_CONVENTION(Enum, name, description, doc, scope) Enum,
#include "burnmark/backends/conventions.def"
#undef BURNMARK_CONVENTION
};

struct ConventionInfo {
  Convention convention;
  std::string_view name;
  std::string_view description;
  std::string_view doc;   // the library's documentation link that makes this point a choice
  std::string_view scope; // "any", or the comma-separated libraries whose documentation it is
};

inline constexpr std::array kConventions = {
#define BURNMARK_CONVENTION(Enum, name, description, doc, scope)                                   \
  ConventionInfo{Convention::Enum, name, description, doc, scope},
#include "burnmark/backends/conventions.def"
#undef BURNMARK_CONVENTION
};

constexpr const ConventionInfo& convention_info(Convention c) {
  return kConventions[static_cast<std::size_t>(c)];
}

// Whether a divergence of `library` (backend_library()'s name: "libtorch", "jax", "onednn") may be
// explained by convention `c`: a behaviour is a convention only for the libraries documenting it.
constexpr bool convention_applies_to(const ConventionInfo& c, std::string_view library) {
  if (c.scope == "any") return true;
  for (std::string_view rest = c.scope; !rest.empty();) {
    const std::size_t comma = rest.find(',');
    if (rest.substr(0, comma) == library) return true;
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
  }
  return false;
}

// Which conventions take their other side; empty is the reference's own choice everywhere.
class ConventionSet {
public:
  constexpr ConventionSet() = default;
  constexpr explicit ConventionSet(Convention c) : bits_(bit(c)) {}
  constexpr bool has(Convention c) const { return (bits_ & bit(c)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr void add(Convention c) { bits_ |= bit(c); }
  // As a plain bit set (Outcome::conventions_reached) and back.
  constexpr std::uint32_t bits() const { return bits_; }
  static constexpr ConventionSet from_bits(std::uint32_t bits) {
    ConventionSet s;
    s.bits_ = bits & all().bits_;
    return s;
  }
  // Every registered convention switched: LibTorch's side at each point at once.
  static constexpr ConventionSet all();
  // Every convention of scope "any" switched (the judge's all-at-once reference: a library's own
  // conventions are not mixed into another's).
  static constexpr ConventionSet unscoped();
  // Every convention whose scope covers `library` (backend_library()'s name) switched: the "any"
  // ones and the library's own. For "" (or a library with none of its own), unscoped().
  static constexpr ConventionSet for_library(std::string_view library);

private:
  static constexpr std::uint32_t bit(Convention c) {
    return std::uint32_t{1} << static_cast<unsigned>(c);
  }
  std::uint32_t bits_ = 0;
};
static_assert(kConventions.size() <= 32);
constexpr ConventionSet ConventionSet::all() {
  ConventionSet s;
  for (const ConventionInfo& c : kConventions)
    s.bits_ |= bit(c.convention);
  return s;
}

constexpr ConventionSet ConventionSet::unscoped() {
  ConventionSet s;
  for (const ConventionInfo& c : kConventions)
    if (c.scope == "any") s.bits_ |= bit(c.convention);
  return s;
}

constexpr ConventionSet ConventionSet::for_library(std::string_view library) {
  ConventionSet s;
  for (const ConventionInfo& c : kConventions)
    if (convention_applies_to(c, library)) s.bits_ |= bit(c.convention);
  return s;
}

} // namespace burnmark
