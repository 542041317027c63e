package osfile

import (
	"bytes"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
)

// TestPrefaultedCopiesAreExact: ReadFile reads what os.ReadFile reads and
// String copies what string() copies, small or large (mapped in with
// Prefault); Prefault changes no byte of a filled buffer.
func TestPrefaultedCopiesAreExact(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, n := range []int{0, 1, minPrefault - 1, minPrefault, 3*minPrefault + 4097} {
		data := make([]byte, n)
		rng.Read(data)
		p := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := ReadFile(p)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("ReadFile of %d bytes: %d bytes, %v", n, len(got), err)
		}
		if s := String(data); s != string(data) {
			t.Fatalf("String of %d bytes differs", n)
		}
		filled := bytes.Clone(data)
		Prefault(filled)
		if !bytes.Equal(filled, data) {
			t.Fatalf("Prefault changed a buffer of %d bytes", n)
		}
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "missing")); !os.IsNotExist(err) {
		t.Fatalf("ReadFile of a missing file: %v", err)
	}
}
