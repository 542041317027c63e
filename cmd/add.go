package cmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/memctl/memctl/mdmem"
	"github.com/spf13/cobra"
)

func init() { register(newAddCmd) }

type addOptions struct {
	Content    string
	Category   string
	Source     string
	Scope      []string
	Refs       []string
	Tags       []string
	Topic      string
	Confidence float64
	HasConf    bool
	StdinJSON  bool // JSON Lines candidates on stdin (--stdin-json, "-", or the deprecated --json alone)
	JSON       bool // print the result as JSON
	Allow      bool
	Expires    string
}

// maxJSONLine caps one line of `add --json` / `import` input.
const maxJSONLine = 1 << 20

func newAddCmd(f *Factory) *cobra.Command {
	opts := &addOptions{}
	cmd := &cobra.Command{
		Use:   "add [content | -]",
		Short: "Queue a candidate memory for the next consolidation",
		Long: `Add queues candidate memories in .memctl/queue/, one file each, for
memctl consolidate to merge into the memory. It never touches MEMORY.md and
takes no lock, so any number of agents can add at once.

With - as the content (or --stdin-json), candidates are read from
standard input as JSON Lines, one object per line and nothing after it:
{"content", "category", "source",
"created_at", "updated_at", "scope", "confidence", "refs", "topic",
"tags"}. Input must be UTF-8 (a leading byte order mark is ignored); other
fields, "id" and "queued_at" included, are refused; dates may not lie more
than a day ahead nor before 1970. Lines that are not valid are reported
with their line number; the valid ones are queued (see docs/FORMAT.md).

--scope takes one or more scopes, comma-separated or repeated; an empty
--scope (an unset variable) or a malformed one (white space, "project:") is
an error, never a global entry; project:. is the git project of the current
directory (project:<its full path>, the home directory as ~:
project:~/work/app). add reads
only the [add] section of config.toml: a mistake elsewhere does not stop it.

Categories: preference, constraint, decision (core profile), fact, incident,
lesson, note, todo (topic files). The candidate ids are printed, one a line;
with --json, as {"candidate_ids": […], "invalid": N} (docs/JSON.md).
--json alone, without content, - or --stdin-json, still reads JSON Lines
from stdin as it used to, with a deprecation warning.

The source defaults to "agent": pass --source user_explicit only for what
the person stated. The label alone gives no authority: a user_explicit
candidate counts as the person's words only when add runs at a terminal
(stdin is one) with the content as an argument. From a script, an agent's
shell or JSON Lines on stdin it counts as an agent's: its wording is judged
as anyone's, and a preference, constraint or decision waits in Pending
confirmation until the person runs memctl confirm <id> (the way a person's
own script asserts it: memctl pending lists what waits). Secrets (API keys, tokens, private keys, passwords,
card and id numbers) are replaced by [REDACTED:<kind>] before the queue
file is written, or the candidate is refused with add.secrets = "refuse"
(docs/GOVERNANCE.md); queue files are private to the user (0600).`,
		Example: `  memctl add "Example code uses Python 3.11" --category preference --source user_explicit
  memctl add "Order cache is Redis plus a local cache" -c decision --scope project:order-service --ref session:2026-01-08
  echo '{"content":"Order cache is Redis plus a local cache","category":"decision"}' | memctl add -
  memctl add "Deploys need a change ticket" -c constraint --json | jq -r '.candidate_ids[0]'`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 1 && args[0] == "-":
				opts.StdinJSON = true
			case len(args) == 1:
				opts.Content = args[0]
			}
			if opts.StdinJSON && opts.Content != "" {
				return FlagErrorf("give the content as an argument, or - (--stdin-json) with JSON Lines on stdin, not both")
			}
			if opts.JSON && !opts.StdinJSON && len(args) == 0 {
				// The old spelling: --json meant JSON input.
				fmt.Fprintln(f.IO.ErrOut, "memctl: warning: add --json to read JSON Lines from stdin is deprecated; use `memctl add -` or --stdin-json (with those, --json prints the result as JSON)")
				opts.StdinJSON, opts.JSON = true, false
			}
			if _, ok := mdmem.CategoryByName(opts.Category); !ok {
				return FlagErrorf("invalid --category %q: want one of %s", opts.Category, strings.Join(mdmem.CategoryNames(), ", "))
			}
			opts.HasConf = cmd.Flags().Changed("confidence")
			if !opts.StdinJSON && opts.Content == "" {
				return FlagErrorf("give the content as an argument, or - (--stdin-json) with JSON Lines on stdin")
			}
			return runAdd(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Category, "category", "c", "note", "category: "+strings.Join(mdmem.CategoryNames(), ", "))
	fl.StringVarP(&opts.Source, "source", "s", mdmem.DefaultSource, "where it came from: agent (default), user_explicit (only when the person said it), inference, session_summary, tool, …")
	fl.StringArrayVar(&opts.Scope, "scope", nil, "scope, e.g. project:order-service (repeatable or comma-separated; none = global; empty is an error)")
	fl.StringSliceVar(&opts.Refs, "ref", nil, "reference: session id, dialog turn, file, URL (repeatable)")
	fl.StringSliceVar(&opts.Tags, "tag", nil, "label for retrieval (repeatable)")
	fl.StringVar(&opts.Topic, "topic", "", "topic file to keep it in (topics/<topic>.md)")
	fl.Float64Var(&opts.Confidence, "confidence", 0, "confidence in [0,1]")
	fl.BoolVar(&opts.StdinJSON, "stdin-json", false, "read JSON Lines candidates from stdin (as content -)")
	fl.BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	fl.StringVar(&opts.Expires, "expires", "", "when it stops being true: a date (2026-06-30) or a time from now (90d, 12w, 36h); consolidate then archives it")
	fl.BoolVar(&opts.Allow, "allow-forgotten", false, "queue it even if it repeats an entry memctl forget deleted")
	return cmd
}

func runAdd(ctx context.Context, f *Factory, opts *addOptions) error {
	s, err := f.Store(ctx, "add")
	if err != nil {
		return err
	}
	now := f.Now()
	maxBytes := s.Config.Add.MaxContentBytes
	check, err := forgottenCheck(s, opts.Allow)
	if err != nil {
		return err
	}
	if !opts.StdinJSON {
		c := &mdmem.Candidate{Content: opts.Content, Category: opts.Category, Source: opts.Source,
			Scope: opts.Scope, Refs: opts.Refs, Tags: opts.Tags, Topic: opts.Topic}
		if opts.HasConf {
			c.Confidence = &opts.Confidence
		}
		unseen := witness(c, f.IO.InTTY) // a person at a terminal typed it
		if opts.Expires != "" {
			t, err := mdmem.ParseExpires(opts.Expires, now)
			if err != nil {
				return &FlagError{Err: fmt.Errorf("--expires %q: %w", opts.Expires, err)}
			}
			c.ExpiresAt = t
		}
		if err := c.Normalize(now, maxBytes, s.Config.Add.Redactor()); err != nil {
			return fmt.Errorf("candidate not queued: %w", err)
		}
		if err := check(c); err != nil {
			return &HintError{Err: fmt.Errorf("candidate not queued: %w", err), Hint: "pass --allow-forgotten to add it again anyway"}
		}
		if strings.Contains(c.Content, "[REDACTED:") && !strings.Contains(opts.Content, "[REDACTED:") {
			fmt.Fprintln(f.IO.ErrOut, "memctl: note: secrets were replaced by [REDACTED:<kind>] before queueing (add.secrets = \"refuse\" refuses them instead)")
		}
		if why := mdmem.InstructionNote(c.Content); why != "" {
			fmt.Fprintf(f.IO.ErrOut, "memctl: note: it %s; it will wait in Pending confirmation for a person\n", why)
		}
		ids, err := mdmem.Enqueue(ctx, s.Dir, []*mdmem.Candidate{c}, now)
		if err != nil {
			return err
		}
		noteUnseen(f, unseen)
		return printQueued(f, opts, ids, 0)
	}
	cands, bad, err := readCandidates(ctx, f, maxBytes, s.Config.Add.Redactor(), check)
	if err != nil {
		return err
	}
	unseen := 0
	for _, c := range cands {
		unseen += witness(c, false) // JSON Lines on stdin: no one typed them here
	}
	ids, err := mdmem.Enqueue(ctx, s.Dir, cands, now)
	if err == nil {
		noteUnseen(f, unseen)
	}
	if perr := printQueued(f, opts, ids, bad); perr != nil && err == nil {
		err = perr
	}
	if err != nil {
		return fmt.Errorf("queued %d of %d valid candidates, then: %w", len(ids), len(cands), err)
	}
	if bad > 0 {
		fmt.Fprintf(f.IO.ErrOut, "memctl: queued %d %s; %d %s rejected (nothing else was written)\n",
			len(ids), pluralize(len(ids), "candidate", "candidates"), bad, pluralize(bad, "line", "lines"))
		return &ExitError{Code: ExitFailure}
	}
	return nil
}

