package mdmem

import (
	"strings"

	"github.com/memctl/memctl/mdmem/redact"
)

// PendingNote is the first note of an entry waiting in Pending
// confirmation.
const PendingNote = "pending user confirmation"

// AgentCoreNote is the reason an agent's preference or constraint waits in
// Pending confirmation (consolidate.hold_agent_core).
const AgentCoreNote = "agent-sourced preference or constraint: waits for a person (consolidate.hold_agent_core)"

// InstructionNote returns the reason an instruction-like text waits for a
// person: "reads like an instruction to the model (…)"; "" for ordinary
// text. It is redact.Instructions in one line.
func InstructionNote(text string) string {
	why := redact.Instructions(text)
	if len(why) == 0 {
		return ""
	}
	return "reads like an instruction to the model: " + strings.Join(why, "; ")
}

// HoldsAgentCore reports whether an entry of category from source must
// wait for a person under consolidate.hold_agent_core: a preference or a
// constraint that an agent, not a person, stated.
func HoldsAgentCore(category, source string, hold bool) bool {
	return hold && (category == "preference" || category == "constraint") && AgentSource(source)
}

// PendingReason says why a new entry must wait in Pending confirmation
// rather than go where its category puts it: it reads like an instruction
// to a model, or it is an agent's preference or constraint and
// holdAgentCore is set. "" when it need not.
func PendingReason(e *Entry, holdAgentCore bool) string {
	if why := InstructionNote(e.Content); why != "" {
		return why
	}
	if HoldsAgentCore(e.Category, e.Source, holdAgentCore) {
		return AgentCoreNote
	}
	return ""
}
