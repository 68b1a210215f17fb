# The library's layers, enforced by the build (docs/ARCHITECTURE.md, "Layers").
#
# Each layer is an OBJECT library compiled against an include tree of its own, made of symbolic
# links under ${CMAKE_BINARY_DIR}/layers/<layer>/ to the source folders it may see: an include of
# a header from a layer above fails to compile ("No such file"). Each layer is then linked, with
# the layers below it and nothing else, into a shared library built with -Wl,--no-undefined: a
# call into a layer above (found through a declaration the layer should not have) fails to link.
# Upper layers reach lower ones only downward; the few calls that must go up (api -> lazy,
# api -> autograd, eager -> dist) go through the hook tables of src/ops/*_hooks.h.

# The public headers a layer below the user API may see: the value types, not the op functions.
set(LT_PUBLIC_VALUE_HEADERS array_ref.h device.h dtype.h error.h half.h options.h scalar.h tensor.h
  ops.def)

# The folders under src/ that a layer may see, by layer name. backend, interp and mlir all live
# under src/backend/: "backend" is its top-level headers, "interp" and "mlir" its subfolders.
set(LT_SEES_core core)
set(LT_SEES_ops ${LT_SEES_core} ops)
set(LT_SEES_eager ${LT_SEES_ops} eager)
set(LT_SEES_ir ${LT_SEES_ops} ir)
set(LT_SEES_backend ${LT_SEES_ops} eager ir backend)
set(LT_SEES_interp ${LT_SEES_backend} interp)
set(LT_SEES_mlir ${LT_SEES_interp} mlir)  # mlir runs interp for what it does not compile
set(LT_SEES_backend_registry ${LT_SEES_mlir} backend_registry)
set(LT_SEES_lazy ${LT_SEES_backend_registry} lazy)
set(LT_SEES_api ${LT_SEES_ops} eager api)
set(LT_SEES_autograd ${LT_SEES_api} autograd)
set(LT_SEES_data ${LT_SEES_api} data)
set(LT_SEES_dist ${LT_SEES_api} dist)
set(LT_SEES_nn ${LT_SEES_autograd} lazy backend_registry mlir interp backend ir data dist nn)
set(LT_SEES_optim ${LT_SEES_autograd} lazy backend_registry mlir interp backend ir optim)
# Layers below api see only LT_PUBLIC_VALUE_HEADERS of include/lt (lazy also its own lt/lazy.h).
set(LT_VALUE_ONLY core ops eager ir backend interp mlir backend_registry lazy)

