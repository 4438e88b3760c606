#!/bin/bash
# The built plugin is a proper SPANK module: only slurm_spank_*/plugin_*
# symbols exported, no libslurm dependency, only the libraries its three lib/
# folders (core, topology, contract) need, a size within budget, and make
# install puts the plugin, the CLI and the plugstack snippet where admins
# expect them.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"

tap_plan 13
so=$MOEFLOW_PLUGIN
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

nm -D --defined-only "$so" | awk '{print $3}' | sort > "$tmp/exports"
ok "the plugin exports slurm_spank_init" grep -qx slurm_spank_init "$tmp/exports"
ok "the plugin exports plugin_name, plugin_type, plugin_version" \
    test "$(grep -cE '^plugin_(name|type|version)$' "$tmp/exports")" = 3
grep -vE '^(slurm_spank_.*|plugin_.*)$' "$tmp/exports" > "$tmp/extra"
ok "nothing else is exported" hasnt "$tmp/extra" '.'
# The plugin links without --no-undefined (Slurm's symbols come from the
# loading process), so a lib/ function missing from the build would
# only show up when slurmstepd loads it: catch that here.
nm -D --undefined-only "$so" | awk '{print $2}' | grep '^moe_' > "$tmp/undef_moe"
ok "every moeflow function the plugin calls is inside it" hasnt "$tmp/undef_moe" '.'
readelf -d "$so" > "$tmp/dyn"
ok "the plugin is not linked against libslurm" hasnt "$tmp/dyn" 'NEEDED.*libslurm'
# The plugin links lib/core, lib/topology and lib/contract only: hwloc
# (topology, node facts), libyaml (the NVLink domain map) and jansson
# (contracts).  libcrypto (SHA-256) is opened on the first digest, so a
# plain step does not map it.  SQLite, zlib and the study reader's needs
# stay in the CLI.  glibc's own parts may come and go with the
# linker's --as-needed default, so only those are free.
sed -nE 's/.*NEEDED.*\[(lib[^.]*)\.so.*/\1/p' "$tmp/dyn" |
    grep -vxE 'libc|libm|libdl|libpthread' | sort | paste -sd' ' > "$tmp/needed"
ok "the plugin needs exactly libhwloc, libjansson, libyaml beside glibc" \
    has "$tmp/needed" '^libhwloc libjansson libyaml-0$'
ok "the plugin needs neither SQLite nor zlib" hasnt "$tmp/dyn" 'NEEDED.*(libsqlite3|libz\.)'
# Size budget on text + data (debug info left out; it follows CFLAGS, not
# the code).  Measured with the default -g -O2 on x86-64 when the plugin
# stopped linking all of lib/: text 91,624 + data 2,944 = 94,568 bytes
# (from 287,943 + 13,912 before); 105,508 with the topology cache; 117,772
# after issue 21 and 120,364 after its hostile round (the option values'
# text rule, strict core lists and hostlists, whole-line seals); 131,598
# once core grew the manifest writer, string lists and the retune
# catalogue, because libtool links a convenience library into a module
# whole; 114,387 since the plugin's link drops what slurm_spank_* cannot
# reach (-ffunction-sections, --gc-sections: mk/lib.am).  The budget was
# the split's size plus ~25% (118,000), then the round's plus ~3%; a build
# that needs much more has most likely pulled a CLI-only folder in (the
# study reader alone is over 100,000).  The second hostile round (issue 38:
# sealed files read whole and checked by owner and mode, one acceptance of
# run records with the declared contract's diff, the fail-closed checks at
# job start, the checked offset, moving a reused job id's run aside) took
# it to about 127,000, and the budget to 131,000.  Issue 37 has the plugin
# judge later stages against the baseline moeflow run's sealed decisions
# adopted (the trail's reader and moe_contract_reference): 131,407, so
# the budget was that plus ~3%, 135,000.  Issue 39 builds the plugin's
# JSON with the checked builder (core/json_build.c, a key that cannot be
# made is an error naming it) and checks every path and copy it makes:
# 135,859, so the budget is that plus ~3%, 140,000.
size "$so" | awk 'NR == 2 { print $1 + $2 }' > "$tmp/size"
ok "the plugin's text + data ($(cat "$tmp/size") bytes) is within its budget of 140,000" \
    test "$(cat "$tmp/size")" -le 140000

make -s --no-print-directory -C "$MOEFLOW_BUILDDIR" install DESTDIR="$tmp/root" > "$tmp/install.log" 2>&1
tap_ok $? "make install DESTDIR=... succeeds"
eval "$(make -s --no-print-directory -C "$MOEFLOW_BUILDDIR" print-install-dirs)"
ok "spank_moeflow.so lands in Slurm's PluginDir ($plugindir)" test -f "$tmp/root$plugindir/spank_moeflow.so"
ok "moeflow lands in bindir ($bindir)" test -x "$tmp/root$bindir/moeflow"
conf=$tmp/root$sysconfdir/plugstack.conf.d/moeflow.conf
ok "the plugstack snippet lands in sysconfdir" test -f "$conf"
ok "the snippet loads the installed plugin" has "$conf" "^optional $plugindir/spank_moeflow.so "
tap_done
