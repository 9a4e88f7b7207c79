// Which of a plugin's fix-and-continue patches (docs/patches.md) are on: the set a C++ plugin's
// enable_patch / clear_patches (plugin_walk.h) keep, over the ids it knows. `Id` is the plugin's
// enum of its patches and `Ids` their bugs.md ids in that enum's order, e.g.
//   enum class PatchId : std::size_t { SqrtInf, LogSubnormal };
//   inline constexpr std::array<std::string_view, 2> kPatchIds = {"eigen-sqrt-inf", ...};
//   using Patches = burnmark::plugin::PatchSet<PatchId, kPatchIds>;
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace burnmark::plugin {

template <class Id, const auto& Ids> class PatchSet {
public:
  // False for an id this plugin does not know.
  bool enable(std::string_view id) {
    for (std::size_t i = 0; i < Ids.size(); ++i)
      if (Ids[i] == id) return active_[i] = true;
    return false;
  }
  void clear() { active_ = {}; }
  bool on(Id id) const { return active_[static_cast<std::size_t>(id)]; }
  bool any() const {
    for (bool a : active_)
      if (a) return true;
    return false;
  }

private:
  std::array<bool, Ids.size()> active_{};
};

} // namespace burnmark::plugin
