package mdmem

import (
	"slices"
	"testing"
)

func TestRescopedMovesTheScopeAndKeepsOneCopy(t *testing.T) {
	const from, to = "project:app", "project:~/work/app"
	tests := []struct {
		name      string
		in, want  []string
		wantMoved bool
	}{
		{"the old scope becomes the new", []string{"project:app"}, []string{to}, true},
		{"case aside", []string{"Project:App"}, []string{to}, true},
		{"both held: the new once, in the first place", []string{"project:app", "code", to}, []string{to, "code"}, true},
		{"other scopes stay in order", []string{"user:ana", "project:app"}, []string{"user:ana", to}, true},
		{"without the old scope: untouched", []string{"project:other", to}, []string{"project:other", to}, false},
		{"global: untouched", nil, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, moved := rescoped(tt.in, from, to)
			if moved != tt.wantMoved || moved && !slices.Equal(got, tt.want) {
				t.Errorf("rescoped(%v) = %v, %v; want %v, %v", tt.in, got, moved, tt.want, tt.wantMoved)
			}
		})
	}
}

func TestOldProjectScopeIsTheBaseNamesSlug(t *testing.T) {
	for _, tt := range []struct{ root, want string }{
		{"/home/ana/work/app", "project:app"},
		{"/home/ana/src/Billing Service", "project:billing-service"},
		{"/", ""},
	} {
		if got := OldProjectScope(tt.root); got != tt.want {
			t.Errorf("OldProjectScope(%q) = %q, want %q", tt.root, got, tt.want)
		}
	}
	for _, tt := range []struct{ scope, want string }{
		{"project:app", "app"},
		{"project:~/work/app", ""},
		{"project:/srv/app", ""},
		{"user:ana", ""},
	} {
		if got := oldProjectName(tt.scope); got != tt.want {
			t.Errorf("oldProjectName(%q) = %q, want %q", tt.scope, got, tt.want)
		}
	}
}
