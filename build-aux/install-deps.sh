#!/bin/sh
# Installs the Debian 12 packages moeflow needs to build, test and run its
# local Slurm cluster (chromium: tests/cli/report-pack-svg.sh renders the
# evidence pack's plots headless).  Safe to re-run: apt-get skips what is
# installed.
set -e
PACKAGES="build-essential autoconf automake libtool pkg-config
  libyaml-dev libhwloc-dev hwloc libjansson-dev libsqlite3-dev sqlite3 libssl-dev zlib1g-dev
  libcmocka-dev python3-pandas
  slurm-wlm slurmctld slurmd slurm-client libslurm-dev munge
  iproute2 procps xz-utils python3
  debhelper dpkg-dev lintian groff-base man-db
  shellcheck chromium
  clang clang-tidy cppcheck valgrind"
missing=""
for p in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
    echo "install-deps: run as root to install:$missing" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing
