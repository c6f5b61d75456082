# The HIP (AMD) backend: ROCm's HIP runtime for the shared GPU layer, the HSA runtime for the `hsa`
# engine, RCCL for the `nccl` engine when it is installed. Everything through find_package.
#
# The kernels (gpu/kernels.cu, the same source nvcc compiles) are compiled with hipcc:
# CMake 3.25's HIP language looks for hip-lang only under <rocm>/lib/cmake, and Debian installs it
# under /usr/lib/<multiarch>/cmake, so enable_language(HIP) fails there.
#
# libhsakmt (the thunk), where found, gives the sdma engine its KFD queues (gpu/kfd.cpp).
#
# Sets DMABENCH_HAVE_HIP, DMABENCH_HAVE_HSA, DMABENCH_HAVE_RCCL (and DMABENCH_HAVE_NCCL with RCCL),
# DMABENCH_HAVE_KFD, and defines dmabench_add_hip_backend(target).

find_program(DMABENCH_HIPCC hipcc HINTS /opt/rocm/bin)
find_package(hip CONFIG QUIET HINTS /opt/rocm)
if(NOT DMABENCH_HIPCC OR NOT hip_FOUND)
  if(DMABENCH_HIP STREQUAL "ON")
    message(FATAL_ERROR "DMABENCH_HIP=ON but hipcc (${DMABENCH_HIPCC}) or ROCm's HIP CMake package (hip_FOUND=${hip_FOUND}) "
                        "was not found (Debian/Ubuntu: apt install hipcc libamdhip64-dev)")
  endif()
  message(STATUS "dmabench: HIP not found (hipcc ${DMABENCH_HIPCC}, hip package ${hip_FOUND}): no hip backend")
  return()
endif()
set(DMABENCH_HAVE_HIP ON)

find_package(hsa-runtime64 CONFIG QUIET HINTS /opt/rocm)
set(DMABENCH_HAVE_HSA ${hsa-runtime64_FOUND})
find_package(rccl CONFIG QUIET HINTS /opt/rocm)
set(DMABENCH_HAVE_RCCL ${rccl_FOUND})
if(DMABENCH_HAVE_RCCL)
  set(DMABENCH_HAVE_NCCL ON)   # the nccl engine, on RCCL
  get_target_property(hip_inc hip::host INTERFACE_INCLUDE_DIRECTORIES)
  get_target_property(rccl_inc roc::rccl INTERFACE_INCLUDE_DIRECTORIES)
  set(rccl_incs)
  foreach(dir ${hip_inc} ${rccl_inc})   # generator expressions (build-tree paths) are not for try_compile
    if(dir AND NOT dir MATCHES "^\\$<")
      list(APPEND rccl_incs ${dir})
    endif()
  endforeach()
  dmabench_nccl_api_checks("rccl/rccl.h" "${rccl_incs}" "-D__HIP_PLATFORM_AMD__=1")   # cmake/nccl_api.cmake
endif()
find_package(rocblas CONFIG QUIET HINTS /opt/rocm)   # the GEMM of overlap cases
set(DMABENCH_HAVE_ROCBLAS ${rocblas_FOUND})

# ---- libhsakmt (the thunk): the sdma engine on KFD queues (gpu/kfd.cpp) ----------------------------------
# Its CMake package (Debian's libhsakmt-dev, ROCm's hsakmt: target hsakmt::hsakmt), else the header and the
# library by name. Layouts: Debian 12 (5.2.3) has a flat /usr/include/hsakmt.h, trixie (6.2.4) and ROCm's
# own packages <prefix>/include/hsakmt/hsakmt.h. ROCm >= 6.3 builds libhsakmt static; its package's
# BUILD_SHARED_LIBS option (6.x declares option(BUILD_SHARED_LIBS ON)) picks between linking libdrm shared
# and a static-libdrm flavour, whose private render fd KFD refuses next to the HSA runtime's (ACQUIRE_VM):
# a normal variable, set only around find_package, keeps the shared one and keeps the option out of the cache.
set(DMABENCH_HAVE_KFD OFF)
if(NOT DEFINED BUILD_SHARED_LIBS)
  set(BUILD_SHARED_LIBS ON)
  find_package(hsakmt CONFIG QUIET HINTS /opt/rocm)
  unset(BUILD_SHARED_LIBS)
else()
  find_package(hsakmt CONFIG QUIET HINTS /opt/rocm)
endif()
set(hsakmt_hints /opt/rocm/include)
if(TARGET hsakmt::hsakmt)
  get_target_property(hsakmt_inc hsakmt::hsakmt INTERFACE_INCLUDE_DIRECTORIES)
  if(hsakmt_inc)
    list(PREPEND hsakmt_hints ${hsakmt_inc})
  endif()
  set(DMABENCH_HSAKMT_LINK hsakmt::hsakmt)
