package cmd

import (
	"fmt"

	"github.com/memctl/memctl/mdmem"
)

// printHandEdits tells the user on stderr what committing their edits did:
// stray files ignored, deleted entries restored or kept deleted, duplicate
// ids renumbered. A line is printed once even if several reports hold it.
// A hand edit that holds a secret is warned about, by file, line and
// kind (never the secret): it is committed, so the person must edit it
// out and purge it from history.
func printHandEdits(f *Factory, reps ...*mdmem.HandEdit) {
	seen := map[string]bool{}
	for _, he := range reps {
		if he != nil && he.Commit != "" {
			warnHandEditSecrets(f, he)
		}
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

// warnHandEditSecrets prints one warning per line of the hand edit's
// files that holds a secret.
func warnHandEditSecrets(f *Factory, he *mdmem.HandEdit) {
	dir, err := f.MemoryDir()
	if err != nil {
		return
	}
	found, err := mdmem.SecretLines(dir, he.Files)
	if err != nil {
		fmt.Fprintf(f.IO.ErrOut, "memctl: warning: could not scan the hand edit for secrets: %v\n", err)
	}
	for _, s := range found {
		fmt.Fprintf(f.IO.ErrOut, "memctl: warning: %s:%d holds a secret (%s), committed with your hand edit %.12s: edit it out, then purge it from history (memctl forget <id> --purge-history)\n", s.File, s.Line, s.Kind, he.Commit)
	}
}
