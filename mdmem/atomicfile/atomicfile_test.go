package atomicfile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFunc(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	boom := errors.New("boom")
	tests := []struct {
		name    string
		ctx     context.Context
		fill    func(*os.File) error
		wantErr error
		want    string // content afterwards
	}{
		{"replaces", context.Background(), func(f *os.File) error { _, err := f.WriteString("new"); return err }, nil, "new"},
		{"a failing fill keeps the old content", context.Background(), func(f *os.File) error { f.WriteString("half"); return boom }, boom, "old"},
		{"a cancelled context keeps the old content", cancelled, func(f *os.File) error { _, err := f.WriteString("new"); return err }, context.Canceled, "old"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "f.md")
			if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			err := WriteFunc(tt.ctx, p, 0o600, tt.fill)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			b, _ := os.ReadFile(p)
			if string(b) != tt.want {
				t.Errorf("content %q, want %q", b, tt.want)
			}
			ents, _ := os.ReadDir(dir)
			if len(ents) != 1 {
				t.Errorf("%d files in the directory, want 1 (no temp file left)", len(ents))
			}
			if fi, _ := os.Stat(p); tt.wantErr == nil && fi.Mode().Perm() != 0o600 {
				t.Errorf("mode %v, want 0600", fi.Mode().Perm())
			}
		})
	}
}
