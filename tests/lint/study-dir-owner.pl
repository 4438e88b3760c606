#!/usr/bin/perl
# Prints FILE:LINE: TEXT for every spelling of a study folder's path or of
# a shared environment variable outside its owner, lib/core/study_dir.[ch]:
# in C, inside a string literal (comments and #include lines are not
# code); in a template, on a line that is not a shell comment.  Arguments:
# the files to read.  study-dir-owner.sh runs it over the tree.
use strict;
use warnings;

my $names = qr{results/|contracts/|baseline\.json|contract/|frozen\.json|measured\.json|decisions/
              |runs/|winners/|evidence-pack|run-state\.json|launch\.log|manifest\.json
              |MOEFLOW_INDEX_OFFSET}x;
my $found = 0;

sub stray {
    my ($file, $line, $text) = @_;
    print "$file:$line: $text\n";
    $found++;
}

# The string literals of a C file with their line numbers: a small scanner
# over literals and comments, so that "/*" inside a string is text and a
# path inside a comment is not code.
sub c_literals {
    my ($file, $src) = @_;
    my $line = 1;
    while ($src =~ m{\G(?:("(?:[^"\\\n]|\\.)*")|('(?:[^'\\\n]|\\.)*')|(/\*.*?\*/)|(//[^\n]*)
                         |(\#[ \t]*include[^\n]*)|([^"'/\#]+|.))}gsx) {
        my ($tok, $lit) = ($&, $1);
        stray($file, $line, $lit) if defined $lit && $lit =~ $names;
        $line += ($tok =~ tr/\n//);
    }
}

for my $file (@ARGV) {
    open(my $fh, '<', $file) or die "$file: $!\n";
    local $/;
    my $src = <$fh>;
    close($fh);
    if ($file =~ /\.[ch]$/) {
        c_literals($file, $src);
        next;
    }
    my $n = 0;
    for my $l (split /\n/, $src) {
        $n++;
        stray($file, $n, $l) if $l !~ /^\s*#/ && $l =~ $names;
    }
}
exit($found ? 1 : 0);
