# The JAX backend's emitter (src/backends/python/jax_source.cpp): every op covered, a hand-made
# program's exact source, and the whole corpus run through runner_jax.py in the jax venv
# (.deps/jax-*, tools/install-deps.sh; skipped without it) and judged against the reference.
# JAX is judged against the reference alone, whichever LibTorch the build has: the default
# target's build (2.15) runs it, the 1.13 baseline's does not run it a second time in CI.
if(TARGET burnmark_python_source AND TARGET burnmark_ref AND TARGET burnmark_programs_per_op
   AND NOT Torch_VERSION VERSION_LESS 2)
  burnmark_test(test_jax test_jax.cpp)
  find_package(nlohmann_json 3.11 REQUIRED)
  target_link_libraries(test_jax PRIVATE burnmark_python_source burnmark_programs_per_op
                        burnmark_registry burnmark_ref burnmark_triage burnmark_oracle burnmark_ir
                        nlohmann_json::nlohmann_json
                        fmt::fmt)
  # The venv's version from install-deps.sh itself, so the two cannot drift apart.
  file(STRINGS ${PROJECT_SOURCE_DIR}/tools/install-deps.sh jax_version_line REGEX "^jax_version=")
  string(REGEX REPLACE "^jax_version=" "" jax_version "${jax_version_line}")
  target_compile_definitions(test_jax PRIVATE BURNMARK_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
                             BURNMARK_JAX_VERSION="${jax_version}")
endif()