else()
  find_library(DMABENCH_HSAKMT_LIBRARY hsakmt HINTS /opt/rocm/lib)
  set(DMABENCH_HSAKMT_LINK ${DMABENCH_HSAKMT_LIBRARY})
  if(DMABENCH_HSAKMT_LIBRARY MATCHES "\\.a$")   # a static thunk brings its dependencies by name
    foreach(dep drm_amdgpu drm numa)
      find_library(DMABENCH_HSAKMT_DEP_${dep} ${dep})
      if(DMABENCH_HSAKMT_DEP_${dep})
        list(APPEND DMABENCH_HSAKMT_LINK ${DMABENCH_HSAKMT_DEP_${dep}})
      endif()
    endforeach()
  endif()
endif()
find_path(DMABENCH_HSAKMT_INCLUDE hsakmt/hsakmt.h HINTS ${hsakmt_hints})
set(DMABENCH_KFD_FLAT_HEADER OFF)
if(DMABENCH_HSAKMT_INCLUDE)
  set(DMABENCH_KFD_INCLUDE_DIR ${DMABENCH_HSAKMT_INCLUDE})
  set(kfd_header hsakmt/hsakmt.h)
else()
  find_path(DMABENCH_HSAKMT_FLAT_INCLUDE hsakmt.h HINTS ${hsakmt_hints})
  set(DMABENCH_KFD_INCLUDE_DIR ${DMABENCH_HSAKMT_FLAT_INCLUDE})
  set(DMABENCH_KFD_FLAT_HEADER ON)
  set(kfd_header hsakmt.h)
endif()
if(DMABENCH_KFD_INCLUDE_DIR AND DMABENCH_HSAKMT_LINK)
  set(DMABENCH_HAVE_KFD ON)
  # queues on a named engine: libhsakmt of ROCm >= 6.3 (ROCR-Runtime 2f588a2; SDMA-FACTS.md §2.3)
  function(dmabench_kfd_check var code)
    set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
    if(NOT DMABENCH_KFD_INCLUDE_DIR STREQUAL "/usr/include")  # never the system directory: #include_next
      set(CMAKE_REQUIRED_INCLUDES ${DMABENCH_KFD_INCLUDE_DIR})
    endif()
    set(CMAKE_REQUIRED_QUIET ON)
    check_cxx_source_compiles("${code}" ${var})
    set(${var} ${${var}} PARENT_SCOPE)
  endfunction()
  include(CheckCXXSourceCompiles)
  dmabench_kfd_check(DMABENCH_KFD_HAS_BY_ENG_ID "#include <${kfd_header}>
int main() {
  HsaQueueResource r{};
  return static_cast<int>(hsaKmtCreateQueueExt(0, HSA_QUEUE_SDMA_BY_ENG_ID, 100, HSA_QUEUE_PRIORITY_NORMAL, 2, nullptr, 4096, nullptr, &r));
}")
endif()
message(STATUS "dmabench: libhsakmt ${DMABENCH_HAVE_KFD} (${kfd_header} in ${DMABENCH_KFD_INCLUDE_DIR}, library "
               "${DMABENCH_HSAKMT_LINK}): HSA_QUEUE_SDMA_BY_ENG_ID ${DMABENCH_KFD_HAS_BY_ENG_ID}")

# ---- what these headers have (every feature is gated on it; --features prints the result) ----------
include(CheckCXXSourceCompiles)
function(dmabench_hip_check var code)
  set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)   # compile only: nothing to link against here
  set(CMAKE_REQUIRED_DEFINITIONS -D__HIP_PLATFORM_AMD__=1)
  get_target_property(inc hip::host INTERFACE_INCLUDE_DIRECTORIES)
  if(inc)
    set(CMAKE_REQUIRED_INCLUDES ${inc})
  endif()
  set(CMAKE_REQUIRED_QUIET ON)
  check_cxx_source_compiles("${code}" ${var})
  set(${var} ${${var}} PARENT_SCOPE)
endfunction()
dmabench_hip_check(DMABENCH_HIP_HAS_NOCU
  "#include <hip/hip_runtime_api.h>\nint main() { return static_cast<int>(hipMemcpyDeviceToDeviceNoCU); }")
