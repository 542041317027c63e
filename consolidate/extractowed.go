package consolidate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/memctl/memctl/mdmem"
)

// OwedExtract is a transcript whose extract was asked for (a SessionEnd
// or PreCompact hook) and has not finished: no model was configured, the
// model failed, or the process died. memctl extract --catch-up reads it.
type OwedExtract struct {
	Path    string    `json:"path"` // absolute
	Session string    `json:"session,omitempty"`
	Scopes  []string  `json:"scopes,omitempty"`
	Event   string    `json:"event,omitempty"` // the hook event that asked
	Since   time.Time `json:"since"`
}

// owedSuffix ends the record of an owed extract, beside the transcript's
// state record in the extract cache.
const owedSuffix = ".owed.json"

// OweExtract records that the transcript at o.Path is owed an extract,
// until one finishes (keeping the first record's time).
func OweExtract(ctx context.Context, memDir string, o OwedExtract) error {
	abs, err := filepath.Abs(o.Path)
	if err != nil {
		return err
	}
	o.Path = abs
	cacheDir, err := mdmem.SafeDir(memDir, ExtractCacheDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(cacheDir, stateKey(abs)+owedSuffix)
	if old, err := readOwed(path); err == nil && old.Path == abs {
		o.Since = old.Since
	}
	b, err := json.Marshal(o)
	if err != nil {
		return err
	}
	return mdmem.WriteFileAtomic(ctx, path, append(b, '\n'), mdmem.PrivateFileMode)
}

// OwedExtracts lists the transcripts owed an extract, oldest first.
func OwedExtracts(memDir string) ([]OwedExtract, error) {
	cacheDir, err := mdmem.SafeDir(memDir, ExtractCacheDir)
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(cacheDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []OwedExtract
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), owedSuffix) {
			continue
		}
		o, err := readOwed(filepath.Join(cacheDir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(ExtractCacheDir, e.Name()), err)
		}
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Since.Equal(out[j].Since) {
			return out[i].Since.Before(out[j].Since)
		}
		return out[i].Path < out[j].Path
	})
	return out, nil
}

// DropOwed forgets the owed extract of the transcript at path (one that
// is gone, or that no one will read).
func DropOwed(memDir, path string) error {
	cacheDir, err := mdmem.SafeDir(memDir, ExtractCacheDir)
	if err != nil {
		return err
	}
	return removeIfThere(filepath.Join(cacheDir, stateKey(path)+owedSuffix))
}

// settleOwed removes the owed record of the transcript whose state record
// is statePath: its extract has finished.
func settleOwed(statePath string) error {
	return removeIfThere(strings.TrimSuffix(statePath, ".json") + owedSuffix)
}

func removeIfThere(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func readOwed(path string) (OwedExtract, error) {
	var o OwedExtract
	b, err := os.ReadFile(path)
	if err != nil {
		return o, err
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return o, err
	}
	if !filepath.IsAbs(o.Path) {
		return o, fmt.Errorf("names no absolute transcript path")
	}
	return o, nil
}
