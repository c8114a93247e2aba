# Turns the HTML report page into a C++ source file, so the report needs no file beside
# the binary. Run at build time:
#   cmake -DINPUT=report.html -DOUTPUT=report_template.cpp -P embed.cmake
set(delimiter "ranklab_html")
file(READ "${INPUT}" content)
string(FIND "${content}" ")${delimiter}" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains ')${delimiter}', which ends the C++ raw string")
endif()
file(WRITE "${OUTPUT}.tmp"
  "// Generated from traces/report/report.html by traces/report/embed.cmake: do not edit.\n"
  "#include \"traces/report/report_template.hpp\"\n\n"
  "namespace ranklab::detail {\n\n"
  "std::string_view html_report_template() {\n"
  "  return R\"${delimiter}(${content})${delimiter}\";\n"
  "}\n\n"
  "}  // namespace ranklab::detail\n")
# Only touch the output when it changed, so an unchanged page recompiles nothing.
configure_file("${OUTPUT}.tmp" "${OUTPUT}" COPYONLY)
file(REMOVE "${OUTPUT}.tmp")
