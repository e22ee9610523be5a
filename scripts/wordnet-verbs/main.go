// Command wordnet-verbs writes search/verbs.txt, the English words that can
// be verbs, from WordNet 3.0's verb index (Debian's wordnet-base package:
// apt-get install wordnet-base). Search reads it to tell a request that
// names an action ("approve the PR", "draft a doc") from one that only
// names things ("child blocks of block abc"), which wants to look. It is
// run by hand, never by the tests:
//
//	go run ./scripts/wordnet-verbs > search/verbs.txt
//	go run ./scripts/wordnet-verbs -index /path/to/index.verb > search/verbs.txt
//
// Each lemma of one word (letters, and a hyphen inside) is written once, in
// byte order, after WordNet's licence, which its terms ask to be kept with
// every copy.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
)

const licence = `# The English words that can be verbs: every one-word lemma of WordNet 3.0's
# verb index (index.verb), written by scripts/wordnet-verbs. Search reads it
# to tell a request that names an action from one that names only things.
#
# WordNet Release 3.0. This software and database is being provided to you,
# the LICENSEE, by Princeton University under the following license. By
# obtaining, using and/or copying this software and database, you agree that
# you have read, understood, and will comply with these terms and conditions.:
# Permission to use, copy, modify and distribute this software and database
# and its documentation for any purpose and without fee or royalty is hereby
# granted, provided that you agree to comply with the following copyright
# notice and statements, including the disclaimer, and that the same appear
# on ALL copies of the software, database and documentation, including
# modifications that you make for internal use or for distribution.
# WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved.
# THIS SOFTWARE AND DATABASE IS PROVIDED "AS IS" AND PRINCETON UNIVERSITY
# MAKES NO REPRESENTATIONS OR WARRANTIES, EXPRESS OR IMPLIED. BY WAY OF
# EXAMPLE, BUT NOT LIMITATION, PRINCETON UNIVERSITY MAKES NO REPRESENTATIONS
# OR WARRANTIES OF MERCHANT- ABILITY OR FITNESS FOR ANY PARTICULAR PURPOSE OR
# THAT THE USE OF THE LICENSED SOFTWARE, DATABASE OR DOCUMENTATION WILL NOT
# INFRINGE ANY THIRD PARTY PATENTS, COPYRIGHTS, TRADEMARKS OR OTHER RIGHTS.
# The name of Princeton University or Princeton may not be used in
# advertising or publicity pertaining to distribution of the software and/or
# database. Title to copyright in this software, database and any associated
# documentation shall at all times remain with Princeton University and
# LICENSEE agrees to preserve same.
`

func main() {
	index := flag.String("index", "/usr/share/wordnet/index.verb", "WordNet's verb index")
	flag.Parse()
	words, err := verbs(*index)
	if err != nil {
		fmt.Fprintln(os.Stderr, "wordnet-verbs:", err)
		os.Exit(1)
	}
	w := bufio.NewWriter(os.Stdout)
	w.WriteString(licence)
	for _, v := range words {
		w.WriteString(v)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "wordnet-verbs:", err)
		os.Exit(1)
	}
}

// verbs reads the one-word lemmas of a WordNet index file (lines that
// start with two spaces are its licence).
func verbs(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, " ") {
			continue
		}
		lemma, _, _ := strings.Cut(line, " ")
		if oneWord(lemma) {
			out = append(out, lemma)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no lemmas: not a WordNet index", path)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// oneWord: lower-case letters, and hyphens between them.
func oneWord(s string) bool {
	if s == "" || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, r := range s {
		if (r < 'a' || r > 'z') && r != '-' {
			return false
		}
	}
	return true
}
