# What the NCCL API found (NVIDIA's nccl.h or RCCL's rccl.h) spells differently, checked against the
# real header at configure time rather than guessed from the vendor:
#   DMABENCH_NCCL_ALLTOALL  the all-to-all call: ncclAlltoAll (NCCL >= 2.28), ncclAllToAll (RCCL), or
#                           empty when the header has neither (the nccl engine then skips alltoall)
# dmabench_nccl_api_checks(HEADER INCLUDE_DIRS DEFINITIONS) sets it in the caller's scope and
# dmabench_nccl_api_definitions(TARGET) passes it to the GPU layer (gpu/nccl_comm.cpp).
include(CheckCXXSourceCompiles)
function(dmabench_nccl_api_checks header includes definitions)
  set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)   # compile only
  set(CMAKE_REQUIRED_INCLUDES ${includes})
  set(CMAKE_REQUIRED_DEFINITIONS ${definitions})
  set(CMAKE_REQUIRED_QUIET ON)
  set(found "")
  foreach(name ncclAlltoAll ncclAllToAll)
    check_cxx_source_compiles("#include <${header}>
int main() { ncclComm_t c{}; return static_cast<int>(${name}(nullptr, nullptr, 1, ncclInt8, c, nullptr)); }"
                              DMABENCH_NCCL_HAS_${name})
    if(DMABENCH_NCCL_HAS_${name})
      set(found ${name})
      break()
    endif()
  endforeach()
  set(DMABENCH_NCCL_ALLTOALL "${found}" PARENT_SCOPE)
endfunction()

function(dmabench_nccl_api_definitions target)   # PRIVATE: gpu/ reads them
  if(DMABENCH_NCCL_ALLTOALL)
    target_compile_definitions(${target} PRIVATE DMABENCH_NCCL_ALLTOALL=${DMABENCH_NCCL_ALLTOALL})
  endif()
endfunction()
