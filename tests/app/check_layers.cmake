# The window's folders depend one way (app/gui/CMakeLists.txt):
#   shell → lecture, pages → views → present, widgets → session → style → core
# and shell → export, which uses no other folder (Qt Gui and FFmpeg only). From session up a
# folder may also read app/measured (the shipped hardware measurements, core's types only).
# Run with -DGUI_DIR=<app/gui>: fails naming every #include that reaches a folder its own folder
# may not use, so a dependency against the grain is found before it is linked around.
cmake_minimum_required(VERSION 3.25)
set(_allowed_style   core style)
set(_allowed_session core kernels style session app)
set(_allowed_present core style session present app)
set(_allowed_views   core style session present views app)
set(_allowed_widgets core kernels style session widgets app)
set(_allowed_pages   core kernels style session pages app)
set(_allowed_lecture core style session present views widgets lecture app)
set(_allowed_export  export)
set(_allowed_shell   core kernels style session present views widgets pages lecture export shell app)

set(_problems "")
file(GLOB_RECURSE _files RELATIVE ${GUI_DIR} ${GUI_DIR}/*.h ${GUI_DIR}/*.cpp)
foreach(_file IN LISTS _files)
  string(REGEX MATCH "^[^/]+" _folder "${_file}")
  if(NOT DEFINED _allowed_${_folder})
    list(APPEND _problems "${_file}: the folder '${_folder}' has no place in the layers")
    continue()
  endif()
  file(STRINGS ${GUI_DIR}/${_file} _includes REGEX "^#include \"[^\"]+/")
  foreach(_line IN LISTS _includes)
    string(REGEX REPLACE "^#include \"([^/\"]+)/.*" "\\1" _target "${_line}")
    if(NOT _target IN_LIST _allowed_${_folder})
      list(APPEND _problems "${_file}: ${_line} (${_folder}/ may use: ${_allowed_${_folder}})")
    endif()
  endforeach()
endforeach()
if(_problems)
  list(JOIN _problems "\n  " _text)
  message(FATAL_ERROR "includes against the layers of app/gui:\n  ${_text}")
endif()
list(LENGTH _files _count)
message(STATUS "${_count} files of app/gui follow the layers")
