# cmake -DBUILD_DIR=… -DPREFIX=… -DAPP_ID=… -P check_install.cmake
file(REMOVE_RECURSE ${PREFIX})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX}
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc})")
endif()
set(desktop ${PREFIX}/share/applications/${APP_ID}.desktop)
set(metainfo ${PREFIX}/share/metainfo/${APP_ID}.metainfo.xml)
foreach(f bin/flashviz bin/flashviz-cli share/applications/${APP_ID}.desktop
          share/metainfo/${APP_ID}.metainfo.xml share/icons/hicolor/scalable/apps/${APP_ID}.svg)
  if(NOT EXISTS ${PREFIX}/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
message(STATUS "installed: programs, desktop entry, metainfo, icon")

find_program(APPSTREAMCLI appstreamcli)
find_program(DESKTOP_FILE_VALIDATE desktop-file-validate)
if(NOT APPSTREAMCLI OR NOT DESKTOP_FILE_VALIDATE)
  message(STATUS "SKIP: appstreamcli or desktop-file-validate not found (Debian: appstream, desktop-file-utils)")
  return() # ctest reads the SKIP line: the layout was checked, the validators could not run
endif()
foreach(check "${APPSTREAMCLI};validate;--no-net;--pedantic;${metainfo}"
              "${DESKTOP_FILE_VALIDATE};${desktop}")
  execute_process(COMMAND ${check} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message(STATUS "${out}")
  # appstreamcli exits 0 with pedantic notes; a clean file has none, and desktop-file-validate
  # prints nothing at all for a clean entry.
  if(NOT rc EQUAL 0 OR out MATCHES "(^|\n)[EWIP]: |error|warning|hint")
    message(FATAL_ERROR "not clean: ${check}")
  endif()
endforeach()
