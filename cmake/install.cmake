# `cmake --install` and `cpack -G DEB` (issue 41), included from CMakeLists.txt.
#
#   <prefix>/bin/dmabench                         the program
#   <prefix>/share/dmabench/configs/              the shipped configs: presets (bench/presets.cpp looks in
#                                                 <exe>/../share/dmabench/configs), traces, expectations, SDMA map
#   <prefix>/share/doc/dmabench/                  README.md, LICENSE, docs/*.md, results/SCHEMA.md
#   <prefix>/<DMABENCH_PYTHON_SITE_DIR>/dmabench/ the Python package python/dmabench/, where the tree has it,
#   <prefix>/bin/dmabench-results                 and its command line (dmabench.cli's main())
#
# bin/ and share/dmabench/configs are fixed (not CMAKE_INSTALL_BINDIR / DATADIR): the installed program
# finds its presets from where it is.
include(GNUInstallDirs)

install(TARGETS dmabench RUNTIME DESTINATION bin COMPONENT dmabench)
install(DIRECTORY configs/ DESTINATION share/dmabench/configs COMPONENT dmabench)
install(FILES README.md LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT dmabench)
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs COMPONENT dmabench FILES_MATCHING PATTERN "*.md")
if(EXISTS "${PROJECT_SOURCE_DIR}/results/SCHEMA.md")
  install(FILES results/SCHEMA.md DESTINATION ${CMAKE_INSTALL_DOCDIR}/results COMPONENT dmabench)
endif()

# The Python package, when the tree has one (the glob re-runs configure when python/dmabench/ appears or goes).
set(DMABENCH_PYTHON_SITE_DIR "lib/python3/dist-packages" CACHE STRING
    "where `cmake --install` puts the Python package dmabench: relative to the prefix, or absolute")
file(GLOB DMABENCH_PYTHON_PACKAGE CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/python/dmabench/__init__.py")
if(DMABENCH_PYTHON_PACKAGE)
  install(DIRECTORY python/dmabench DESTINATION ${DMABENCH_PYTHON_SITE_DIR} COMPONENT dmabench
          PATTERN "__pycache__" EXCLUDE PATTERN "*.pyc" EXCLUDE)
  set(launcher "${CMAKE_CURRENT_BINARY_DIR}/generated/dmabench-results")
  file(CONFIGURE OUTPUT "${launcher}" @ONLY CONTENT [=[#!/usr/bin/env python3
"""dmabench-results: the command line of the Python package dmabench (dmabench.cli), as `cmake --install` put it."""
import importlib.util
import os
import sys

if importlib.util.find_spec("dmabench") is None:  # not on the path: the site directory it was installed into
    here = os.path.dirname(os.path.realpath(__file__))
    # an absolute site directory stays as it is; a relative one is under the prefix, one up from bin/
    sys.path.insert(0, os.path.normpath(os.path.join(here, "..", "@DMABENCH_PYTHON_SITE_DIR@")))

from dmabench.cli import main  # noqa: E402

sys.exit(main())
]=])
  install(PROGRAMS "${launcher}" DESTINATION bin COMPONENT dmabench)
endif()

# ---- the Debian package: cpack -G DEB (in the build directory) -> dmabench_<version>_<arch>.deb -----------
set(CPACK_PACKAGE_NAME dmabench)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GPU DMA benchmark: copies and collectives over copy engines, GPU cores, NCCL and host threads")
set(CPACK_PACKAGE_CONTACT "dmabench authors <dmabench@localhost>")
set(CPACK_RESOURCE_FILE_LICENSE "${PROJECT_SOURCE_DIR}/LICENSE")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
# the shared libraries it links (libbenchmark, libfmt, libstdc++, MPI, ...) where dpkg-shlibdeps is there to find them
# (OFF: a library no Debian package owns, e.g. a CUDA toolkit from a runfile, makes dpkg-shlibdeps fail)
option(DMABENCH_DEB_SHLIBDEPS "cpack -G DEB: Depends from dpkg-shlibdeps, where it is installed" ON)
find_program(DMABENCH_DPKG_SHLIBDEPS dpkg-shlibdeps)
mark_as_advanced(DMABENCH_DPKG_SHLIBDEPS)
if(DMABENCH_DEB_SHLIBDEPS AND DMABENCH_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
endif()
if(DMABENCH_PYTHON_PACKAGE)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3")
endif()
include(CPack)
