# Campaigns end to end: the ledger's file format, and `burnmark campaign` / `burnmark repro` run
# as processes against the real fuzz_autograd with a planted-bug plugin (BACKENDS=ref,<plugin>).
add_library(burnmark_fixture_planted MODULE campaign_fixtures/planted_neg.c)
target_include_directories(burnmark_fixture_planted PRIVATE ${PROJECT_SOURCE_DIR}/include)
set_target_properties(burnmark_fixture_planted PROPERTIES
  PREFIX "" OUTPUT_NAME burnmark_planted LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/campaign_fixtures
  C_STANDARD 11 C_EXTENSIONS OFF)

burnmark_test(test_campaign test_campaign.cpp)
target_link_libraries(test_campaign PRIVATE burnmark_campaign burnmark_ref burnmark_plugin_loader fmt::fmt)
add_dependencies(test_campaign burnmark fuzz_autograd burnmark_fixture_planted)
target_compile_definitions(test_campaign PRIVATE
  BURNMARK_CAMPAIGN_CLI="$<TARGET_FILE:burnmark>"
  BURNMARK_FUZZ_AUTOGRAD="$<TARGET_FILE:fuzz_autograd>"
  BURNMARK_PLANTED_PLUGIN="$<TARGET_FILE:burnmark_fixture_planted>"
  BURNMARK_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")

# One campaign per directory, counts recomputed from the saved inputs at resume, and a backend's
# crashes as one finding of that backend (the misbehaving fixture of plugin.cmake, segfaulting on
# every program).
burnmark_test(test_campaign_reliability test_campaign_reliability.cpp)
target_link_libraries(test_campaign_reliability PRIVATE burnmark_campaign fmt::fmt)
add_dependencies(test_campaign_reliability burnmark fuzz_autograd burnmark_fixture_planted
                 burnmark_fixture_misbehaving)
target_compile_definitions(test_campaign_reliability PRIVATE
  BURNMARK_CAMPAIGN_CLI="$<TARGET_FILE:burnmark>"
  BURNMARK_FUZZ_AUTOGRAD="$<TARGET_FILE:fuzz_autograd>"
  BURNMARK_PLANTED_PLUGIN="$<TARGET_FILE:burnmark_fixture_planted>"
  BURNMARK_MISBEHAVING_PLUGIN="$<TARGET_FILE:burnmark_fixture_misbehaving>"
  BURNMARK_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")

# `burnmark report` and the campaign's timeseries.tsv: a real short campaign's page opened in headless
# Chromium (Debian's chromium, tools/install-deps.sh; skipped without it unless CI is set).
burnmark_test(test_report test_report.cpp)
target_link_libraries(test_report PRIVATE burnmark_report burnmark_campaign fmt::fmt)
add_dependencies(test_report burnmark fuzz_autograd burnmark_fixture_planted)
target_compile_definitions(test_report PRIVATE
  BURNMARK_CAMPAIGN_CLI="$<TARGET_FILE:burnmark>"
  BURNMARK_FUZZ_AUTOGRAD="$<TARGET_FILE:fuzz_autograd>"
  BURNMARK_PLANTED_PLUGIN="$<TARGET_FILE:burnmark_fixture_planted>"
  BURNMARK_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")

# `burnmark campaign --merge`: the merge rules on hand-made ledgers, then two short planted
# campaigns merged by the command (corpora by fuzz_autograd's -merge=1).
burnmark_test(test_campaign_merge test_campaign_merge.cpp)
target_link_libraries(test_campaign_merge PRIVATE burnmark_campaign fmt::fmt)
add_dependencies(test_campaign_merge burnmark fuzz_autograd burnmark_fixture_planted)
target_compile_definitions(test_campaign_merge PRIVATE
  BURNMARK_CAMPAIGN_CLI="$<TARGET_FILE:burnmark>"
  BURNMARK_FUZZ_AUTOGRAD="$<TARGET_FILE:fuzz_autograd>"
  BURNMARK_PLANTED_PLUGIN="$<TARGET_FILE:burnmark_fixture_planted>"
  BURNMARK_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")

# Fix-and-continue patches in campaigns and triage (docs/patches.md): the campaign's gate, the
# ledger's patches column across a resume, triage's patched/suppressed lines. The real Eigen
# plugin beside the planted one.
burnmark_test(test_patches_campaign test_patches_campaign.cpp)
target_link_libraries(test_patches_campaign PRIVATE burnmark_patch_gate burnmark_campaign fmt::fmt)
add_dependencies(test_patches_campaign burnmark fuzz_autograd burnmark_fixture_planted)
target_compile_definitions(test_patches_campaign PRIVATE
  BURNMARK_CLI_PATH="$<TARGET_FILE:burnmark>"
  BURNMARK_FUZZ_AUTOGRAD="$<TARGET_FILE:fuzz_autograd>"
  BURNMARK_PLANTED_PLUGIN="$<TARGET_FILE:burnmark_fixture_planted>"
  BURNMARK_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
if(TARGET burnmark_plugin_eigen)
  add_dependencies(test_patches_campaign burnmark_plugin_eigen)
  target_compile_definitions(test_patches_campaign PRIVATE BURNMARK_TEST_HAVE_EIGEN=1)
endif()
