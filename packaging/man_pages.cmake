# Section 1 man pages made at build time by help2man from each program's --help and --version, gzip -9n
# for share/man/man1. Only the Debian package needs them: without help2man (or in a sanitizer or fuzzer
# build, whose instrumented programs are no release) the build goes on without them and cpack refuses
# with the reason (cpack_checks.cmake reads CPACK_NETBENCH_NO_MAN_PAGES).
find_program(HELP2MAN help2man)
if(NOT HELP2MAN)
  set(CPACK_NETBENCH_NO_MAN_PAGES
      "help2man was not found when cmake ran: install it (apt install help2man, or scripts/bootstrap) and run cmake again")
elseif(NETBENCH_SANITIZE OR NETBENCH_FUZZ)
  set(CPACK_NETBENCH_NO_MAN_PAGES "sanitizer and fuzzer builds are not packaged: use cmake --preset default")
else()
  set(CPACK_NETBENCH_NO_MAN_PAGES "")
endif()

# The NAME line of each page (help2man --name).
set(netbench_man_name_harness "run a netserve / netload test plan across hosts and report it")
set(netbench_man_name_netload "netperf-style UDP_STREAM / TCP_STREAM load generator")
set(netbench_man_name_netserve "many-port listener for netload: TCP control, TCP and UDP data")

function(netbench_man_pages)
  if(CPACK_NETBENCH_NO_MAN_PAGES)
    message(STATUS "No man pages, no Debian package: ${CPACK_NETBENCH_NO_MAN_PAGES}")
    return()
  endif()
  set(pages "")
  foreach(program IN LISTS ARGN)
    if(NOT TARGET ${program})
      continue()
    endif()
    set(page ${CMAKE_CURRENT_BINARY_DIR}/man/${program}.1)
    # SOURCE_DATE_EPOCH: the page's date is the changelog's, not the moment of the build.
    add_custom_command(OUTPUT ${page}.gz
      COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/man
      COMMAND ${CMAKE_COMMAND} -E env SOURCE_DATE_EPOCH=${NETBENCH_EPOCH}
              ${HELP2MAN} --no-info --section=1 --name=${netbench_man_name_${program}} --output=${page}
              $<TARGET_FILE:${program}>
      COMMAND gzip -9nf ${page}
      DEPENDS ${program}
      COMMENT "help2man: ${program}.1"
      VERBATIM)
    list(APPEND pages ${page}.gz)
  endforeach()
  add_custom_target(man_pages ALL DEPENDS ${pages})
  install(FILES ${pages} DESTINATION share/man/man1)
endfunction()
