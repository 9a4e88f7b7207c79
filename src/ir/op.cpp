// Lookups from the op table by text name and by stable ABI id.
#include "burnmark/ir/op.h"

namespace burnmark {

std::optional<Op> op_from_name(std::string_view name) {
  for (const OpInfo& info : kOpTable)
    if (info.name == name) return info.op;
  return std::nullopt;
}

std::optional<Op> op_from_stable_id(std::uint32_t id) {
  for (const OpInfo& info : kOpTable)
    if (info.stable_id == id) return info.op;
  return std::nullopt;
}

} // namespace burnmark
