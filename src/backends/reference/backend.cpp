// The reference backend as the oracle sees it.
#include <memory>

#include "burnmark/backends/builtin.h"
#include "tape.h"

namespace burnmark {

std::unique_ptr<Backend> make_reference_backend() {
  return std::make_unique<FrameworkBackend<ref::ReferenceFramework>>("ref");
}

} // namespace burnmark
