# The animation export: files written by the recorder and read back by FFmpeg's own demuxers and
# decoders (PkgConfig::LIBAV), and `flashviz --export` run as a process.
flashviz_add_test(tst_animation_export SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/tst_animation_export.cpp
                  LIBS flashviz_gui_shell PkgConfig::LIBAV)
target_compile_definitions(tst_animation_export PRIVATE FLASHVIZ_EXECUTABLE="$<TARGET_FILE:flashviz>")
add_dependencies(tst_animation_export flashviz)
