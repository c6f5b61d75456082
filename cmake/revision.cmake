# The git revision stamp (core/revision.hpp), made at build time (issue 41).
#
# Included from CMakeLists.txt: defines the library dmabench_revision, whose one source is the generated
# <build>/generated/revision.cpp, and the always-run target dmabench_revision_stamp that rewrites it.
# Run as a script (cmake -P, by that target on every build): writes OUT with the revision, and only when
# its text changed, so an unchanged tree rebuilds nothing and a new commit (or a tree turning dirty or
# clean) recompiles that one file and relinks.
#
# The revision: DMABENCH_GIT_REVISION when given (-DDMABENCH_GIT_REVISION=<rev>, for a copy of the tree
# without .git; "unknown" or empty counts as not given); else `git describe --always --dirty --abbrev=12`
# of the source tree (-dirty: a tracked file changed, as git describe counts it; untracked files do not);
# else "unknown" (no .git, no git, or git refusing the tree).

if(CMAKE_SCRIPT_MODE_FILE)
  set(rev "${DMABENCH_GIT_REVISION}")
  if(rev STREQUAL "" OR rev STREQUAL "unknown")
    set(rev "unknown")
    if(GIT_EXECUTABLE AND EXISTS "${SOURCE_DIR}/.git")
      execute_process(COMMAND "${GIT_EXECUTABLE}" describe --always --dirty --abbrev=12
                      WORKING_DIRECTORY "${SOURCE_DIR}" RESULT_VARIABLE status
                      OUTPUT_VARIABLE described OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      if(status EQUAL 0 AND NOT described STREQUAL "")
        set(rev "${described}")
      endif()
    endif()
  endif()
  set(shown "${rev}")
  # a C++ string literal: escape what could end or break it
  string(REPLACE "\\" "\\\\" rev "${rev}")
  string(REPLACE "\"" "\\\"" rev "${rev}")
  string(REGEX REPLACE "[\r\n]" " " rev "${rev}")
  string(CONCAT text "// Generated at build time by cmake/revision.cmake: do not edit.\n#include \"core/revision.hpp\"\n\n"
         "namespace dmabench {\nconst char* git_revision() { return \"${rev}\"; }\n}  // namespace dmabench\n")
  set(old "")
  if(EXISTS "${OUT}")
    file(READ "${OUT}" old)
  endif()
  if(NOT old STREQUAL text)
    file(WRITE "${OUT}" "${text}")
    message(STATUS "dmabench revision: ${shown}")
  endif()
  return()
endif()

find_package(Git QUIET)
set(DMABENCH_REVISION_CPP "${CMAKE_CURRENT_BINARY_DIR}/generated/revision.cpp")
set(dmabench_stamp_command "${CMAKE_COMMAND}" "-DDMABENCH_GIT_REVISION=${DMABENCH_GIT_REVISION}" "-DGIT_EXECUTABLE=${GIT_EXECUTABLE}"
                  "-DSOURCE_DIR=${CMAKE_CURRENT_SOURCE_DIR}" "-DOUT=${DMABENCH_REVISION_CPP}" -P "${CMAKE_CURRENT_LIST_FILE}")
add_custom_target(dmabench_revision_stamp COMMAND ${dmabench_stamp_command} BYPRODUCTS "${DMABENCH_REVISION_CPP}"
                  COMMENT "dmabench: git revision stamp" VERBATIM)
execute_process(COMMAND ${dmabench_stamp_command})   # configure writes it once, so that it exists before the first build
add_library(dmabench_revision STATIC "${DMABENCH_REVISION_CPP}")
add_dependencies(dmabench_revision dmabench_revision_stamp)
target_include_directories(dmabench_revision PUBLIC "${CMAKE_CURRENT_SOURCE_DIR}")
