# Tests of the triage layer: minimiser, signatures, suppression, grouping and sweep, driven by a
# planted-bug backend wrapped around the real reference through the real oracle.
burnmark_test(test_triage test_triage.cpp)
target_link_libraries(test_triage PRIVATE burnmark_triage burnmark_ref)
burnmark_test(test_root_cause test_root_cause.cpp)
target_link_libraries(test_root_cause PRIVATE burnmark_triage burnmark_ref)
burnmark_test(test_culprit test_culprit.cpp)
target_link_libraries(test_culprit PRIVATE burnmark_triage burnmark_ref)
burnmark_test(test_filter_memo test_filter_memo.cpp)
target_link_libraries(test_filter_memo PRIVATE burnmark_triage burnmark_ref)
target_compile_definitions(test_filter_memo PRIVATE BURNMARK_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
# Inductor's low-precision fusion judged by the float64 baseline: hand-made outcomes, the real
# reference, and the real torch-compile (the torch venv; required on the 2.15 build).
burnmark_test(test_lowp_fusion test_lowp_fusion.cpp)
target_link_libraries(test_lowp_fusion PRIVATE burnmark_triage burnmark_ref burnmark_registry)
