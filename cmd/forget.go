package cmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/memctl/memctl/mdmem"
	"github.com/spf13/cobra"
)

type forgetOptions struct {
	Reason string
	Match  string
	Many   bool
	Yes    bool
	JSON   bool
	Quiet  bool
	Purge  bool
	// asked are the ids given or matched, before forget added the ones
	// holding the same text and the ones they superseded.
	asked []string
}

func init() { register(newForgetCmd) }

func newForgetCmd(f *Factory) *cobra.Command {
	opts := &forgetOptions{}
	cmd := &cobra.Command{
		Use:   "forget <id>... | --match TEXT",
		Short: "Delete entries for good, leaving a tombstone so they do not come back",
		Long: `Forget deletes entries from MEMORY.md (core profile, pending confirmation,
archive) and topic files in one commit whose message names the ids and the
reason, never the content. It leaves a tombstone per entry in
.memctl/tombstones.jsonl: the id and a keyed hash of the normalised text
(the key stays in the git directory and is never committed), never the
text. add, import and consolidate refuse or drop a text that repeats a
forgotten one unless given --allow-forgotten. Queued candidates holding the
text, the ids in the inject log and cache files holding the text are
removed too. Every other byte of the memory stays as it was; ids are never
reused.

--match TEXT lists the entries whose text holds TEXT as whole words (case,
width, punctuation and look-alike letters do not matter) and asks before
forgetting them; --yes skips the question, --json prints the matches (and,
with --yes, the result). More than 10 matches are refused unless
--all-matches is given too.

Forgetting an entry also forgets the entries it superseded (the archived
earlier values of the same memory, and theirs), and lists them. Neither
an error nor the commit repeats an argument that holds a secret: a
--reason holding one is refused.

The text stays in earlier commits of git history. --purge-history rewrites
the history of the branch so that no commit holds it (see README, "Forget
for real").`,
		Example: `  memctl forget pref-001 --reason "wrong"
  memctl forget --match "bank card"
  memctl forget --match "bank card" --yes --reason "PII"
  memctl forget pref-001 --purge-history`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if (len(args) > 0) == (opts.Match != "") {
				if opts.Match == "" && cmd.Flags().Changed("match") {
					return FlagErrorf("--match is empty: give the text to look for")
				}
				return FlagErrorf("give entry ids, or --match TEXT (not both)")
			}
			for _, id := range args {
				if !mdmem.IsValidID(id) {
					return FlagErrorf("invalid entry id %q (want e.g. dec-014)", id)
				}
			}
			return runForget(cmd.Context(), f, args, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Reason, "reason", "m", "", "why (one line, at most 1000 bytes; goes into the commit message: do not repeat the content)")
	fl.StringVar(&opts.Match, "match", "", "forget the entries whose text contains this text (asks first)")
	fl.BoolVarP(&opts.Yes, "yes", "y", false, "do not ask before forgetting --match results")
	fl.BoolVar(&opts.Many, "all-matches", false, fmt.Sprintf("forget --match results even when there are more than %d", maxMatchForget))
	fl.BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	fl.BoolVarP(&opts.Quiet, "quiet", "q", false, "print nothing on stdout (warnings still go to stderr)")
	fl.BoolVar(&opts.Purge, "purge-history", false, "also rewrite git history so no commit holds the text (refuses on a dirty worktree)")
	return cmd
}

// maxMatchForget is the most entries --match forgets without
// --all-matches: a short pattern ("a") must not forget the memory.
const maxMatchForget = 10

// runForget forgets the entries of ids (or those --match finds), purges
// their history with --purge-history, and reports it.
func runForget(ctx context.Context, f *Factory, ids []string, opts *forgetOptions) error {
	if kinds := secretKinds(opts.Reason); kinds != "" {
		return FlagErrorf("--reason holds a secret (%s); it would go into the commit message: give a reason without it (nothing was forgotten)", kinds)
	}
	s, err := f.Store(ctx, "git")
	if err != nil {
		return err
	}
	if opts.Match != "" {
		var listed bool
		if ids, listed, err = matchForget(ctx, f, s, ids, opts); err != nil || listed {
			return err
		}
	}
	if opts.Purge {
		if err := mdmem.CheckPurgeable(ctx, s); err != nil {
			return &HintError{Err: err, Hint: "nothing was forgotten; --purge-history rewrites commits and needs a clean worktree"}
		}
	}
	opts.asked = ids
	res, err := mdmem.Forget(ctx, s, ids, opts.Reason, mdmem.ForgetOptions{Purge: opts.Purge})
	if opts.Purge && errors.Is(err, mdmem.ErrNoEntry) {
		return purgeForgotten(ctx, f, s, ids, opts, err)
	}
	if res != nil {
		printHandEdits(f, res.HandEdit)
	}
	var pe *mdmem.PurgeError
	switch {
	case errors.As(err, &pe) && errors.Is(err, mdmem.ErrForeignRefs):
		return &HintError{Err: err, Hint: "for a remote: force-push the branch after the purge, or delete the ref (git update-ref -d REF) if that copy is handled elsewhere; for the stash: git stash drop; then run memctl forget " + strings.Join(pe.IDs, " ") + " --purge-history to finish the purge"}
	case errors.As(err, &pe):
		return &HintError{Err: err, Hint: "the forget took effect; run memctl forget " + strings.Join(pe.IDs, " ") + " --purge-history to finish the purge"}
	case errors.Is(err, mdmem.ErrTombstoneKey):
		return &HintError{Err: err, Hint: "the key is " + mdmem.TombstoneKeyName + " in the git directory of the memory the tombstones come from"}
	case err != nil:
		return err
	}
	purge := res.Purge
	return printForget(f, res, purge, opts)
}

// matchForget adds to ids the entries whose text contains --match, once
// the person confirmed (or --yes). listed is true when it printed the
// matches as JSON instead (--json without --yes): nothing is forgotten.
func matchForget(ctx context.Context, f *Factory, s *mdmem.Store, ids []string, opts *forgetOptions) (_ []string, listed bool, err error) {
	m, err := s.Load(ctx)
	if err != nil {
		return nil, false, err
	}
	found := mdmem.MatchEntries(m, opts.Match)
	shown := safeArg(opts.Match)
	if len(found) == 0 {
		return nil, false, &HintError{Err: fmt.Errorf("no entry holds %q as words; nothing was forgotten", shown),
			Hint: "memctl search TEXT finds entries by words"}
	}
	if len(found) > maxMatchForget && !opts.Many {
		return nil, false, &HintError{Err: fmt.Errorf("%d entries hold %q, more than %d; nothing was forgotten", len(found), shown, maxMatchForget),
			Hint: "give a longer text, forget by id, or pass --all-matches to forget them all"}
	}
	if opts.JSON && !opts.Yes {
		type match struct {
			ID      string `json:"id"`
			File    string `json:"file"`
			Line    int    `json:"line"`
			Place   string `json:"place"`
			Content string `json:"content"`
		}
		out := make([]match, 0, len(found))
		for _, e := range found {
			out = append(out, match{e.ID, e.File, e.Line, string(e.Place), e.Content})
		}
		return nil, true, f.printJSON(struct {
			Matches []match `json:"matches"`
			Note    string  `json:"note"`
		}{out, "nothing forgotten: pass --yes to forget these"})
	}
	w := f.IO.ErrOut
	fmt.Fprintf(w, "%d %s %s %q:\n", len(found), pluralize(len(found), "entry", "entries"), pluralize(len(found), "holds", "hold"), shown)
	for _, e := range found {
		fmt.Fprintf(w, "  %-10s %s:%d  %s\n", e.ID, e.File, e.Line, e.Content)
		ids = append(ids, e.ID)
	}
	if !opts.Yes {
		fmt.Fprintf(w, "Forget %s? [y/N] ", pluralize(len(found), "it", "them"))
		line, _ := bufio.NewReader(f.IO.In).ReadString('\n')
		fmt.Fprintln(w)
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			return nil, false, &HintError{Err: errors.New("not confirmed; nothing was forgotten"), Hint: "answer y, or pass --yes"}
		}
	}
	return ids, false, nil
}

