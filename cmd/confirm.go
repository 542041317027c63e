package cmd

import (
	"context"
	"fmt"

	"github.com/memctl/memctl/consolidate"
	"github.com/memctl/memctl/mdmem"
	"github.com/spf13/cobra"
)

type confirmOptions struct {
	Text             string
	KeepOther        bool
	AllowInstruction bool
	AllowForgotten   bool
	JSON             bool
	Quiet            bool
}

func init() { register(newConfirmCmd) }

func newConfirmCmd(f *Factory) *cobra.Command {
	opts := &confirmOptions{}
	cmd := &cobra.Command{
		Use:   "confirm <id>",
		Short: "Keep a pending entry and move it to its section",
		Long: `Confirm keeps an entry of "## Pending confirmation" as stated (or as --text
says) and moves it to its section: a core subsection, or a topic file for
other categories. An entry it was in conflict with moves to the archive,
superseded by it, unless --keep-other. One commit.

--text is checked like a candidate: secrets are redacted (or the text
refused, by add.secrets), and a text that reads like an instruction to the
model ("ignore previous instructions", chat-template tokens, hidden
Unicode, …) is refused unless --allow-instruction; a text that repeats an
entry memctl forget deleted is refused unless --allow-forgotten.`,
		Example: `  memctl confirm dec-015
  memctl confirm todo-002 --text "The production database runs MySQL 8.0"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !mdmem.IsValidID(args[0]) {
				return FlagErrorf("invalid entry id %q (want e.g. dec-014)", args[0])
			}
			return runConfirm(cmd.Context(), f, args[0], opts)
		},
	}
	cmd.Flags().StringVar(&opts.Text, "text", "", "store this text instead of the pending wording")
	cmd.Flags().BoolVar(&opts.KeepOther, "keep-other", false, "keep the entry it conflicted with instead of archiving it")
	cmd.Flags().BoolVar(&opts.AllowInstruction, "allow-instruction", false, "store a --text that reads like an instruction to the model")
	cmd.Flags().BoolVar(&opts.AllowForgotten, "allow-forgotten", false, "store a --text that repeats an entry memctl forget deleted")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	cmd.Flags().BoolVarP(&opts.Quiet, "quiet", "q", false, "print nothing on stdout (warnings still go to stderr)")
	return cmd
}

func runConfirm(ctx context.Context, f *Factory, id string, opts *confirmOptions) error {
	s, err := f.Store(ctx, "add", "git", "files")
	if err != nil {
		return err
	}
	if why := mdmem.InstructionNote(opts.Text); why != "" && !opts.AllowInstruction {
		return &HintError{Err: fmt.Errorf("--text %s; nothing confirmed", why),
			Hint: "reword it as a fact, confirm the pending wording without --text, or pass --allow-instruction"}
	}
	if opts.Text != "" && !opts.AllowForgotten {
		ts, err := s.LoadTombstones()
		if err != nil {
			return err
		}
		if err := ts.Check(opts.Text); err != nil {
			return &HintError{Err: fmt.Errorf("--text: %w; nothing confirmed", err),
				Hint: "confirm the pending wording without --text, or pass --allow-forgotten to bring the text back on purpose"}
		}
	}
	r, err := consolidate.Confirm(ctx, s, id, opts.Text, opts.KeepOther, f.Now())
	if err != nil {
		return err
	}
	return printResolution(f, r, opts.JSON, opts.Quiet)
}

func printResolution(f *Factory, r *consolidate.Resolution, asJSON, quiet bool) error {
	printHandEdits(f, r.HandEdit)
	if asJSON {
		return f.printJSON(r)
	}
	if quiet {
		return nil
	}
	fmt.Fprintf(f.IO.Out, "%s %s → %s", r.Action, r.ID, r.Place)
	for _, a := range r.Archived {
		fmt.Fprintf(f.IO.Out, "; archived %s", a)
	}
	fmt.Fprintln(f.IO.Out)
	return nil
}
