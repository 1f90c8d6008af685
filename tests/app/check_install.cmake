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
          share/metainfo/${APP_ID}.metainfo.xml share/icons/hicolor/scalable/apps/${APP_ID}.svg
          share/mime/packages/${APP_ID}.xml)
  if(NOT EXISTS ${PREFIX}/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
message(STATUS "installed: programs, desktop entry, metainfo, icon, session MIME type")

# The session type: update-mime-database (shared-mime-info) builds a database from a copy of the
# installed share/mime, which maps a session (SESSION, as FlashViz writes one) to the type the
# desktop entry opens, by its .flashviz name and, saved under another name, by its content.
set(session_type application/x-flashviz-session)
find_program(UPDATE_MIME_DATABASE update-mime-database)
if(NOT UPDATE_MIME_DATABASE)
  message(STATUS "SKIP: update-mime-database not found (Debian: shared-mime-info)")
else()
  set(data ${PREFIX}/mime-check)
  file(REMOVE_RECURSE ${data})
  file(COPY ${PREFIX}/share/mime DESTINATION ${data})
  # With the copy on the search path, a clean package makes it print nothing.
  execute_process(COMMAND ${CMAKE_COMMAND} -E env XDG_DATA_DIRS=${data}
                          ${UPDATE_MIME_DATABASE} ${data}/mime
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0 OR NOT out STREQUAL "")
    message(FATAL_ERROR "update-mime-database refused share/mime/packages/${APP_ID}.xml (${rc}): ${out}")
  endif()
  file(READ ${data}/mime/globs2 globs)
  if(NOT globs MATCHES "(^|\n)[0-9]+:${session_type}:\\*\\.flashviz\n"
     OR NOT EXISTS ${data}/mime/application/x-flashviz-session.xml)
    message(FATAL_ERROR "the MIME database has no ${session_type} for *.flashviz:\n${globs}")
  endif()
  find_program(GIO gio)
  if(GIO)
    # As a file manager asks: GLib reads XDG_DATA_DIRS/mime (its own user folder kept empty).
    file(COPY_FILE ${SESSION} ${data}/lesson.flashviz)
    file(COPY_FILE ${SESSION} ${data}/lesson-without-extension)
    file(WRITE ${data}/notes-without-extension "Bring the slides.\n") # not a session
    foreach(f lesson.flashviz lesson-without-extension notes-without-extension)
      execute_process(COMMAND ${CMAKE_COMMAND} -E env XDG_DATA_DIRS=${data} XDG_DATA_HOME=${data}/home
                              ${GIO} info -a standard::content-type ${data}/${f}
                      RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
      string(FIND "${out}" "standard::content-type: ${session_type}\n" found)
      if(NOT rc EQUAL 0 OR (f MATCHES "^notes" AND NOT found EQUAL -1)
         OR (NOT f MATCHES "^notes" AND found EQUAL -1))
        message(FATAL_ERROR "gio maps ${f} wrongly: ${out}")
      endif()
    endforeach()
    message(STATUS "the MIME database maps a session, by name and by content, to ${session_type}")
  else()
    message(STATUS "the MIME database has ${session_type} for *.flashviz (gio not found: GLib's own look-up not tried)")
  endif()
endif()

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
