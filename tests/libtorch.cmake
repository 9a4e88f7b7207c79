# The LibTorch backend against hand-computed values, op family by op family and protocol by
# protocol, and against the reference backend (tests/libtorch_programs.h builds both tests'
# programs).
burnmark_test(test_libtorch test_libtorch_ops.cpp test_libtorch_protocols.cpp)
target_link_libraries(test_libtorch PRIVATE burnmark_libtorch burnmark_ir ${TORCH_LIBRARIES})
target_include_directories(test_libtorch PRIVATE ${PROJECT_SOURCE_DIR}/src/backends/libtorch)

# Needs the reference backend (src/backends/reference); configured only once it exists.
if(TARGET burnmark_ref)
  # Also libtorch-jit and libtorch-nnc on the same programs.
  add_library(burnmark_programs_per_op STATIC programs_per_op.cpp)
  target_link_libraries(burnmark_programs_per_op PUBLIC burnmark_ir)
  burnmark_test(test_ref_vs_libtorch test_ref_vs_libtorch.cpp)
  target_link_libraries(test_ref_vs_libtorch PRIVATE burnmark_programs_per_op burnmark_ref burnmark_libtorch
                                                     burnmark_oracle burnmark_gen burnmark_ir)
  target_include_directories(test_ref_vs_libtorch PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_compile_definitions(test_ref_vs_libtorch PRIVATE BURNMARK_FALLBACK_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  # libtorch-inplace's destinations are real strided, offset views, and agree with the reference.
  burnmark_test(test_libtorch_inplace_view test_libtorch_inplace_view.cpp)
  target_link_libraries(test_libtorch_inplace_view PRIVATE burnmark_ref burnmark_libtorch
                                                           burnmark_oracle burnmark_ir ${TORCH_LIBRARIES})
  target_include_directories(test_libtorch_inplace_view PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}
                                                                ${PROJECT_SOURCE_DIR}/src/backends/libtorch)
  # Reduced-precision accumulation: planted bf16/f16 accumulations flagged, LibTorch agreeing.
  burnmark_test(test_reduced_precision test_reduced_precision.cpp)
  target_link_libraries(test_reduced_precision PRIVATE burnmark_ref burnmark_libtorch burnmark_oracle
                                                       burnmark_ir)
  # Forward mode: the reference's J·u against finite differences of itself, and against
  # LibTorch's dual tensors.
  burnmark_test(test_forward_mode test_forward_mode.cpp)
  target_link_libraries(test_forward_mode PRIVATE burnmark_programs_per_op burnmark_ref burnmark_libtorch
                                                  burnmark_oracle burnmark_gen burnmark_ir)
  target_link_libraries(test_forward_mode PRIVATE burnmark_triage)
  target_include_directories(test_forward_mode PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}
                                                       ${PROJECT_SOURCE_DIR}/src/backends/reference)
  # Second order: the reference's H·v against finite differences of its gradients, and against
  # LibTorch's double backward.
  burnmark_test(test_second_order test_second_order.cpp)
  target_link_libraries(test_second_order PRIVATE burnmark_programs_per_op burnmark_ref
                                                  burnmark_libtorch burnmark_oracle burnmark_gen
                                                  burnmark_ir burnmark_triage)
  target_include_directories(test_second_order PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}
                                                       ${PROJECT_SOURCE_DIR}/src/backends/reference)
  # Second order at removable singularities: products with a zero factor, powers at 0.
  burnmark_test(test_second_order_zeros test_second_order_zeros.cpp)
  target_link_libraries(test_second_order_zeros PRIVATE burnmark_ref burnmark_libtorch
                                                        burnmark_oracle burnmark_ir)
  # index_add, index_copy, index_fill (issue 33): hand-worked values through the reference and
  # LibTorch (eager, in-place, TorchScript), their IR rules, and the generator reaching them.
  burnmark_test(test_index_update test_index_update.cpp)
  target_link_libraries(test_index_update PRIVATE burnmark_ref burnmark_libtorch burnmark_gen
                                                  burnmark_ir)
  target_include_directories(test_index_update PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  # index_put and masked_scatter (issue 33): the same, with index_put's accumulate.
  burnmark_test(test_index_put test_index_put.cpp)
  target_link_libraries(test_index_put PRIVATE burnmark_ref burnmark_libtorch burnmark_gen
                                               burnmark_ir)
  target_include_directories(test_index_put PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
endif()
# Leaf layouts built for real in LibTorch, and every LibTorch backend unchanged by them.
burnmark_test(test_libtorch_layout test_libtorch_layout.cpp)
target_link_libraries(test_libtorch_layout PRIVATE burnmark_libtorch burnmark_ir ${TORCH_LIBRARIES})
target_include_directories(test_libtorch_layout PRIVATE ${PROJECT_SOURCE_DIR}/src/backends/libtorch)
# relayout built for real in LibTorch mid-program, every LibTorch backend agreeing with the
# reference on it.
burnmark_test(test_libtorch_relayout test_libtorch_relayout.cpp)
target_link_libraries(test_libtorch_relayout PRIVATE burnmark_libtorch burnmark_ref burnmark_ir
                                                     ${TORCH_LIBRARIES})
target_include_directories(test_libtorch_relayout PRIVATE ${PROJECT_SOURCE_DIR}/src/backends/libtorch)

# pow's bf16 gradient bound: LibTorch's per-kernel roundings, a fused kernel's single one
# (the onednn plugin, when built) and the correctly rounded derivative all accepted.
if(TARGET burnmark_ref)
  burnmark_test(test_pow_bf16_grad test_pow_bf16_grad.cpp)
  target_link_libraries(test_pow_bf16_grad PRIVATE burnmark_registry burnmark_ref burnmark_oracle
                                                   burnmark_ir)
  if(TARGET burnmark_plugin_onednn)
    add_dependencies(test_pow_bf16_grad burnmark_plugin_onednn)
  endif()
endif()
