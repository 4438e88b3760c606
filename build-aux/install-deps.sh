#!/bin/sh
# Installs the packages moeflow needs, as root.  Safe to re-run: it installs
# only what is missing.
#
#   build-aux/install-deps.sh          what building needs: the compiler,
#                                      autotools, pkg-config, and the
#                                      libraries and headers configure checks
#                                      (libyaml, hwloc, jansson, sqlite,
#                                      libcrypto, zlib, cmocka, Slurm's
#                                      headers and PluginDir).  Enough to
#                                      build, run `moeflow gen`, fit, layouts,
#                                      report and diagnose; no daemon.
#   build-aux/install-deps.sh --test   also what the tests need
#                                      (tests/run-all.sh): slurmctld, slurmd,
#                                      munge, valgrind, the Debian packaging
#                                      tools, the linters, chromium
#                                      (tests/cli/report-pack-svg.sh renders
#                                      the evidence pack's plots headless).
#
# Debian 12 is what CI runs.  Rocky, AlmaLinux and RHEL 8/9 use dnf with
# EPEL and CRB (PowerTools on 8): those lines were written from the package
# documentation cited beside them and have NOT been run here (no RHEL
# package registry is reachable from where moeflow is tested).
set -e

mode=build
case "${1:-}" in
    "") ;;
    --test) mode=full ;;
    -h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "install-deps: unknown argument '$1' (--test or nothing)" >&2; exit 2 ;;
esac

# /etc/os-release: ID (debian, rocky, rhel, almalinux), ID_LIKE, VERSION_ID
ID="" ID_LIKE="" VERSION_ID=""
# shellcheck disable=SC1091
[ -r /etc/os-release ] && . /etc/os-release
family=""
case "$ID" in
    debian) family=debian ;;
    rocky|rhel|almalinux) family=rhel ;;
    *) case " $ID_LIKE " in
           *" debian "*) family=debian ;;
           *" rhel "*) family=rhel ;;
       esac
       [ -n "$family" ] &&
           echo "install-deps: $ID is not Debian, Rocky, AlmaLinux or RHEL; trying as ${family} (untested)" >&2 ;;
esac

need_root() {  # need_root WHAT...
    [ "$(id -u)" = 0 ] && return 0
    echo "install-deps: run as root to install:$*" >&2
    exit 1
}

# --- Debian 12 ---------------------------------------------------------------
# configure.ac checks, one package each (apt-cache show / dpkg -S on Debian 12):
#   build-essential       gcc, make, libc6-dev, and binutils (objdump reads
#                         libcrypto's soname)
#   autoconf automake libtool  autoreconf -fi (LT_INIT)
#   pkg-config            PKG_CHECK_MODULES and its pkg.m4
#   libyaml-dev           yaml-0.1          libhwloc-dev  hwloc >= 2.0
#   libjansson-dev        jansson >= 2.10   libsqlite3-dev sqlite3
#   libssl-dev            libcrypto >= 3.0  zlib1g-dev    zlib
#   libcmocka-dev         cmocka >= 1.1 (configure requires it, not only
#                         make check)
#   libslurm-dev          <slurm/spank.h>, slurm_version.h, libslurm.so
#   slurm-wlm-basic-plugins  Slurm's PluginDir, which configure finds by
#                         select_cons_tres.so (no daemon; it pulls libmunge2,
#                         the library, not munged)
DEBIAN_BUILD="build-essential autoconf automake libtool pkg-config
  libyaml-dev libhwloc-dev libjansson-dev libsqlite3-dev libssl-dev zlib1g-dev
  libcmocka-dev libslurm-dev slurm-wlm-basic-plugins"
# The tests': the local cluster (tests/cluster/localcluster.sh: slurmctld,
# slurmd, munged, sbatch/srun from slurm-client, ss from iproute2), the
# tools tests call (hwloc's lstopo in topology-cache.sh, sqlite3, python3,
# xz for the GPU lane's committed tarballs, groff and man in doc-options.sh
# and deb-install.sh), the Debian packaging (deb-install.sh), the linters
# (tests/lint), valgrind (tests/cli/valgrind.sh), chromium
# (report-pack-svg.sh), and pandas for `make bench`'s overlap reference.
DEBIAN_TEST="hwloc sqlite3 python3 python3-pandas
  slurm-wlm slurmctld slurmd slurm-client munge
  iproute2 procps xz-utils
  debhelper dpkg-dev lintian groff-base man-db
  shellcheck chromium
  clang clang-tidy cppcheck valgrind"

install_debian() {
    packages=$DEBIAN_BUILD
    [ "$mode" = full ] && packages="$packages $DEBIAN_TEST"
    missing=""
    for p in $packages; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
            missing="$missing $p"
    done
    [ -z "$missing" ] && return 0
    need_root "$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing
}