// printQueued prints the ids of the queued candidates, one a line or as
// JSON with the number of invalid lines.
func printQueued(f *Factory, opts *addOptions, ids []string, invalid int) error {
	if opts.JSON {
		return f.printJSON(struct {
			CandidateIDs []string `json:"candidate_ids"`
			Invalid      int      `json:"invalid"`
		}{ids, invalid})
	}
	for _, id := range ids {
		fmt.Fprintln(f.IO.Out, id)
	}
	return nil
}

// readCandidates reads and normalises JSON Lines from stdin, reporting each
// bad line on stderr. It returns the valid candidates and the number of bad
// lines.
func readCandidates(ctx context.Context, f *Factory, maxBytes int, r mdmem.Redactor, check func(*mdmem.Candidate) error) ([]*mdmem.Candidate, int, error) {
	var cands []*mdmem.Candidate
	bad, err := eachCandidate(ctx, f, maxBytes, r, check, func(c *mdmem.Candidate) error {
		cands = append(cands, c)
		return nil
	})
	return cands, bad, err
}

// eachCandidate reads and normalises JSON Lines from stdin one at a time,
// running every text field through r (the secrets policy), reporting each
// bad line (check refuses it, too) on stderr and passing each valid
// candidate to fn. It returns the number of bad lines. Lines are decoded
// and normalised on every core, then checked and passed on in order.
func eachCandidate(ctx context.Context, f *Factory, maxBytes int, r mdmem.Redactor, check, fn func(*mdmem.Candidate) error) (int, error) {
	bad := 0
	t := f.Now()
	normalize := func(c *mdmem.Candidate) error { return c.Normalize(t, maxBytes, r) }
	err := mdmem.DecodeJSONLinesParallel(ctx, f.IO.In, maxJSONLine, normalize, func(line int, c *mdmem.Candidate, err error) error {
		if err == nil {
			err = check(c)
		}
		if err != nil {
			bad++
			fmt.Fprintf(f.IO.ErrOut, "memctl: line %d: %v\n", line, err)
			return nil
		}
		return fn(c)
	})
	return bad, err
}

// witness marks c as the person's words (Seen) when memctl runs at a
// terminal (person) and c names the person as its source. It returns 1
// for a core candidate whose person label memctl did not witness
// (mdmem.ClaimsPerson), which waits in Pending confirmation, else 0.
func witness(c *mdmem.Candidate, person bool) int {
	if !mdmem.PersonSource(c.Source) {
		return 0
	}
	if person {
		c.Seen = mdmem.SeenTyped
		return 0
	}
	if cat, _ := mdmem.CategoryByName(c.Category); cat.Core {
		return 1
	}
	return 0
}

// noteUnseen says that n core candidates labelled as the person's will
// wait for a person, and how the person confirms them.
func noteUnseen(f *Factory, n int) {
	if n == 0 {
		return
	}
	fmt.Fprintf(f.IO.ErrOut, "memctl: note: not run at a terminal, so the person's label on %d core %s counts as an agent's: %s in Pending confirmation until the person runs memctl confirm <id> (memctl pending lists them)\n",
		n, pluralize(n, "candidate", "candidates"), pluralize(n, "it waits", "they wait"))
}

func pluralize(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// forgottenCheck returns the tombstone check of add and import: an error
// for a candidate repeating a forgotten entry, unless allow (which marks
// the candidate, so consolidation keeps it too).
func forgottenCheck(s *mdmem.Store, allow bool) (func(*mdmem.Candidate) error, error) {
	ts, err := s.LoadTombstones()
	if err != nil {
		return nil, &HintError{Err: err, Hint: "tombstones are checked before anything is added; copy the key, or ask the person who forgot the entries"}
	}
	return func(c *mdmem.Candidate) error {
		if allow {
			c.AllowForgotten = true
			return nil
		}
		if err := ts.Check(c.Content); err != nil {
			return fmt.Errorf("%w (--allow-forgotten)", err)
		}
		return nil
	}, nil
}
