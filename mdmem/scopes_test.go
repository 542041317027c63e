package mdmem

import (
	"errors"
	"reflect"
	"testing"
)

func TestSplitScopes(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want []string
		err  error
	}{
		{[]string{"project:a"}, []string{"project:a"}, nil},
		{[]string{" project:a , user:b ", "code-gen"}, []string{"project:a", "user:b", "code-gen"}, nil},
		{[]string{""}, nil, ErrEmptyScope},
		{[]string{"project:a,"}, nil, ErrEmptyScope},
		{[]string{"project:"}, nil, ErrBadScope},
		{[]string{":a"}, nil, ErrBadScope},
		{[]string{"project:a b"}, nil, ErrBadScope},
		{[]string{"a·b"}, nil, ErrBadScope},
		{[]string{"a)"}, nil, ErrBadScope},
		{[]string{"a\u200bb"}, nil, ErrBadScope},
	} {
		got, err := SplitScopes(tc.in...)
		if !errors.Is(err, tc.err) || (tc.err == nil && !reflect.DeepEqual(got, tc.want)) {
			t.Errorf("SplitScopes(%q) = %q, %v; want %q, %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestInScope(t *testing.T) {
	for _, tc := range []struct {
		entry, scopes []string
		want          bool
	}{
		{nil, nil, true},
		{nil, []string{"project:a"}, true},
		{[]string{"project:a"}, nil, false},
		{[]string{"project:a"}, []string{"project:b"}, false},
		{[]string{"project:a"}, []string{"Project:A"}, true},
		{[]string{"project:a", "user:c"}, []string{"user:c"}, true},
		{[]string{"project:a"}, []string{ScopeAll}, true},
	} {
		if got := InScope(tc.entry, tc.scopes); got != tc.want {
			t.Errorf("InScope(%q, %q) = %v, want %v", tc.entry, tc.scopes, got, tc.want)
		}
	}
}

func TestNormalizeForget(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"My card is 4111 1111", "my  CARD is 4111 1111."},
		{"My card is 4111 1111", "My\u200b card is ４１１１ 1111"},
		{"My card is 4111 1111", "My card is\u202e 4111\t1111!"},
	} {
		if NormalizeForget(tc.a) != NormalizeForget(tc.b) {
			t.Errorf("%q and %q normalise differently: %q vs %q", tc.a, tc.b, NormalizeForget(tc.a), NormalizeForget(tc.b))
		}
	}
	if NormalizeForget("card 4111") == NormalizeForget("card 4112") {
		t.Error("different numbers normalise alike")
	}
}