# --- Rocky / AlmaLinux / RHEL 8 and 9 (not run here) -------------------------
# Where each name was checked (the `search` tool's stored pages; Fedora's
# package pages show Fedora and EPEL, and RHEL 8/9 are built from Fedora's
# source packages, so a page there checks the name, not that RHEL ships it
# in a given release).  The repositories are enabled first, so which of
# BaseOS, AppStream, CRB or EPEL holds a package does not matter to dnf.
#   CRB (PowerTools on 8) and EPEL on Rocky/Alma: `dnf config-manager
#     --set-enabled crb` / `powertools`, `dnf install epel-release`:
#     https://github.com/percona/postgresql-docs/pull/859 (Rocky 8 and 9),
#     https://github.com/AcademySoftwareFoundation/OpenRV/discussions/352
#     (powertools on 8, crb on 9, citing https://wiki.rockylinux.org/rocky/repo/)
#   CRB and EPEL on RHEL: `subscription-manager repos --enable
#     codeready-builder-for-rhel-N-ARCH-rpms` and
#     https://dl.fedoraproject.org/pub/epel/epel-release-latest-N.noarch.rpm:
#     https://github.com/percona/postgresql-docs/pull/859
#   pkgconf-pkg-config ("provides /usr/bin/pkg-config"):
#     https://packages.fedoraproject.org/pkgs/pkgconf/pkgconf-pkg-config
#   libyaml-devel (provides pkgconfig(yaml-0.1)):
#     https://packages.fedoraproject.org/pkgs/libyaml/libyaml-devel
#   jansson-devel: https://packages.fedoraproject.org/pkgs/jansson/jansson-devel/
#   hwloc-devel: https://packages.fedoraproject.org/pkgs/hwloc/hwloc-devel/
#   libcmocka-devel: https://packages.fedoraproject.org/pkgs/cmocka/libcmocka-devel/
#     (not in EPEL: RHEL's CRB)
#   slurm-devel (EPEL 9: 22.05.9, EPEL 8: 20.11.9; 20.11 was never built
#     against here): https://packages.fedoraproject.org/pkgs/slurm/slurm-devel
#     Its base package slurm must ship the plugins configure finds Slurm's
#     PluginDir by (/usr/lib64/slurm/select_cons_tres.so): not checked.
#   munge-devel (EPEL 7 only there, so RHEL 8/9 carry it themselves):
#     https://packages.fedoraproject.org/pkgs/munge/munge-devel
#   openssl3-devel for RHEL 8, whose OpenSSL is 1.1.1 while configure wants
#     libcrypto >= 3.0 (EPEL 8):
#     https://packages.fedoraproject.org/pkgs/openssl3/openssl3-devel
#     How its pkg-config file is named was not checked: on 8 configure may
#     need PKG_CONFIG_PATH pointed at it.
#   NOT checked on any page: gcc make binutils autoconf automake libtool
#     sqlite-devel openssl-devel zlib-devel (RHEL's usual names, the ones
#     RPM specs found by the search tool BuildRequire), slurm-slurmctld
#     slurm-slurmd (EPEL's daemon subpackages, after
#     https://web-docs.gsi.de/~vpenso/notes/posts/hpc/cluster/slurm/rpm-packages.html),
#     and the test set's names.
RHEL_BUILD="gcc make binutils autoconf automake libtool pkgconf-pkg-config
  libyaml-devel hwloc-devel jansson-devel sqlite-devel openssl-devel zlib-devel
  libcmocka-devel slurm slurm-devel"
# The tests' (the Debian packaging test, tests/integration/deb-install.sh,
# skips without dpkg-buildpackage; chromium, shellcheck, cppcheck come from
# EPEL; names not checked per release):
RHEL_TEST="hwloc sqlite python3 python3-pandas
  slurm-slurmctld slurm-slurmd munge munge-devel
  iproute procps-ng xz groff-base man-db
  shellcheck chromium clang clang-tools-extra cppcheck valgrind"

install_rhel() {
    major=${VERSION_ID%%.*}
    case "$major" in 8|9) ;; *) echo "install-deps: $ID $VERSION_ID: only 8 and 9 are described (untested)" >&2 ;; esac
    packages=$RHEL_BUILD
    [ "$major" = 8 ] && packages="$packages openssl3-devel"
    [ "$mode" = full ] && packages="$packages $RHEL_TEST"
    missing=""
    for p in $packages; do
        rpm -q "$p" > /dev/null 2>&1 || missing="$missing $p"
    done
    [ -z "$missing" ] && return 0
    need_root "$missing"
    if [ "$ID" = rhel ]; then
        subscription-manager repos --enable "codeready-builder-for-rhel-$major-$(uname -m)-rpms"
        rpm -q epel-release > /dev/null 2>&1 ||
            dnf install -y "https://dl.fedoraproject.org/pub/epel/epel-release-latest-$major.noarch.rpm"
    else
        dnf install -y dnf-plugins-core epel-release
        if [ "$major" = 8 ]; then
            dnf config-manager --set-enabled powertools
        else
            dnf config-manager --set-enabled crb
        fi
    fi
    # shellcheck disable=SC2086
    dnf install -y $missing
}

case "$family" in
    debian) install_debian ;;
    rhel) install_rhel ;;
    *) echo "install-deps: unknown system '${ID:-?}' (/etc/os-release): install by hand what" \
            "configure asks for; README.md lists the Debian and RHEL package names" >&2
       exit 1 ;;
esac
