package mdmem

import (
	"slices"
	"testing"
)

func TestSuggestIDs(t *testing.T) {
	known := []string{"pref-001", "pref-002", "pref-010", "dec-014", "fact-003", "todo-002"}
	tests := []struct {
		id   string
		want []string
	}{
		{"pref-1", []string{"pref-001"}},               // padding
		{"pref-0l1", []string{"pref-001"}},             // typo (l for 0)
		{"perf-001", []string{"pref-001"}},             // swapped letters
		{"dec-041", []string{"dec-014"}},               // swapped digits
		{"pref-003", []string{"pref-001", "pref-002"}}, // ties at the closest distance
		{"todo-002", nil},                              // the id itself is never suggested
		{"zzz-999", nil},
		{"", nil},
	}
	for _, tt := range tests {
		got := SuggestIDs(tt.id, known)
		if !slices.Equal(got, tt.want) {
			t.Errorf("SuggestIDs(%q) = %v, want %v", tt.id, got, tt.want)
		}
	}
	if got := DidYouMean([]string{"a", "b", "c"}); got != "did you mean a, b or c?" {
		t.Errorf("DidYouMean = %q", got)
	}
}
