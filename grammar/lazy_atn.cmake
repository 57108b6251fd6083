# Run after the ANTLR tool: makes the generated lexer's and parser's ATN
# deserialisation happen at their first construction instead of in a static
# initialiser. ANTLR 4.7.2 emits `Initializer X::_init;`, which deserialises
# both ATNs at every start of every program linked with the grammar (~2 ms
# of `reflex events` from an artifact, which never parses .rfx). A function
# static in the constructor is initialised once, thread-safely.
# Usage: cmake -DFILE=<generated .cpp> -DCLASS=<ReflexLexer|ReflexParser> -DBASE=<Lexer|Parser>
#        -DINPUT=<CharStream|TokenStream> -P lazy_atn.cmake
file(READ "${FILE}" src)
set(eager "${CLASS}::Initializer ${CLASS}::_init;")
set(ctor "${CLASS}::${CLASS}(${INPUT} *input) : ${BASE}(input) {")
string(FIND "${src}" "${eager}" at_eager)
string(FIND "${src}" "${ctor}" at_ctor)
if(at_eager EQUAL -1 OR at_ctor EQUAL -1)
  message(FATAL_ERROR "lazy_atn.cmake: ${FILE} is not laid out as ANTLR 4.7.2 lays it out "
                      "(no '${eager}' or no '${ctor}'); update this script for the new tool")
endif()
string(REPLACE "${eager}" "// ${eager} (made lazy: grammar/lazy_atn.cmake)" src "${src}")
string(REPLACE "${ctor}" "${ctor}\n  static const Initializer once;  // grammar/lazy_atn.cmake" src "${src}")
file(WRITE "${FILE}" "${src}")
