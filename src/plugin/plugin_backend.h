// The Backend that drives one loaded plugin: it checks the program against the plugin's op
// list, hands the program across the ABI, and validates and converts what comes back.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "abi_program.h"
#include "burnmark/driver/driver.h"
#include "burnmark/plugin/plugin.h"

namespace burnmark {

class PluginBackend final : public Backend {
public:
  // `library` keeps the shared object loaded for as long as this backend (and the table and
  // context inside it) lives. `context` is what table->create returned (or null).
  // `platform` is the plugin's burnmark_plugin_platform, or null when it exports none.
  // `layout` is how leaves are presented when every op of a program accepts strided inputs:
  // PluginLeafLayout::Declared (each leaf's own layout) or a test's override.
  // `patches` are the patch ids the plugin's set_patches accepted.
  PluginBackend(std::shared_ptr<void> library, const BurnmarkPluginV1* table, void* context,
                BurnmarkPluginPlatformFn platform, PluginLeafLayout layout,
                std::vector<std::string> patches = {});
  ~PluginBackend() override;
  PluginBackend(const PluginBackend&) = delete;
  PluginBackend& operator=(const PluginBackend&) = delete;

  const std::string& name() const override { return name_; }
  Outcome run(const Program& program, const RunOptions& options) override;
  // The plugin's own description line: which library, version and kernels (Eigen's packets).
  std::string note() const override {
    return table_->description != nullptr ? table_->description : "";
  }
  std::string platform() const override { return platform_; }
  std::optional<std::vector<Op>> supported_ops() const override;
  std::vector<std::string> active_patches() const override { return patches_; }

private:
  enum class Entry { Run, Jvp, Hvp };
  // One call of run / run_jvp / run_hvp, its result validated into `out` (root, grads, and the
  // tangent or the H·v products). Returns false when `out` is final (not Ok).
  bool call(Entry entry, const Program& program, const RunOptions& options, Outcome& out);

  std::shared_ptr<void> library_;
  const BurnmarkPluginV1* table_;
  void* context_;
  std::string name_;
  std::string platform_;
  std::vector<std::optional<BurnmarkOpSupport>> supported_; // by stable op id
  PluginLeafLayout layout_;
  std::vector<std::string> patches_;
  PluginLeafLayout current_layout_ = PluginLeafLayout::Contiguous; // of the run in progress
  AbiProgram abi_;
};

} // namespace burnmark
