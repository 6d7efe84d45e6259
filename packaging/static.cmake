# The self-contained release (cmake --build --preset static --target package):
# netbench-<version>-linux-<arch>-static.tar.gz with bin/netload, bin/netserve (static, stripped), the ready
# plans in configs/, the netserve systemd unit and INSTALL, in one top folder. No harness: it runs on the
# user's own machine (the Debian package).
install(FILES netserve.service DESTINATION .)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs/ DESTINATION configs FILES_MATCHING PATTERN "*.toml")
configure_file(INSTALL.static.in ${CMAKE_CURRENT_BINARY_DIR}/INSTALL @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/INSTALL DESTINATION .)

set(CPACK_GENERATOR TGZ)
set(CPACK_PACKAGE_NAME netbench)
set(CPACK_PACKAGE_FILE_NAME netbench-${PROJECT_VERSION}-linux-${CMAKE_SYSTEM_PROCESSOR}-static)
set(CPACK_INCLUDE_TOPLEVEL_DIRECTORY ON)
include(CPack)
