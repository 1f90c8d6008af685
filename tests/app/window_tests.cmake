# The window's tests: controller, main window, lecture mode, command line.
foreach(_test tst_controller tst_window tst_lecture tst_command_line)
  flashviz_add_test(${_test} SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/${_test}.cpp LIBS flashviz_gui_lib)
endforeach()
# The command-line test runs the real executable for --screenshot.
target_compile_definitions(tst_command_line PRIVATE FLASHVIZ_EXECUTABLE="$<TARGET_FILE:flashviz>")
add_dependencies(tst_command_line flashviz)
# The scenes with the CUDA backend chosen (skips without a usable GPU).
flashviz_add_test(tst_gpu_scene SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/tst_gpu_scene.cpp LIBS flashviz_gui_lib)
