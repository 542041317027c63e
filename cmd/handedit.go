package cmd

import (
	"fmt"

	"github.com/memctl/memctl/mdmem"
)

// printHandEdits tells the user on stderr what committing their edits did:
// stray files ignored, deleted entries restored or kept deleted, duplicate
// ids renumbered. A line is printed once even if several reports hold it.
// (A hand edit that would commit a secret is refused before its commit:
// mdmem.HandEditSecretError.)
func printHandEdits(f *Factory, reps ...*mdmem.HandEdit) {
	seen := map[string]bool{}
	for _, he := range reps {
		for _, n := range he.Notes() {
			if !seen[n] {
				seen[n] = true
				fmt.Fprintf(f.IO.ErrOut, "memctl: %s\n", n)
			}
		}
	}
}

// allowDeleteUsage is the help of --allow-delete.
const allowDeleteUsage = "keep entries deleted by hand deleted (default: restore them into the archive; config git.allow_hand_delete)"
