# ctest `vendor_includes`: only the GPU layer (gpu/) includes vendor headers (CUDA, CUPTI, cuBLAS,
# NCCL, NVML; HIP, HSA, the thunk, RCCL, rocBLAS, rocm-smi, ...) or gpu/'s private vendor.hpp.
# The build enforces most of this (dmabench_gpu's vendor include directories and definitions are
# PRIVATE: CMakeLists.txt), but not for headers in the system directory, where Debian puts ROCm's
# (hsa/, rccl/, rocblas/, rocm_smi/): this scan of every source file outside gpu/ catches those too.
# A file allowed an exception is listed below and says why in a comment at its top that contains
# "vendor-header exception"; an entry whose file is gone or states no exception fails the check.
#
#   cmake -DSOURCE_DIR=<tree> -P check_vendor_includes.cmake   fails listing every offender
#   cmake -DSELFTEST_DIR=<scratch> -P check_vendor_includes.cmake   checks the check on a made-up tree
cmake_minimum_required(VERSION 3.24)

set(allowed
  power/nvml.cpp              # dlopens NVML; only types from nvml.h (decltype)
  power/rocm_smi.cpp          # dlopens rocm-smi; only types from rocm_smi.h (decltype)
  tools/local_copy_probe.cu   # standalone probes, built by hand with nvcc, outside the build
  tools/nccl_loop_probe.cu
  tools/power_baseline_probe.cu
  tools/host_probe.cu
  tools/beside_probe.cu
  tools/moe_probe.cu
  tools/crossover_probe.cu
  tools/vcpu_probe.cu
  tools/batch_submit_probe.cu
)
set(vendor_regex "^[ \t]*#[ \t]*include[ \t]*[<\"](cuda[A-Za-z0-9_]*(/|\\.h)|cupti|cublas|curand|cufft|cusparse|cusolver|nvrtc|nvtx|nvml|nccl|hip[a-z_]*(/|\\.h)|hsa[a-z_]*(/|\\.h)|hsakmt|rccl|rocblas|rocm_smi|amd_smi|roctracer|rocprofiler|gpu/vendor\\.hpp)")

if(DEFINED SELFTEST_DIR)
  # A tree with one offender, one file of gpu/ (allowed), one allowed file without its comment.
  file(REMOVE_RECURSE "${SELFTEST_DIR}")
  file(WRITE "${SELFTEST_DIR}/engines/bad.cpp" "#include <cstdio>\n  #  include <cuda_runtime.h>\n")
  file(WRITE "${SELFTEST_DIR}/engines/good.cpp" "#include \"gpu/gpu.hpp\"\n#include \"gpu/hsa.hpp\"\n")
  file(WRITE "${SELFTEST_DIR}/amd/sneaky.hpp" "#include <hsa/hsa_ext_amd.h>\n")
  file(WRITE "${SELFTEST_DIR}/gpu/fine.cpp" "#include <hip/hip_runtime.h>\n")
  file(WRITE "${SELFTEST_DIR}/power/nvml.cpp" "// no comment\n#include <nvml.h>\n")
  execute_process(COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${SELFTEST_DIR} -P ${CMAKE_CURRENT_LIST_FILE}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  set(problems "")
  if(rc EQUAL 0)
    string(APPEND problems "the check passed a tree with offenders\n")
  endif()
  foreach(want "engines/bad.cpp: #  include <cuda_runtime.h>" "amd/sneaky.hpp: #include <hsa/hsa_ext_amd.h>"
               "power/nvml.cpp: allowed, but its top comment states no vendor-header exception"
               "tools/nccl_loop_probe.cu: in the allow-list, but there is no such file")
    string(FIND "${out}" "${want}" at)
    if(at EQUAL -1)
      string(APPEND problems "missing from the report: ${want}\n")
    endif()
  endforeach()
  foreach(unwanted "gpu/fine.cpp" "engines/good.cpp")
    string(FIND "${out}" "${unwanted}" at)
    if(NOT at EQUAL -1)
      string(APPEND problems "reported, but allowed: ${unwanted}\n")
    endif()
  endforeach()
  if(problems)
    message(FATAL_ERROR "vendor_includes self-test failed:\n${problems}--- the check's output:\n${out}")
  endif()
  message(STATUS "vendor_includes self-test: offenders and stale or unexplained exceptions are reported")
  return()
endif()

if(NOT DEFINED SOURCE_DIR)
  message(FATAL_ERROR "usage: cmake -DSOURCE_DIR=<tree> -P check_vendor_includes.cmake")
endif()

# Every source file below SOURCE_DIR but gpu/, build trees, hidden directories and the ROCm chroot.
file(GLOB top RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/*")
set(files "")
foreach(entry ${top})
  if(entry STREQUAL "gpu" OR entry MATCHES "^(build|\\.)" OR entry STREQUAL "rocm-sid"
     OR NOT IS_DIRECTORY "${SOURCE_DIR}/${entry}")
    continue()
  endif()
  file(GLOB_RECURSE found RELATIVE "${SOURCE_DIR}"
       "${SOURCE_DIR}/${entry}/*.c" "${SOURCE_DIR}/${entry}/*.cc" "${SOURCE_DIR}/${entry}/*.cpp"
       "${SOURCE_DIR}/${entry}/*.cxx" "${SOURCE_DIR}/${entry}/*.h" "${SOURCE_DIR}/${entry}/*.hh"
       "${SOURCE_DIR}/${entry}/*.hpp" "${SOURCE_DIR}/${entry}/*.cu" "${SOURCE_DIR}/${entry}/*.cuh"
       "${SOURCE_DIR}/${entry}/*.hip" "${SOURCE_DIR}/${entry}/*.in")
  list(APPEND files ${found})
endforeach()

set(offenders "")
foreach(f ${files})
  file(STRINGS "${SOURCE_DIR}/${f}" hits REGEX "${vendor_regex}")
  if(NOT hits OR f IN_LIST allowed)
    continue()
  endif()
  foreach(h ${hits})
    string(STRIP "${h}" h)
    string(APPEND offenders "  ${f}: ${h}\n")
  endforeach()
endforeach()
foreach(f ${allowed})
  if(NOT EXISTS "${SOURCE_DIR}/${f}")
    string(APPEND offenders "  ${f}: in the allow-list, but there is no such file\n")
    continue()
  endif()
  file(STRINGS "${SOURCE_DIR}/${f}" head LIMIT_COUNT 30)
  string(FIND "${head}" "vendor-header exception" at)
  if(at EQUAL -1)
    string(APPEND offenders "  ${f}: allowed, but its top comment states no vendor-header exception\n")
  endif()
endforeach()
list(LENGTH files n)
if(offenders)
  message(FATAL_ERROR "vendor headers outside gpu/ (the GPU layer is the only code that includes them; move the "
                      "code behind a vendor-neutral gpu/ header, or state an exception here and in the file):\n${offenders}")
endif()
message(STATUS "vendor_includes: ${n} source files outside gpu/ include no vendor header (exceptions: ${allowed})")
