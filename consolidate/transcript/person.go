package transcript

import (
	"regexp"
	"strings"
)

// Roles personTurn gives to user messages the person did not type.
const (
	RoleHarness = "harness" // a notification, command output or instructions the agent's harness wrote
	RoleSummary = "summary" // a compaction summary of earlier turns
)

// harnessBlock finds a block of markup an agent harness wraps around what
// it inserts into a user message: a lower-case tag whose name joins words
// by "-" or "_" (<system-reminder>, <local-command-stdout>,
// <task-notification>, <bash-stdout>, <environment_context>,
// <user_instructions>, and names to come), with its content.
var harnessBlock = regexp.MustCompile(`(?s)<([a-z]+(?:[-_][a-z]+)+)(?:\s[^>]*)?>(.*?)</([a-z]+(?:[-_][a-z]+)+)>`)

// typedBlocks are the harness blocks whose content the person typed: the
// arguments of a slash command and a shell command run from the prompt.
var typedBlocks = map[string]bool{"command-name": true, "command-args": true, "bash-input": true}

// summaryOpenings start a compaction summary written as a user message
// by harnesses that do not mark it.
var summaryOpenings = []string{
	"this session is being continued from a previous conversation",
	"this conversation is being continued from a previous",
}

// personTurn classifies the text of a user message. typed says whether
// its record can hold typed words at all (not a subagent's, not a tool
// result). It returns the role to give the turn ("user" for the person's
// words, RoleHarness or RoleSummary otherwise), the text to keep (blocks
// the harness inserted removed; for a slash or shell command, what the
// person typed) and whether the person typed it.
func personTurn(text string, typed bool) (role, out string, person bool) {
	t := strings.TrimSpace(text)
	low := strings.ToLower(t)
	for _, o := range summaryOpenings {
		if strings.HasPrefix(low, o) {
			return RoleSummary, text, false
		}
	}
	if strings.HasPrefix(low, "[request interrupted") {
		return RoleHarness, text, false
	}
	var kept []string
	found := false
	rest := harnessBlock.ReplaceAllStringFunc(t, func(b string) string {
		m := harnessBlock.FindStringSubmatch(b)
		if m[1] != m[3] {
			return b // not one block: leave it to the person's text
		}
		found = true
		if typedBlocks[m[1]] && strings.TrimSpace(m[2]) != "" {
			kept = append(kept, strings.TrimSpace(m[2]))
		}
		return " "
	})
	if !found {
		if !typed {
			return RoleHarness, text, false
		}
		return "user", text, true
	}
	if r := strings.TrimSpace(rest); r != "" {
		kept = append(kept, r)
	}
	if len(kept) == 0 || !typed {
		return RoleHarness, text, false
	}
	return "user", strings.Join(kept, "\n"), true
}
