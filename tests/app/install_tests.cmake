# What `cmake --install` and the .deb put on a machine: the programs, the desktop entry, the
# AppStream metadata and the icon, installed into a scratch prefix and validated there by the
# desktop's own tools (they skip, saying which package to install, where the tools are absent).
add_test(NAME install_layout
         COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${CMAKE_BINARY_DIR}
                 -DPREFIX=${CMAKE_CURRENT_BINARY_DIR}/install-check -DAPP_ID=${FLASHVIZ_APP_ID}
                 -DSESSION=${PROJECT_SOURCE_DIR}/tests/fuzz/corpus/fuzz_session/preset-toy.flashviz
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/check_install.cmake)
set_tests_properties(install_layout PROPERTIES SKIP_REGULAR_EXPRESSION "SKIP: " TIMEOUT 300)
