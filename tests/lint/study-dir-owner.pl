#!/usr/bin/perl
# Prints FILE:LINE: TEXT for every spelling of a study folder's path or of
# a shared environment variable outside its owner, lib/core/study_dir.[ch]:
# in C, inside a string literal (comments and #include lines are not
# code), and a study folder's bare name ("runs", "winners", "decisions")
# as an argument of a path call; in a template, on a line that is not a
# shell comment.  Arguments:
# the files to read.  study-dir-owner.sh runs it over the tree.
use strict;
use warnings;

my $names = qr{results/|contracts/|baseline\.json|contract/|frozen\.json|measured\.json|decisions/
              |runs/|winners/|evidence-pack|run-state\.json|launch\.log|manifest\.json
              |MOEFLOW_INDEX_OFFSET
              |/(?:runs|winners|decisions)(?![\w.-])}x;
# The study's folders by their bare names ("runs" alone, not "runs/"):
# the same words are JSON keys ("runs" of report.json, "winners" of
# run-state.json), so a bare literal counts only as a path component:
# an argument of a call that takes one.  A path with a slash before the
# name ("%s/runs", "results/runs") is caught by $names above.
my $folders = qr{^"(?:runs|winners|decisions)"$};
my $path_call = qr{\b(?:moe_path_join|moe_strdup_printf|moe_study_result\w*|openat|opendir|mkdir
                    |mkdirat|fstatat|unlinkat|renameat2?|base)\s*\([^;{}]*$}x;
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
    my ($line, $code) = (1, '');
    while ($src =~ m{\G(?:("(?:[^"\\\n]|\\.)*")|('(?:[^'\\\n]|\\.)*')|(/\*.*?\*/)|(//[^\n]*)
                         |(\#[ \t]*include[^\n]*)|([^"'/\#]+|.))}gsx) {
        my ($tok, $lit, $text) = ($&, $1, $6);
        stray($file, $line, $lit)
            if defined $lit && ($lit =~ $names || ($lit =~ $folders && $code =~ $path_call));
        # the code since the last statement, to see which call a literal is in
        $code = substr($code . $text, -200) if defined $text;
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
