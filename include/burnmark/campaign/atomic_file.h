// Writing a file so that a reader (or a Ctrl-C) never sees it half written: the bytes go to a
// temporary file in the same directory, are flushed, and the temporary is renamed over the
// target, which POSIX makes atomic within one file system.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace burnmark {

// "" on success, else a one-line reason naming the path. `durable` also fsyncs the data before
// the rename, so that even a machine crash cannot leave an empty file under the final name; it
// costs milliseconds per file, which matters for the campaign's many saved inputs but not for
// the ledger.
std::string write_file_atomically(const std::filesystem::path& path, std::string_view bytes,
                                  bool durable = true);

// Reads the whole file into `out`; false when it cannot be read.
bool read_whole_file(const std::filesystem::path& path, std::string& out);

} // namespace burnmark
