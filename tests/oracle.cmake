# The oracle's unit tests; the end-to-end check (a deliberately wrong backend caught through
# the real driver against the real reference) joins in once the reference library exists.
burnmark_test(test_oracle test_oracle.cpp)
target_link_libraries(test_oracle PRIVATE burnmark_oracle burnmark_ir)
if(TARGET burnmark_ref)
  target_link_libraries(test_oracle PRIVATE burnmark_ref)
  target_compile_definitions(test_oracle PRIVATE BURNMARK_HAVE_REFERENCE=1)
endif()
if(TARGET burnmark_libtorch)
  target_link_libraries(test_oracle PRIVATE burnmark_libtorch)
  target_compile_definitions(test_oracle PRIVATE BURNMARK_HAVE_LIBTORCH=1)
endif()
# Who is wrong when torch-compile and eager PyTorch disagree (issue 32): hand-built outcome sets,
# and the real backends (skipped when the torch venv is missing).
burnmark_test(test_compile_verdict test_compile_verdict.cpp)
target_link_libraries(test_compile_verdict PRIVATE burnmark_oracle burnmark_registry burnmark_ir)
