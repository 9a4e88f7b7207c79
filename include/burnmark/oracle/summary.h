// Human-readable rendering of outcomes for reports: the fuzz targets print it before the
// verdict on a finding, and `burnmark run` prints it for every backend.
#pragma once

#include <cstddef>
#include <string>

#include "burnmark/driver/outcome.h"

namespace burnmark {

// "[v0, v1, ..., vN-1]": at most max_values values; past that, the first and last few with a
// "... (K more) ..." marker in between, so a 48x48 gradient stays one readable line.
std::string format_values(const HostTensor& tensor, std::size_t max_values);

// Several lines: the backend and its status, then the root and each leaf gradient.
//   backend=ref status=ok
//     root [2,3] = [0.5, 1, 2, 3, 4, 5]
//     grad leaf=0 [2,3] = [1, 1, 1, 1, 1, 1]
std::string format_outcome(const Outcome& outcome, std::size_t max_values);

std::string status_name(Status status);

} // namespace burnmark
