// Package consolidate folds queued candidate memories into the memory: it
// triages each candidate against the entries retrieval finds close to it
// (duplicates, updates, conflicts, new facts), decides by rules and, when a
// model is configured, by an LLM behind a small interface (go-openai in
// openai.go, a scripted fake in fakellm for tests), and turns the decisions
// into a plan: operations, consumed and held candidates, new file contents.
// It plans and asks; mdmem's write transaction applies the plan and commits
// it. It also holds the LLM side of extract (distilling a transcript into
// candidates) and of pending confirmation. It is the only package that
// imports go-openai. docs/CONSOLIDATE.md describes the stages.
package consolidate
