#!/usr/bin/env bash
# Regenerates the committed Panama bindings:
#   src/main/java/io/efabench/fabric/generated   (libfabric, fabric.args + fabric.h)
#   src/main/java/io/efabench/cuda/generated     (CUDA driver API, cuda.args; NVRTC, nvrtc.args)
#
# Environment:
#   JEXTRACT           jextract launcher (default: `jextract` on PATH)
#   LIBFABRIC_INCLUDE  directory holding rdma/fabric.h   (default /usr/include)
#   LIBFABRIC_SRC_TGZ  libfabric release tarball (e.g. libfabric-2.6.0-src.tgz); when set, its
#                      include/rdma headers are extracted to a temporary directory and used
#                      instead of LIBFABRIC_INCLUDE, so the committed bindings can be remade
#                      from the exact release they name
#   CUDA_INCLUDE       directory holding cuda.h, nvrtc.h (default ${CUDA_HOME:-/usr/local/cuda}/include)
#   CLANG_INCLUDE      clang builtin headers (stddef.h...), only needed by a jextract built from
#                      source against a system libclang (e.g. /usr/lib/llvm-14/lib/clang/14.0.6/include)
#   ONLY               fabric | cuda | nvrtc to regenerate one set (default: all)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
out=$root/src/main/java

jextract=${JEXTRACT:-$(command -v jextract || true)}
if [[ -z "$jextract" || ! -x "$jextract" ]]; then
    echo "generate.sh: jextract not found: set JEXTRACT=/path/to/bin/jextract or put it on PATH (see jextract/README.md)" >&2
    exit 1
fi
only=${ONLY:-all}
fabric_inc=${LIBFABRIC_INCLUDE:-/usr/include}
tgz_dir=
cleanup() { [[ -z "$tgz_dir" ]] || rm -rf "$tgz_dir"; }
trap cleanup EXIT
if [[ -n "${LIBFABRIC_SRC_TGZ:-}" && ( $only == all || $only == fabric ) ]]; then
    if [[ ! -f "$LIBFABRIC_SRC_TGZ" ]]; then
        echo "generate.sh: LIBFABRIC_SRC_TGZ=$LIBFABRIC_SRC_TGZ not found" >&2
        exit 1
    fi
    tgz_dir=$(mktemp -d)
    # Release tarballs unpack to libfabric/ (or libfabric-<version>/): take include/rdma wherever it is.
    tar -xzf "$LIBFABRIC_SRC_TGZ" -C "$tgz_dir" --wildcards '*/include/rdma/*'
    rdma=$(find "$tgz_dir" -path '*/include/rdma/fabric.h' -print -quit)
    if [[ -z "$rdma" ]]; then
        echo "generate.sh: $LIBFABRIC_SRC_TGZ has no include/rdma/fabric.h" >&2
        exit 1
    fi
    fabric_inc=$(dirname "$(dirname "$rdma")")
fi
cuda_inc=${CUDA_INCLUDE:-${CUDA_HOME:-/usr/local/cuda}/include}

extra=()
if [[ -n "${CLANG_INCLUDE:-}" ]]; then
    extra+=(-I "$CLANG_INCLUDE")
fi

# Replaces one generated package wholesale so that dropped symbols do not linger.
run() { # <package dir> <argfile> <header> <include dir>
    local pkg=$1 args=$2 header=$3 inc=$4
    if [[ ! -f "$header" ]]; then
        echo "generate.sh: $header not found (set the include directory variable)" >&2
        return 1
    fi
    local tmp
    tmp=$(mktemp -d)
    "$jextract" "${extra[@]}" -I "$inc" @"$here/$args" --output "$tmp" "$header"
    rm -rf "${out:?}/$pkg"
    mkdir -p "$(dirname "$out/$pkg")"
    mv "$tmp/$pkg" "$out/$pkg"
    rm -rf "$tmp"
    echo "generated $pkg from $header ($(ls "$out/$pkg" | wc -l) files)"
}

if [[ $only == all || $only == fabric ]]; then
    run io/efabench/fabric/generated fabric.args "$here/fabric.h" "$fabric_inc"
    echo "libfabric headers $(sed -n 's/^#define FI_MAJOR_VERSION[[:space:]]*//p' "$fabric_inc/rdma/fabric.h").$(sed -n 's/^#define FI_MINOR_VERSION[[:space:]]*//p' "$fabric_inc/rdma/fabric.h") from $fabric_inc"
fi
if [[ $only == all || $only == cuda ]]; then
    # cuda and nvrtc share one package: regenerate both when either is asked for.
    run io/efabench/cuda/generated cuda.args "$cuda_inc/cuda.h" "$cuda_inc"
fi
if [[ $only == all || $only == cuda || $only == nvrtc ]]; then
    if [[ -f "$cuda_inc/nvrtc.h" ]]; then
        tmp=$(mktemp -d)
        "$jextract" "${extra[@]}" -I "$cuda_inc" @"$here/nvrtc.args" --output "$tmp" "$cuda_inc/nvrtc.h"
        cp "$tmp"/io/efabench/cuda/generated/*.java "$out/io/efabench/cuda/generated/"
        rm -rf "$tmp"
        echo "generated Nvrtc from $cuda_inc/nvrtc.h"
    else
        echo "generate.sh: $cuda_inc/nvrtc.h not found; NVRTC bindings not generated" >&2
    fi
fi