set(LT_SOURCES_core src/core/*.cpp)
set(LT_SOURCES_ops src/ops/*.cpp)
set(LT_SOURCES_eager src/eager/*.cpp)
set(LT_SOURCES_ir src/ir/*.cpp)
set(LT_SOURCES_backend src/backend/plan_node.cpp src/backend/compile_threads.cpp)
set(LT_SOURCES_interp src/backend/interp/*.cpp)
set(LT_SOURCES_mlir src/backend/mlir/*.cpp)
set(LT_SOURCES_backend_registry src/backend/registry.cpp)
set(LT_SOURCES_lazy src/lazy/*.cpp)
set(LT_SOURCES_api src/api/*.cpp)
set(LT_SOURCES_autograd src/autograd/*.cpp)
set(LT_SOURCES_data src/data/*.cpp)
set(LT_SOURCES_dist src/dist/*.cpp)
set(LT_SOURCES_nn src/nn/*.cpp)
set(LT_SOURCES_optim src/optim/*.cpp)

set(LT_LAYERS core ops eager ir backend interp mlir backend_registry lazy api autograd data dist
  nn optim)

# Builds ${root}: one link per visible folder; src/backend/ becomes a real folder holding links to
# its top-level headers and to the subfolders the layer may see.
function(lt_layer_include_tree layer root)
  file(REMOVE_RECURSE ${root})
  file(MAKE_DIRECTORY ${root})
  set(src ${PROJECT_SOURCE_DIR}/src)
  set(seen_list ${LT_SEES_${layer}})
  list(REMOVE_DUPLICATES seen_list)
  foreach(seen IN LISTS seen_list)
    if(seen STREQUAL "backend")
      file(MAKE_DIRECTORY ${root}/backend)
      file(GLOB headers ${src}/backend/*.h)
      foreach(h IN LISTS headers)
        get_filename_component(name ${h} NAME)
        file(CREATE_LINK ${h} ${root}/backend/${name} SYMBOLIC)
      endforeach()
    elseif(seen STREQUAL "interp" OR seen STREQUAL "mlir")
      file(MAKE_DIRECTORY ${root}/backend)
      file(CREATE_LINK ${src}/backend/${seen} ${root}/backend/${seen} SYMBOLIC)
    elseif(NOT seen STREQUAL "backend_registry")  # registry.cpp has no header of its own
      file(CREATE_LINK ${src}/${seen} ${root}/${seen} SYMBOLIC)
    endif()
  endforeach()
  if(layer IN_LIST LT_VALUE_ONLY)
    file(MAKE_DIRECTORY ${root}/lt)
    set(visible ${LT_PUBLIC_VALUE_HEADERS})
    if(layer STREQUAL "lazy")
      list(APPEND visible lazy.h)
    endif()
    foreach(name IN LISTS visible)
      file(CREATE_LINK ${PROJECT_SOURCE_DIR}/include/lt/${name} ${root}/lt/${name} SYMBOLIC)
    endforeach()
  endif()
endfunction()

# lt_add_layers(<compile options...>): one OBJECT library lt_<layer> per layer, and one link
# check lt_layer_check_<layer> per layer. Returns the object list in LT_ALL_OBJECTS.
function(lt_add_layers)
  set(all_objects "")
  foreach(layer IN LISTS LT_LAYERS)
    file(GLOB sources CONFIGURE_DEPENDS ${LT_SOURCES_${layer}})
    add_library(lt_${layer} OBJECT ${sources})
    set(root ${CMAKE_BINARY_DIR}/layers/${layer})
    lt_layer_include_tree(${layer} ${root})
    target_include_directories(lt_${layer} PRIVATE ${root} ${LT_CBLAS_INCLUDE})
    if(NOT layer IN_LIST LT_VALUE_ONLY)
      target_include_directories(lt_${layer} PRIVATE ${PROJECT_SOURCE_DIR}/include)
    endif()
    target_compile_options(lt_${layer} PRIVATE -Wall -Wextra -Wno-unused-parameter)
    set_target_properties(lt_${layer} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    target_link_libraries(lt_${layer} PRIVATE lt_openmp)  # -fopenmp for the parallel loops
    if(layer STREQUAL "dist")
      target_link_libraries(lt_dist PRIVATE gloo)  # its headers are used only under src/dist/
    endif()
    list(APPEND all_objects $<TARGET_OBJECTS:lt_${layer}>)
  endforeach()
  # The link checks: a layer's objects and those of the layers it sees, nothing above.
  foreach(layer IN LISTS LT_LAYERS)
    set(objects "")
    foreach(seen IN LISTS LT_SEES_${layer})
      if(seen IN_LIST LT_LAYERS)
        list(APPEND objects $<TARGET_OBJECTS:lt_${seen}>)
      endif()
    endforeach()
    add_library(lt_layer_check_${layer} SHARED ${objects})
    target_link_options(lt_layer_check_${layer} PRIVATE -Wl,--no-undefined)
    target_link_libraries(lt_layer_check_${layer} PRIVATE ${LT_OPENBLAS} ZLIB::ZLIB MLIR LLVM
      gloo lt_openmp)
    set_target_properties(lt_layer_check_${layer} PROPERTIES
      LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/layers/check)
  endforeach()
  set(LT_ALL_OBJECTS ${all_objects} PARENT_SCOPE)
endfunction()
