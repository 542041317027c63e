package mdmem

import (
	"errors"
	"strings"
)

// ErrEmptyScope is returned for a scope that is empty or only white space:
// usually a wrapper's unset variable (--scope "$PROJECT"), which must not
// turn a project's entry into a global one.
var ErrEmptyScope = errors.New(`empty scope (an unset variable in --scope "$X"?): give a scope such as project:order-service, or leave the scope out for a global entry`)

// SplitScopes reads scopes as every command takes them: each value may
// hold several comma-separated scopes, white space around each is dropped,
// and an empty one is an error.
func SplitScopes(vals ...string) ([]string, error) {
	var out []string
	for _, v := range vals {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s == "" {
				return nil, ErrEmptyScope
			}
			out = append(out, s)
		}
	}
	return out, nil
}