// purgeForgotten purges the history of ids forgotten earlier without
// --purge-history (forgetErr says they are not in the memory any more).
func purgeForgotten(ctx context.Context, f *Factory, s *mdmem.Store, ids []string, opts *forgetOptions, forgetErr error) error {
	purge, perr := mdmem.PurgeHistory(ctx, s, ids, nil)
	if perr != nil {
		return fmt.Errorf("%w (and purging history as a forgotten id: %v)", forgetErr, perr)
	}
	if opts.JSON {
		return f.printJSON(struct {
			Purge *mdmem.PurgeResult `json:"purge"`
		}{purge})
	}
	printPurge(f, purge)
	return nil
}

// printForget prints what a forget (and its purge, if any) did: JSON,
// only the note on remotes with --quiet, or a summary.
func printForget(f *Factory, res *mdmem.ForgetResult, purge *mdmem.PurgeResult, opts *forgetOptions) error {
	if opts.JSON {
		return f.printJSON(struct {
			*mdmem.ForgetResult
			Purge *mdmem.PurgeResult `json:"purge,omitempty"`
		}{res, purge})
	}
	if opts.Quiet {
		if purge != nil {
			fmt.Fprintln(f.IO.ErrOut, "memctl: note: history is purged here only; remotes, clones and backups still hold the text (run without -q for the list)")
		}
		return nil
	}
	fmt.Fprintf(f.IO.Out, "forgot %s (commit %s)\n", strings.Join(res.IDs, ", "), short(res.Commit))
	if len(res.SameText) > 0 {
		fmt.Fprintf(f.IO.Out, "%s held the same text and went too\n", strings.Join(res.SameText, ", "))
	}
	if pred := predecessors(res, opts.asked); len(pred) > 0 {
		fmt.Fprintf(f.IO.Out, "%s, superseded by %s, went too\n", strings.Join(pred, ", "), pluralize(len(pred), "it", "them"))
	}
	if len(res.Queue) > 0 {
		fmt.Fprintf(f.IO.Out, "removed %d queued %s holding the text\n", len(res.Queue), pluralize(len(res.Queue), "candidate", "candidates"))
	}
	if len(res.Traces) > 0 {
		fmt.Fprintf(f.IO.Out, "replaced the text with [forgotten] in %s\n", strings.Join(res.Traces, ", "))
	}
	if len(res.Caches) > 0 {
		fmt.Fprintf(f.IO.Out, "cleaned %s\n", strings.Join(res.Caches, ", "))
	}
	if purge != nil {
		printPurge(f, purge)
	} else {
		fmt.Fprintln(f.IO.Out, "earlier commits still hold the text: run again with --purge-history to rewrite them (see README)")
	}
	return nil
}