# ce-batch: the call with the attributes dmabench passes (source access order, the overlap flag)
dmabench_hip_check(DMABENCH_HIP_HAS_BATCH [=[
#include <hip/hip_runtime_api.h>
int main() {
  void* d = nullptr; void* s = nullptr; size_t n = 1, idx = 0, fail = 0;
  hipMemcpyAttributes a{};
  a.srcAccessOrder = hipMemcpySrcAccessOrderStream;
  a.flags = hipMemcpyFlagPreferOverlapWithCompute;
  return static_cast<int>(hipMemcpyBatchAsync(&d, &s, &n, 1, &a, &idx, 1, &fail, hipStream_t{}));
}]=])
dmabench_hip_check(DMABENCH_HIP_HAS_WALL_CLOCK_RATE
  "#include <hip/hip_runtime_api.h>\nint main() { return static_cast<int>(hipDeviceAttributeWallClockRate); }")
if(DMABENCH_HAVE_HSA)
  dmabench_hip_check(DMABENCH_HSA_HAS_COPY_ON_ENGINE
    "#include <hsa/hsa_ext_amd.h>\nint main() { return hsa_amd_memory_async_copy_on_engine != nullptr && hsa_amd_memory_get_preferred_copy_engine != nullptr; }")
  dmabench_hip_check(DMABENCH_HSA_HAS_BATCH_COPY
    "#include <hsa/hsa_ext_amd.h>\nint main() { return hsa_amd_memory_async_batch_copy != nullptr; }")
  dmabench_hip_check(DMABENCH_HSA_HAS_SDMA_INFO
    "#include <hsa/hsa_ext_amd.h>\nint main() { return static_cast<int>(HSA_AMD_AGENT_INFO_NUM_SDMA_ENG) + static_cast<int>(HSA_AMD_AGENT_INFO_NUM_SDMA_XGMI_ENG); }")
  get_target_property(hsa_inc hsa-runtime64::hsa-runtime64 INTERFACE_INCLUDE_DIRECTORIES)
  find_file(DMABENCH_HSA_EXT_AMD_H hsa_ext_amd.h PATHS ${hsa_inc} PATH_SUFFIXES hsa NO_DEFAULT_PATH)
  if(NOT DMABENCH_HSA_EXT_AMD_H)
    find_file(DMABENCH_HSA_EXT_AMD_H hsa/hsa_ext_amd.h)
  endif()
  file(STRINGS "${DMABENCH_HSA_EXT_AMD_H}" hsa_lines REGEX "#define HSA_AMD_INTERFACE_VERSION_M(AJ|IN)OR")
  string(REGEX REPLACE ".*MAJOR ([0-9]+).*" "\\1" hsa_major "${hsa_lines}")
  string(REGEX REPLACE ".*MINOR ([0-9]+).*" "\\1" hsa_minor "${hsa_lines}")
  set(DMABENCH_HSA_INTERFACE "${hsa_major}.${hsa_minor}")
endif()
message(STATUS "dmabench: HIP ${hip_VERSION}: hipMemcpyDeviceToDeviceNoCU ${DMABENCH_HIP_HAS_NOCU}, "
               "hipMemcpyBatchAsync ${DMABENCH_HIP_HAS_BATCH}, hipDeviceAttributeWallClockRate ${DMABENCH_HIP_HAS_WALL_CLOCK_RATE}; "
               "HSA ${DMABENCH_HAVE_HSA} (AMD interface ${DMABENCH_HSA_INTERFACE}): copy_on_engine ${DMABENCH_HSA_HAS_COPY_ON_ENGINE}, "
               "batch_copy ${DMABENCH_HSA_HAS_BATCH_COPY}, SDMA engine info ${DMABENCH_HSA_HAS_SDMA_INFO}; RCCL ${DMABENCH_HAVE_RCCL}; "
               "all-to-all ${DMABENCH_NCCL_ALLTOALL}; rocBLAS ${DMABENCH_HAVE_ROCBLAS}")

# Default targets: MI200 (gfx90a), MI300A/X early (gfx940), plus MI300X (gfx942) and MI350 (gfx950)
# where this hipcc knows them (ROCm 5.2's knows neither: its code objects then do not load on MI300X;
# say so). The probe includes hip_runtime.h: a kernel's host stub needs it with current hipcc.
if(NOT DMABENCH_HIP_ARCHITECTURES)
  set(DMABENCH_HIP_ARCHITECTURES gfx90a gfx940)
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/arch_probe.hip "#include <hip/hip_runtime.h>\n__global__ void k() {}\n")
  foreach(arch gfx942 gfx950)
    execute_process(COMMAND ${DMABENCH_HIPCC} -x hip --offload-arch=${arch} -c ${CMAKE_CURRENT_BINARY_DIR}/arch_probe.hip
                            -o ${CMAKE_CURRENT_BINARY_DIR}/arch_probe.o
                    RESULT_VARIABLE arch_rc OUTPUT_QUIET ERROR_QUIET)
    if(arch_rc EQUAL 0)
      list(APPEND DMABENCH_HIP_ARCHITECTURES ${arch})
    elseif(arch STREQUAL "gfx942")
      message(WARNING "dmabench: this hipcc cannot compile for gfx942 (MI300X): the HIP kernels will not load on MI300X; "
                      "build with a newer ROCm for MI300X runs (scripts/check-rocm.sh builds with ROCm 7.2)")
    endif()
  endforeach()
