package cmd

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/memctl/memctl/mdmem"
	"github.com/spf13/cobra"
)

type syncOptions struct {
	NoPush       bool
	AdoptRemote  bool
	PublishPurge bool
	InstallMerge bool
	Machine      string
	JSON         bool
}

func init() { register(newSyncCmd) }

func newSyncCmd(f *Factory) *cobra.Command {
	opts := &syncOptions{}
	cmd := &cobra.Command{
		Use:   "sync [remote]",
		Short: "Share the memory with other machines through a git remote",
		Long: `Sync fetches the memory's branch from a git remote, takes what the other
machines committed, and pushes what this one did, so every machine ends
with the same files. The remote is the argument, else the branch's
upstream, else origin; it is reached with the git command (ssh, https and
credential helpers as you use them), never interactively.

When both sides changed the memory, sync merges them entry by entry and
commits the merge with both parents: entries added on either side are
kept; an entry edited on one side takes the edit; one edited differently
on both keeps the newer edit and puts the other in Pending confirmation
(memctl pending) under a new id; an entry forgotten on either side is gone
on both, and its text is not brought back. The merge is the same whichever
machine makes it. Nothing is pushed with force, and a remote whose history
was rewritten is refused. The queue, caches, traces and the tombstone key
never leave the machine, and a commit that would publish a secret stops
the push.

Every other command works offline; only sync talks to the remote.
See docs/SYNC.md.`,
		Example: `  git -C ~/agent-memory remote add origin git@github.com:me/agent-memory.git
  memctl sync
  memctl sync backup --json
  memctl consolidate && memctl sync     # in cron
  memctl sync --install-merge-driver    # your own git pull merges memory files entry by entry`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			remote := ""
			if len(args) == 1 {
				remote = args[0]
			}
			return runSync(cmd.Context(), f, remote, opts)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.NoPush, "no-push", false, "fetch and merge only; push nothing")
	fl.BoolVar(&opts.AdoptRemote, "adopt-remote", false, "merge with a remote branch that shares no history with this memory (two separate inits)")
	fl.BoolVar(&opts.PublishPurge, "publish-purge", false, "after forget --purge-history: replace the remote's history with this one (leased: refused if anyone pushed since)")
	fl.BoolVar(&opts.InstallMerge, "install-merge-driver", false, "register memctl as git's merge driver for memory files in this clone (your own git pull then merges entry by entry), and sync nothing")
	fl.StringVar(&opts.Machine, "machine", "", "this machine's name in merge commits (default: the host name)")
	fl.BoolVar(&opts.JSON, "json", false, "print what sync did as JSON")
	return cmd
}

func runSync(ctx context.Context, f *Factory, remote string, opts *syncOptions) error {
	s, err := f.Store(ctx, "git")
	if err != nil {
		return err
	}
	if opts.InstallMerge {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		attrs, err := s.InstallMergeDriver(ctx, exe)
		if err != nil {
			return err
		}
		fmt.Fprintf(f.IO.Out, "git merges memory files with memctl in this clone (merge.memctl.driver; paths in %s)\n", attrs)
		return nil
	}
	res, err := s.Sync(ctx, mdmem.SyncOptions{Remote: remote, NoPush: opts.NoPush, AdoptRemote: opts.AdoptRemote, PublishPurge: opts.PublishPurge, Machine: opts.Machine})
	if err != nil {
		return err
	}
	if opts.JSON {
		if err := f.printJSON(res); err != nil {
			return err
		}
	} else {
		printSync(f, res)
	}
	if res.Merge != nil && len(res.Merge.Conflicts) > 0 {
		return &ExitError{Code: ExitConflicts}
	}
	return nil
}

func printSync(f *Factory, res *mdmem.SyncResult) {
	out := f.IO.Out
	where := res.Remote + "/" + res.Branch
	switch res.Action {
	case "up-to-date":
		fmt.Fprintf(out, "in sync with %s at %.12s\n", where, res.Head)
	case "pushed":
		fmt.Fprintf(out, "pushed %.12s to %s\n", res.Head, where)
	case "fast-forward":
		fmt.Fprintf(out, "took %s's commits: now at %.12s\n", where, res.Head)
	case "took-purge":
		fmt.Fprintf(out, "took the purged history another machine published to %s: now at %.12s; the old commits are gone from this copy\n", where, res.Head)
	case "published-purge":
		fmt.Fprintf(out, "published the purged history to %s at %.12s: a clone with nothing of its own since takes it on its next sync; others must be re-cloned (docs/SYNC.md)\n", where, res.Head)
	case "merged":
		fmt.Fprintf(out, "merged %s: %.12s", where, res.Head)
		if res.Pushed {
			fmt.Fprint(out, ", pushed")
		}
		fmt.Fprintln(out)
	}
	if m := res.Merge; m != nil {
		for _, c := range m.Conflicts {
			fmt.Fprintf(f.IO.ErrOut, "memctl: %s was edited differently on both machines: the newer edit stays; the other waits in Pending as %s (memctl confirm %s or memctl reject %s)\n", c.ID, c.Pending, c.Pending, c.Pending)
		}
		for _, r := range m.Renamed {
			fmt.Fprintf(out, "renamed: both machines used %s for different entries; one of them is now %s\n", r.From, r.To)
		}
		if len(m.Kept) > 0 {
			fmt.Fprintf(out, "kept %s: edited on one machine, deleted by hand on the other (memctl forget removes for good)\n", strings.Join(m.Kept, ", "))
		}
		if len(m.Forgotten) > 0 {
			fmt.Fprintf(out, "forgotten on the other machine, removed here too: %s\n", strings.Join(m.Forgotten, ", "))
		}
		if len(m.Dropped) > 0 {
			fmt.Fprintf(out, "not taken (their text was forgotten): %s\n", strings.Join(m.Dropped, ", "))
		}
		for _, p := range m.Prose {
			fmt.Fprintf(f.IO.ErrOut, "memctl: both machines rewrote the text at %s differently; the earlier text stays (see git log -p)\n", p)
		}
	}
}
