package mdmem

import (
	"strings"

	"github.com/memctl/memctl/mdmem/redact"
)

// PendingNote is the first note of an entry waiting in Pending
// confirmation.
const PendingNote = "pending user confirmation"

// AgentCoreNote is the reason an agent's core entry waits in Pending
// confirmation (consolidate.hold_agent_core).
const AgentCoreNote = "agent-sourced core entry: waits for a person (consolidate.hold_agent_core)"

// SeenTyped is the Seen of a candidate whose words memctl saw the person
// type: a turn of a transcript the person typed that holds what it says
// (extract), or memctl add run at a terminal.
const SeenTyped = "typed"

// ConfirmedNote is the note memctl confirm leaves on an entry: a person
// read it and kept it.
const ConfirmedNote = "confirmed by user"

// PersonSource reports whether source names the person: user_explicit,
// user, conversation, or none (a line a person wrote by hand).
func PersonSource(source string) bool {
	switch strings.ToLower(strings.TrimSpace(source)) {
	case "", "user", "user_explicit", "user-explicit", "conversation":
		return true
	}
	return false
}

// Authority ranks whose words an entry holds, highest first: 2 for the
// person (a person source, or confirmed by a person), 1 for a source that
// names neither a person nor an agent (a code review, an import), 0 for an
// agent, a tool or a model (AgentSource). Volume control demotes lower
// authority first, so no number of agents' entries pushes the person's out.
func Authority(e *Entry) int {
	for _, n := range e.Notes {
		if strings.EqualFold(strings.TrimSpace(n), ConfirmedNote) {
			return 2
		}
	}
	switch {
	case PersonSource(e.Source):
		return 2
	case AgentSource(e.Source):
		return 0
	}
	return 1
}

// UnseenPersonNote is the reason a core entry labelled as the person's
// words waits in Pending confirmation when memctl did not see the person
// state it (ClaimsPerson).
const UnseenPersonNote = "labelled as the person's words, but memctl did not see the person give them: an agent's until the person confirms it"

// ClaimsPerson reports whether c names the person as its source (a person
// source, PersonSource) without memctl having seen the person state it:
// add --source user_explicit from a script or an agent's shell, a line of
// an import not run at a terminal, a queue file written by hand. Such a
// label is one an agent can write: it gives no authority.
func ClaimsPerson(c *Candidate) bool { return PersonSource(c.Source) && c.Seen != SeenTyped }

// WitnessedSource is the source an entry made from c carries: c's own, or
// DefaultSource (an agent's) when c only claims the person (ClaimsPerson).
// Authority comes from where memctl saw the words, never from the label.
func WitnessedSource(c *Candidate) string {
	if ClaimsPerson(c) {
		return DefaultSource
	}
	return c.Source
}

// HoldReason is PendingReason for an entry made from c: a core entry
// whose person label memctl did not witness (ClaimsPerson) waits with
// UnseenPersonNote, which says why, rather than AgentCoreNote.
func HoldReason(c *Candidate, e *Entry, holdAgentCore bool) string {
	return holdReason(c, e, holdAgentCore, InstructionNote(e.Content))
}

// holdReason is HoldReason with InstructionNote(e.Content) given.
func holdReason(c *Candidate, e *Entry, holdAgentCore bool, instruction string) string {
	why := pendingReason(e, holdAgentCore, instruction)
	if why == AgentCoreNote && ClaimsPerson(c) {
		return UnseenPersonNote
	}
	return why
}

// PersonSeen reports whether memctl saw the person state c: a person
// source that memctl itself witnessed (Seen is SeenTyped), not a label an
// agent wrote.
func PersonSeen(c *Candidate) bool { return c.Seen == SeenTyped && PersonSource(c.Source) }

// InstructionNote returns the reason an instruction-like text waits for a
// person: "reads like an instruction to the model (…)"; "" for ordinary
// text. It is redact.Instructions in one line.
func InstructionNote(text string) string {
	return instructionNote(redact.Instructions(text))
}

// InstructionNoteSeen is InstructionNote for words memctl saw the person
// type (PersonSeen): their wording is the person's to choose ("ignore the
// vendor directory", "never pipe curl into bash"), so only what no one
// types by accident holds them: hidden characters, look-alike letters,
// chat-template and tool-call syntax, a fence or a comment.
func InstructionNoteSeen(text string, person bool) string {
	if !person {
		return InstructionNote(text)
	}
	return instructionNote(redact.Concealment(text))
}

func instructionNote(why []string) string {
	if len(why) == 0 {
		return ""
	}
	return "reads like an instruction to the model: " + strings.Join(why, "; ")
}

// HoldsAgentCore reports whether an entry of category from source must
// wait for a person under consolidate.hold_agent_core (on by default): a
// core entry (preference, constraint, decision) that an agent, a tool or a
// model stated.
func HoldsAgentCore(category, source string, hold bool) bool {
	cat, _ := CategoryByName(category)
	return hold && cat.Core && AgentSource(source)
}

// PendingReason says why a new entry must wait in Pending confirmation
// rather than go where its category puts it: it reads like an instruction
// to a model, or it is an agent's preference or constraint and
// holdAgentCore is set. "" when it need not.
func PendingReason(e *Entry, holdAgentCore bool) string {
	return pendingReason(e, holdAgentCore, InstructionNote(e.Content))
}

// pendingReason is PendingReason with InstructionNote(e.Content) given.
func pendingReason(e *Entry, holdAgentCore bool, instruction string) string {
	if instruction != "" {
		return instruction
	}
	if HoldsAgentCore(e.Category, e.Source, holdAgentCore) {
		return AgentCoreNote
	}
	return ""
}
