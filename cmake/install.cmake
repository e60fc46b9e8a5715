# `cmake --install build --prefix P` installs libfusor.a, the headers under P/include/fusor
# (included as "runtime/session.h", like in this tree), the CLI, and a package config so that
# another project can `find_package(fusor)` and link `fusor::fusor` (examples/consumer).
include(CMakePackageConfigHelpers)
install(TARGETS fusor EXPORT fusorTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
install(TARGETS fusor_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT dev)
foreach(dir ir frontend runtime backends)
  install(DIRECTORY ${CMAKE_SOURCE_DIR}/${dir} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/fusor COMPONENT dev
          FILES_MATCHING PATTERN "*.h")
endforeach()
install(EXPORT fusorTargets NAMESPACE fusor:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/fusor COMPONENT dev)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/fusorConfig.cmake.in ${CMAKE_BINARY_DIR}/fusorConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/fusor)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/fusorConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/fusorConfig.cmake ${CMAKE_BINARY_DIR}/fusorConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/fusor COMPONENT dev)
