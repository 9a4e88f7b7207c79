# The ClusterFuzzLite / OSS-Fuzz layout end to end (tests/cfl_build_test.sh): .clusterfuzzlite/
# build.sh under the engine's contract with a libfuzzer+address build of the three fuzz targets
# in a build tree of its own (kept under this folder, so a rerun is incremental; ccache when the
# caller has it), then each target run briefly from $OUT. Only against the PyPI wheel (the `test`
# preset), which is what build.sh builds with: once per CI run.
if(BURNMARK_TORCH_WHEEL)
  add_test(NAME ClusterFuzzLite.BuildShUnderTheEngineContractAndItsTargetsRun
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cfl_build_test.sh ${PROJECT_SOURCE_DIR}
                   ${BURNMARK_TORCH_WHEEL} ${CMAKE_CURRENT_BINARY_DIR}/cfl_test
                   ${CMAKE_CURRENT_BINARY_DIR}/cfl_work)
  set_tests_properties(ClusterFuzzLite.BuildShUnderTheEngineContractAndItsTargetsRun PROPERTIES
                       LABELS "cfl;fuzz" TIMEOUT 1500
                       # minutes of build: started first, so it overlaps the rest
                       COST 100000)
endif()
