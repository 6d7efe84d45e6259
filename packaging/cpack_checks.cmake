# Read by cpack before it packages (CPACK_PROJECT_CONFIG_FILE): a Debian package without its man pages
# is refused, with the reason man_pages.cmake recorded.
if(CPACK_GENERATOR STREQUAL "DEB" AND CPACK_NETBENCH_NO_MAN_PAGES)
  message(FATAL_ERROR "netbench: no Debian package without man pages: ${CPACK_NETBENCH_NO_MAN_PAGES}")
endif()