endif()

# The HIP backend of the GPU layer (gpu/, the target dmabench_gpu): the kernels, the HIP runtime, HSA,
# rocBLAS and RCCL where found. Vendor libraries and the definitions only gpu/ reads are PRIVATE; the
# DMABENCH_HAVE_* switches code outside gpu/ tests with #if are PUBLIC (see CMakeLists.txt).
function(dmabench_add_hip_backend target)
  # kernels.cu as HIP, for every target in DMABENCH_HIP_ARCHITECTURES, into one object file
  set(src ${PROJECT_SOURCE_DIR}/gpu/kernels.cu)
  set(obj ${CMAKE_CURRENT_BINARY_DIR}/dmabench_kernels_hip.o)
  set(flags -x hip -std=c++17 -O3 -fPIC -DDMABENCH_GPU_HIP=1 -I${PROJECT_SOURCE_DIR} -Wall -Wextra)
  foreach(arch ${DMABENCH_HIP_ARCHITECTURES})
    list(APPEND flags --offload-arch=${arch})
  endforeach()
  if(DMABENCH_WERROR)
    list(APPEND flags -Werror)
  endif()
  add_custom_command(OUTPUT ${obj}
    COMMAND ${DMABENCH_HIPCC} ${flags} -MD -MF ${obj}.d -c ${src} -o ${obj}
    DEPENDS ${src} DEPFILE ${obj}.d
    COMMENT "hipcc: gpu/kernels.cu for ${DMABENCH_HIP_ARCHITECTURES}"
    VERBATIM)
  target_sources(${target} PRIVATE ${obj})

  target_compile_definitions(${target} PUBLIC DMABENCH_HAVE_HIP=1)
  # the runtime choice (gpu/vendor.hpp), the header checks and the version stamps: gpu/ only
  target_compile_definitions(${target} PRIVATE DMABENCH_GPU_HIP=1
    DMABENCH_HIP_VERSION_STRING="${hip_VERSION_MAJOR}.${hip_VERSION_MINOR}")
  foreach(check DMABENCH_HIP_HAS_NOCU DMABENCH_HIP_HAS_BATCH DMABENCH_HIP_HAS_WALL_CLOCK_RATE
                DMABENCH_HSA_HAS_COPY_ON_ENGINE DMABENCH_HSA_HAS_BATCH_COPY DMABENCH_HSA_HAS_SDMA_INFO)
    if(${check})
      target_compile_definitions(${target} PRIVATE ${check}=1)
    endif()
  endforeach()
  target_link_libraries(${target} PRIVATE hip::host)
  if(DMABENCH_HAVE_HSA)
    target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/gpu/hsa.cpp)
    target_compile_definitions(${target} PUBLIC DMABENCH_HAVE_HSA=1)
    target_compile_definitions(${target} PRIVATE DMABENCH_HSA_INTERFACE_STRING="${DMABENCH_HSA_INTERFACE}")
    target_link_libraries(${target} PRIVATE hsa-runtime64::hsa-runtime64)
  endif()
  if(DMABENCH_HAVE_ROCBLAS)
    target_compile_definitions(${target} PRIVATE DMABENCH_HAVE_ROCBLAS=1)
    target_link_libraries(${target} PRIVATE roc::rocblas)
  endif()
  if(DMABENCH_HAVE_KFD)   # the sdma engine on KFD queues; which header and what it has: gpu/ only
    target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/gpu/kfd.cpp)
    target_compile_definitions(${target} PUBLIC DMABENCH_HAVE_KFD=1)
    foreach(check DMABENCH_KFD_HAS_BY_ENG_ID DMABENCH_KFD_FLAT_HEADER)
      if(${check})
        target_compile_definitions(${target} PRIVATE ${check}=1)
      endif()
    endforeach()
    if(NOT DMABENCH_KFD_INCLUDE_DIR STREQUAL "/usr/include")
      target_include_directories(${target} PRIVATE ${DMABENCH_KFD_INCLUDE_DIR})
    endif()
    target_link_libraries(${target} PRIVATE ${DMABENCH_HSAKMT_LINK})
  endif()
  if(DMABENCH_HAVE_RCCL)
    target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/gpu/nccl_comm.cpp)
    target_compile_definitions(${target} PUBLIC DMABENCH_HAVE_NCCL=1 DMABENCH_HAVE_RCCL=1)
    target_link_libraries(${target} PRIVATE roc::rccl)
    dmabench_nccl_api_definitions(${target})
  endif()
endfunction()
