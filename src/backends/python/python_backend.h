// The Python backends (issue 32): a program run by a framework's Python API in a child process,
// a Python interpreter serving src/backends/python/burnmark_child.py. The registry asks here for
// every BACKENDS entry before trying plugins.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "burnmark/backends/registry.h"
#include "burnmark/driver/driver.h"

namespace burnmark {

// The BACKENDS names of the Python backends, in table order ("torch-eager-py", "torch-compile").
std::span<const std::string_view> python_backend_names();

// nullopt when `entry` is not a Python backend's name; else that backend, started (its
// interpreter has imported its framework), or one line saying why it cannot start and which
// command installs what it needs.
std::optional<std::variant<std::unique_ptr<Backend>, std::string>>
make_python_backend(std::string_view entry, const RegistryOptions& options);

// The request frame burnmark_child.py decodes (exposed for tests): the flags, the function's
// source, the float dtype, the leaves (shape and values) and, with tangents or hessian, the
// leaves' leaf_tangent() directions.
std::string encode_python_request(const Program& program, const std::string& source,
                                  const RunOptions& options);

} // namespace burnmark
