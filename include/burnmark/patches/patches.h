// The patch table (corpus/patches.txt): fix-and-continue workarounds for known bugs, one line
// per patch, and the BURNMARK_PATCHES selection of the active ones (docs/patches.md).
//
// A line is `ID BACKEND OPS DESCRIPTION`, fields separated by blanks:
//   ID           the bug's bugs.md id, which also names its minimal program corpus/bugs/ID.txt
//                ([a-z0-9-]+)
//   BACKEND      `plugin:NAME`, NAME the plugin's table name (the backend that implements it)
//   OPS          the op (or comma list of ops, ops.def names) whose code carries the workaround
//   DESCRIPTION  the rest of the line: what the workaround does, in one line
// Blank lines and lines starting with '#' are ignored. A bad line is one error naming the file,
// the line number and what is wrong; nothing of a bad table is used.
#pragma once

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "burnmark/ir/op.h"
#include "burnmark/plugin/loader.h"

namespace burnmark {

struct Patch {
  std::string id;
  std::string backend; // as written: "plugin:eigen"
  std::string plugin;  // the plugin's name ("eigen")
  std::vector<Op> ops;
  std::string description;
  int line = 0; // in the table, for messages
};

struct PatchTableResult {
  std::variant<std::vector<Patch>, std::string> value; // the patches in file order, or one line
  bool ok() const { return std::holds_alternative<std::vector<Patch>>(value); }
  const std::vector<Patch>& patches() const { return std::get<std::vector<Patch>>(value); }
  const std::string& error() const { return std::get<std::string>(value); }
};

// `source` names the table in errors ("corpus/patches.txt:4: ...").
PatchTableResult parse_patch_table(std::string_view text, std::string_view source);
// Reads and parses the file; a missing or unreadable file is an error.
PatchTableResult load_patch_table(const std::string& path);

// The patches BURNMARK_PATCHES selects from `table`: "none" (no patch), "all" (every patch), or a
// comma list of ids, each of which must be in the table (else one error line listing them).
PatchTableResult select_patches(const std::vector<Patch>& table, std::string_view knob);

// The plugin names a BACKENDS list loads, as a patch's BACKENDS column names them: `eigen`,
// `child:eigen`, `child[VAR=v]:eigen` and a path `.../burnmark_eigen.so` are all "eigen".
std::vector<std::string> plugin_names_in(std::string_view backends);

// By Op index (kOpCount entries), the ops some patch of `table` rewrites in a plugin that
// `backends` loads (plugin_names_in), active or not: the fuzz targets count the programs that
// contain one (docs/patches.md, "What patches buy"), the same with patches on or off.
std::vector<bool> patched_ops(const std::vector<Patch>& table, std::string_view backends);

// The selected patches as the plugin loader takes them (PluginLoadOptions::patches).
std::vector<PluginPatch> plugin_patches(const std::vector<Patch>& patches);

// BURNMARK_PATCHES resolved against the table at `table_path` (default_patches_path()): the
// patches to hand the plugins, or one line ("BURNMARK_PATCHES: ..."). With "none" the table is
// not read at all, so a binary without a table (an OSS-Fuzz $OUT) runs unpatched.
std::variant<std::vector<PluginPatch>, std::string>
active_plugin_patches(std::string_view knob, const std::string& table_path);

} // namespace burnmark
