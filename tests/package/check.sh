#!/usr/bin/env bash
# tests/package/check.sh BUILD_DIR SOURCE_DIR WORK_DIR [C_COMPILER] [MODE...]
# Uses tkc from outside its tree, the ways README.md's "Use tkc in your project" describes, and runs
# each resulting program (tests/package/consumer). MODE (default: install subdir):
#   install   cmake --install BUILD_DIR into WORK_DIR/prefix; checks the versioned soname and the
#             installed files; builds the consumer with find_package(tkc) (tkc::tkc and tkc::tkc_static)
#             and with pkg-config (shared, static with --static, and C++17 through tkc.hpp), runs them all
#   subdir    builds the consumer with add_subdirectory(SOURCE_DIR): the library alone (no tests,
#             examples or benchmarks), without -Werror
set -euo pipefail
build=$1 src=$2 work=$3 cc=${4:-cc}
shift $(( $# < 4 ? $# : 4 ))
modes=${*:-install subdir}
rm -rf "$work" && mkdir -p "$work"
say() { printf 'package: %s\n' "$*"; }
fail() { printf 'package: FAIL: %s\n' "$*" >&2; exit 1; }
version=$(sed -n 's/^#define TKC_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\).*/\2/p' "$src/include/tkc/base.h" | paste -sd.)

for mode in $modes; do
  case $mode in
  install)
    prefix=$work/prefix
    cmake --install "$build" --prefix "$prefix" >/dev/null
    lib=$(ls "$prefix"/lib*/libtkc.so."$version")
    libdir=$(dirname "$lib")
    soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
    [[ $soname == libtkc.so.${version%.*} ]] || fail "soname '$soname', want libtkc.so.${version%.*}"
    for f in "$libdir/libtkc.so" "$libdir/libtkc.a" "$prefix/include/tkc.h" "$prefix/include/tkc/ops_nn.h" \
             "$libdir/cmake/tkc/tkcConfig.cmake" "$libdir/cmake/tkc/tkcConfigVersion.cmake" "$libdir/pkgconfig/tkc.pc"; do
      [[ -e $f ]] || fail "not installed: $f"
    done
    say "installed $version: soname $soname"
    cmake -S "$src/tests/package/consumer" -B "$work/find" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" >/dev/null
    cmake --build "$work/find" >/dev/null
    for p in consumer_shared consumer_static; do
      out=$("$work/find/$p") || fail "find_package $p: $out"
      [[ $out == "tkc $version "* ]] || fail "find_package $p printed '$out'"
      say "find_package $p: $out"
    done
    # a shared consumer of the installed library: it is the installed libtkc.so that gets loaded
    # (ldd's output taken whole first: grep -q would close the pipe early, and pipefail then fails on ldd's SIGPIPE)
    deps=$(ldd "$work/find/consumer_shared")
    [[ $deps == *"$libdir/libtkc.so.${version%.*}"* ]] || fail "consumer_shared does not load $libdir's libtkc"
    export PKG_CONFIG_PATH=$libdir/pkgconfig
    [[ $(pkg-config --modversion tkc) == "$version" ]] || fail "pkg-config --modversion: $(pkg-config --modversion tkc)"
    # shellcheck disable=SC2046
    "$cc" -std=c11 -o "$work/pc_shared" "$src/tests/package/consumer/main.c" $(pkg-config --cflags --libs tkc) -lm -Wl,-rpath,"$libdir"
    # shellcheck disable=SC2046
    "$cc" -std=c11 -o "$work/pc_static" "$src/tests/package/consumer/main.c" $(pkg-config --cflags tkc) \
      $(pkg-config --static --libs tkc | sed 's/-ltkc\b/-l:libtkc.a/') -lm
    cxx=${CXX:-c++}
    if command -v "$cxx" >/dev/null 2>&1; then # the installed C++ header, C++17
      # shellcheck disable=SC2046
      "$cxx" -std=c++17 -Wall -Wextra -pedantic -Werror -o "$work/pc_cxx" "$src/tests/package/consumer/main.cpp" \
        $(pkg-config --cflags --libs tkc) -Wl,-rpath,"$libdir"
      progs="pc_shared pc_static pc_cxx"
    else
      say "no C++ compiler ($cxx): the tkc.hpp consumer is skipped"
      progs="pc_shared pc_static"
    fi
    for p in $progs; do
      out=$("$work/$p") || fail "pkg-config $p: $out"
      say "pkg-config $p: $out"
    done
    ;;
  subdir)
    cmake -S "$src/tests/package/consumer" -B "$work/subdir" -DTKC_SOURCE_DIR="$src" -DCMAKE_C_COMPILER="$cc" >/dev/null
    cmake --build "$work/subdir" -j"$(nproc)" >/dev/null
    grep -q -- "-Werror" "$work/subdir/tkc/CMakeFiles/tkc_objs.dir/flags.make" && fail "add_subdirectory: tkc compiled with -Werror"
    for p in consumer_shared consumer_static; do
      out=$("$work/subdir/$p") || fail "add_subdirectory $p: $out"
      say "add_subdirectory $p: $out"
    done
    ;;
  *) fail "unknown mode $mode" ;;
  esac
done
say ok
