# Fails unless every weak (merge-able) symbol that the per-ISA objects of engine/kernels/gemm_eigen_isa.cpp
# define lives in that variant's renamed Eigen namespace (engine/kernels/isa_variant.h): a weak symbol
# shared by two variants would let the linker keep the AVX-512 copy for the baseline caller.
# Usage: cmake -DNM=<nm> -DOBJECTS=<a.o;b.o;...> -P check_isa_symbols.cmake
foreach(object IN LISTS OBJECTS)
  execute_process(COMMAND ${NM} -C --defined-only ${object} OUTPUT_VARIABLE symbols
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nm failed on ${object}")
  endif()
  string(REPLACE "\n" ";" lines "${symbols}")
  foreach(line IN LISTS lines)
    if(line MATCHES " [WVu] " AND NOT line MATCHES "Eigen_(baseline|avx2|avx512)::"
       AND NOT line MATCHES "DW\\.ref\\.__gxx_personality_v0"
       # Emitted by clang's sanitizer builds, with no arithmetic in them, so the copy the linker
       # keeps does not matter: libstdc++'s inline exception constructor, and the function-type
       # typeinfo UBSan's -fsanitize=function checks calls with (data).
       AND NOT line MATCHES " std::bad_alloc::bad_alloc\\(\\)$"
       AND NOT line MATCHES " V typeinfo (name )?for ")
      message(FATAL_ERROR "${object} defines a weak symbol outside its Eigen namespace: ${line}")
    endif()
  endforeach()
endforeach()
message(STATUS "per-ISA objects export no shared weak symbols")
