# The window's tests: controller, main window, lecture mode, command line.
foreach(_test tst_controller tst_window tst_lecture tst_presenter tst_command_line tst_text_fits)
  flashviz_add_test(${_test} SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/${_test}.cpp LIBS flashviz_gui_shell)
endforeach()
# The presenter view on two screens: the offscreen platform with a laptop's and a projector's.
add_test(NAME tst_presenter_two_screens
         COMMAND tst_presenter -platform offscreen:configfile=${CMAKE_CURRENT_SOURCE_DIR}/two_screens.json
                 secondScreenTakesTheAudience)
set_tests_properties(tst_presenter_two_screens PROPERTIES TIMEOUT 300)
# Q, K, V and dO from .npy files in the window: settings, scene, controls, dialog (issue #16).
flashviz_add_test(tst_input_files SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/tst_input_files.cpp
                  LIBS flashviz_gui_shell xtensor)
# The worker jobs, the latest request of a tag winning (session/async_job.h).
flashviz_add_test(tst_async_job SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/tst_async_job.cpp LIBS flashviz_gui_session)
# The views' models, without a window: the tile detail's, the check's, the code's, the comparison's.
flashviz_add_test(tst_present_tile SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/tst_present_tile.cpp LIBS flashviz_gui_present)
# The command-line test runs the real executable for --screenshot.
target_compile_definitions(tst_command_line PRIVATE FLASHVIZ_EXECUTABLE="$<TARGET_FILE:flashviz>")
add_dependencies(tst_command_line flashviz)
# The scenes with the CUDA backend chosen (skips without a usable GPU).
flashviz_add_test(tst_gpu_scene SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/tst_gpu_scene.cpp LIBS flashviz_gui_present)
# The window's backward scene (issue #15): gradients, bugs, frames, settings and presets.
flashviz_add_test(tst_backward_scene SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/tst_backward_scene.cpp LIBS flashviz_gui_session)
# The monkey: seeded random use of the real window (FLASHVIZ_MONKEY_SECONDS, 20 s by default).
flashviz_add_test(tst_monkey SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/tst_monkey.cpp LIBS flashviz_gui_shell)
# The application's answers before it has a window, with no display at all.
flashviz_add_test(tst_startup SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/tst_startup.cpp LIBS Qt6::Core)
target_compile_definitions(tst_startup PRIVATE FLASHVIZ_EXECUTABLE="$<TARGET_FILE:flashviz>"
                                               FLASHVIZ_VERSION="${PROJECT_VERSION}")
add_dependencies(tst_startup flashviz)
# Saved layout and settings that are corrupted or edited (issue #12), and the shipped presets
# and lecture chapters entry by entry, with corrupted versions of both formats.
foreach(_test tst_saved_state tst_resources)
  flashviz_add_test(${_test} SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/${_test}.cpp LIBS flashviz_gui_shell)
endforeach()
target_compile_definitions(tst_resources PRIVATE FLASHVIZ_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
# Alone, so that a busy machine's other suites cannot pass for a GUI thread that stopped answering.
set_tests_properties(tst_monkey PROPERTIES RUN_SERIAL TRUE)
# The memory stage's and the matrices view's models, step by step, without a window.
flashviz_add_test(tst_present_stage SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/tst_present_stage.cpp
                  LIBS flashviz_gui_present)
# File → Export: the view as SVG / PDF / PNG, the step data (the same bytes as flashviz-cli steps
# --json), the animation dialog's request and the export's progress and Cancel (issue #16).
flashviz_add_test(tst_export_window SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/tst_export_window.cpp
                  LIBS flashviz_gui_shell Qt6::Svg)
target_compile_definitions(tst_export_window PRIVATE FLASHVIZ_CLI_EXECUTABLE="$<TARGET_FILE:flashviz-cli>")
add_dependencies(tst_export_window flashviz-cli)
# The input designer: its settings key, its scenes, its dialog (issue #16).
flashviz_add_test(tst_input_designer SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/tst_input_designer.cpp LIBS flashviz_gui_shell)
# The one-way dependencies of the window's folders, checked on their #include lines.
add_test(NAME gui_layers COMMAND ${CMAKE_COMMAND} -DGUI_DIR=${PROJECT_SOURCE_DIR}/app/gui
                                 -P ${CMAKE_CURRENT_SOURCE_DIR}/check_layers.cmake)
# Sessions (.flashviz): saved and opened in a fresh window, refused files, the recent list, the
# command line's FILE.flashviz with the real executable, the MIME type beside the format.
flashviz_add_test(tst_session SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/tst_session.cpp LIBS flashviz_gui_shell)
target_compile_definitions(tst_session PRIVATE FLASHVIZ_EXECUTABLE="$<TARGET_FILE:flashviz>"
                                               FLASHVIZ_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
add_dependencies(tst_session flashviz)
# The FlashAttention-2 page (issue #20): its model, flashviz-cli versions beside it, the window's
# tab, its options in sessions, lecture chapter 10.
flashviz_add_test(tst_versions_page SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/tst_versions_page.cpp
                  LIBS flashviz_gui_shell)
target_compile_definitions(tst_versions_page PRIVATE FLASHVIZ_CLI_EXECUTABLE="$<TARGET_FILE:flashviz-cli>")
add_dependencies(tst_versions_page flashviz-cli)
