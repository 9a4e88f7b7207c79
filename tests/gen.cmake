# Generator and encoder: totality, caps, reachability, special values and round trips.
burnmark_test(test_gen test_gen.cpp)
target_link_libraries(test_gen PRIVATE burnmark_gen)
# For running the binary by hand, outside ctest (which sets BURNMARK_SOURCE_DIR).
target_compile_definitions(test_gen PRIVATE BURNMARK_FALLBACK_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
# Generated programs reach every LibTorch kernel branch docs/attribute-branches.md lists for the
# parametrised ops (operand values from the reference).
burnmark_test(test_attribute_branches test_attribute_branches.cpp)
target_link_libraries(test_attribute_branches PRIVATE burnmark_gen burnmark_triage burnmark_ref)
# The generator restricted to an op set (BURNMARK_OPS, a plugin's op list).
burnmark_test(test_gen_ops test_gen_ops.cpp)
target_link_libraries(test_gen_ops PRIVATE burnmark_gen)
# Structure-aware mutation and crossover (the fuzz targets' custom mutator): round trips through
# the bytes on random programs, and what each kind of mutation changes.
burnmark_test(test_mutate test_mutate.cpp)
target_link_libraries(test_mutate PRIVATE burnmark_gen_mutate)
# Leaf layouts: text round trips, validation, strided views, the generator reaching each.
burnmark_test(test_layout test_layout.cpp)
target_link_libraries(test_layout PRIVATE burnmark_gen)
# The layout op relayout: its attribute, text form, validation, the generator reaching each kind.
burnmark_test(test_relayout test_relayout.cpp)
target_link_libraries(test_relayout PRIVATE burnmark_gen)
