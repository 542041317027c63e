package mdmem

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestForgetTakesWhatHoldsAForgottenPredecessorsText (soak seeds 700020,
// 700022): forgetting an entry takes the entry it superseded, and then
// every other entry holding that predecessor's text, as it does for the
// target's own text: no live entry keeps a text that has a tombstone.
func TestForgetTakesWhatHoldsAForgottenPredecessorsText(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	writeFiles(t, s, map[string][]byte{
		MainFile:             []byte("# Core profile\n## User preferences\n- [pref-002] The timeout is 30 seconds (user · 2026-01-02)\n\n# Archive\n- [pref-001] The timeout is 10 seconds (user · 2026-01-01 · superseded by pref-002 on 2026-01-02)\n"),
		"topics/incident.md": []byte("# Incidents\n- [inc-001] The timeout is 10 seconds (user · 2026-01-01)\n- [inc-002] Another fact (user · 2026-01-01)\n"),
	})
	res, err := Forget(ctx, s, []string{"pref-002"}, "pii", ForgetOptions{})
	must(t, err)
	got := slices.Clone(res.IDs)
	slices.Sort(got)
	if want := []string{"inc-001", "pref-001", "pref-002"}; !slices.Equal(got, want) {
		t.Errorf("forgot %v, want %v", got, want)
	}
	if b := readOrAbsent(t, s, "topics/incident.md"); strings.Contains(b, "10 seconds") || !strings.Contains(b, "inc-002") {
		t.Errorf("topics/incident.md = %q", b)
	}
}