func printPurge(f *Factory, p *mdmem.PurgeResult) {
	w := f.IO.Out
	fmt.Fprintf(w, "history purged: %d %s rewritten, %d %s of the text removed; reflogs expired, unreachable objects deleted\n",
		p.Commits, pluralize(p.Commits, "commit", "commits"), p.Versions, pluralize(p.Versions, "version", "versions"))
	refs := make([]string, 0, len(p.Refs))
	for ref := range p.Refs {
		refs = append(refs, ref)
	}
	sort.Strings(refs)
	for _, ref := range refs {
		fmt.Fprintf(w, "  %s → %s\n", ref, short(p.Refs[ref]))
	}
	if p.Unsigned > 0 {
		fmt.Fprintf(w, "  %d rewritten %s lost %s signature (it covered the old bytes)\n", p.Unsigned, pluralize(p.Unsigned, "commit", "commits"), pluralize(p.Unsigned, "its", "their"))
	}
	fmt.Fprintf(w, "verified: none of the %d objects in .git holds the text\n", p.Objects)
	fmt.Fprintln(w, "not reached (do these yourself):")
	for _, c := range p.CannotReach {
		fmt.Fprintf(w, "  - %s\n", c)
	}
}

// predecessors are the ids a forget took because an entry it forgot had
// superseded them: neither asked for nor holding the same text.
func predecessors(res *mdmem.ForgetResult, asked []string) []string {
	skip := map[string]bool{}
	for _, id := range append(append([]string{}, asked...), res.SameText...) {
		skip[id] = true
	}
	var out []string
	for _, id := range res.IDs {
		if !skip[id] {
			out = append(out, id)
		}
	}
	return out
}

// secretKinds names the kinds of secret in s, comma-separated; "" when it
// holds none.
func secretKinds(s string) string {
	return strings.Join(mdmem.SecretKinds(s), ", ")
}

// safeArg is an argument as an error or a listing may repeat it: a secret
// in it redacted.
func safeArg(s string) string { return mdmem.RedactText(s) }
