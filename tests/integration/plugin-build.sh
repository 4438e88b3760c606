#!/bin/bash
# The built plugin is a proper SPANK module: only slurm_spank_*/plugin_*
# symbols exported, no libslurm dependency, and make install puts the
# plugin, the CLI and the plugstack snippet where admins expect them.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"

tap_plan 10
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
# loading process), so a libmoeflow function missing from the build would
# only show up when slurmstepd loads it: catch that here.
nm -D --undefined-only "$so" | awk '{print $2}' | grep '^moe_' > "$tmp/undef_moe"
ok "every moeflow function the plugin calls is inside it" hasnt "$tmp/undef_moe" '.'
readelf -d "$so" > "$tmp/dyn"
ok "the plugin is not linked against libslurm" hasnt "$tmp/dyn" 'NEEDED.*libslurm'

make -s -C "$MOEFLOW_BUILDDIR" install DESTDIR="$tmp/root" > "$tmp/install.log" 2>&1
tap_ok $? "make install DESTDIR=... succeeds"
eval "$(make -s -C "$MOEFLOW_BUILDDIR" print-install-dirs)"
ok "spank_moeflow.so lands in Slurm's PluginDir ($plugindir)" test -f "$tmp/root$plugindir/spank_moeflow.so"
ok "moeflow lands in bindir ($bindir)" test -x "$tmp/root$bindir/moeflow"
conf=$tmp/root$sysconfdir/plugstack.conf.d/moeflow.conf
ok "the plugstack snippet lands in sysconfdir" test -f "$conf"
ok "the snippet loads the installed plugin" has "$conf" "^optional $plugindir/spank_moeflow.so "
tap_done
