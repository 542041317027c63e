package mdmem

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// A tombstone key travels between copies of a memory out of band, never
// through git: `memctl key export` prints it as one line of text,
// `memctl key import` reads that line. A copy holding a memory's key
// checks that memory's tombstones for near repeats too, not only exact
// ones (Tombstones.Match).

// keyTextPrefix starts the text form of a tombstone key.
const keyTextPrefix = "memctl-tombstone-key "

// tombstoneKeyBytes is the length of a tombstone key.
const tombstoneKeyBytes = 32

// otherKeyPrefix and otherKeySuffix frame the file name of an imported
// key kept beside the copy's own: memctl-tombstone-<key id>.key.
const (
	otherKeyPrefix = "memctl-tombstone-"
	otherKeySuffix = ".key"
)

// otherKeys reads the imported keys in the git directory, but own (the
// copy's own key id). A file whose content is not the key its name
// names is an error: it would check tombstones with a wrong key.
func (s *Store) otherKeys(own string) ([]heldKey, error) {
	names, err := filepath.Glob(filepath.Join(s.Repo.GitDir(), otherKeyPrefix+"*"+otherKeySuffix))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []heldKey
	for _, p := range names {
		id := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), otherKeyPrefix), otherKeySuffix)
		if id == own {
			continue
		}
		key, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		if keyID(key) != id {
			return nil, fmt.Errorf("%s does not hold key %s; delete it and import the key again (memctl key import)", p, id)
		}
		out = append(out, heldKey{id, key})
	}
	return out, nil
}

// ExportTombstoneKey returns this copy's tombstone key as one line of
// text for `memctl key import`. Without a key (no forget here yet) it is
// an error wrapping ErrTombstoneKey.
func (s *Store) ExportTombstoneKey() ([]byte, error) {
	key, err := os.ReadFile(s.tombstoneKeyPath())
	if errors.Is(err, fs.ErrNotExist) || err == nil && len(key) == 0 {
		return nil, fmt.Errorf("%w: %s does not exist (memctl makes it at the first forget)", ErrTombstoneKey, s.tombstoneKeyPath())
	}
	if err != nil {
		return nil, err
	}
	return []byte(keyTextPrefix + hex.EncodeToString(key) + "\n"), nil
}

// KeyImport says what ImportTombstoneKey did with a key.
type KeyImport struct {
	ID string `json:"key_id"` // the key's id, as tombstones name it
	// As is "own" (this copy had no key: it writes its tombstones with
	// this one from now on), "added" (kept beside this copy's own key)
	// or "present" (this copy held it already).
	As string `json:"as"`
}

// ImportTombstoneKey stores a key exported by `memctl key export` from
// another copy of the memory, mode 0600 in the git directory, never
// committed. A copy without a key takes it as its own (so machines that
// share it write tombstones every one of them checks fully); a copy with
// a key of its own keeps both. text is the exported line.
func (s *Store) ImportTombstoneKey(text []byte) (KeyImport, error) {
	h, ok := bytes.CutPrefix(bytes.TrimSpace(text), []byte(keyTextPrefix))
	key := make([]byte, hex.DecodedLen(len(h)))
	if _, err := hex.Decode(key, h); !ok || err != nil || len(key) != tombstoneKeyBytes {
		return KeyImport{}, errors.New("not a tombstone key: want the line `memctl key export` prints (" + strings.TrimSpace(keyTextPrefix) + " and 64 hex digits)")
	}
	id := keyID(key)
	own, err := os.ReadFile(s.tombstoneKeyPath())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return KeyImport{}, err
	}
	if len(own) > 0 && keyID(own) == id {
		return KeyImport{id, "present"}, nil
	}
	if len(own) == 0 {
		// Exclusive create: a forget running now may make a key too.
		switch err := writeNewPrivate(s.tombstoneKeyPath(), key); {
		case err == nil:
			return KeyImport{id, "own"}, nil
		case !errors.Is(err, fs.ErrExist):
			return KeyImport{}, fmt.Errorf("write the tombstone key: %w", err)
		}
	}
	p := filepath.Join(s.Repo.GitDir(), otherKeyPrefix+id+otherKeySuffix)
	switch err := writeNewPrivate(p, key); {
	case errors.Is(err, fs.ErrExist):
		return KeyImport{id, "present"}, nil
	case err != nil:
		return KeyImport{}, fmt.Errorf("write the tombstone key: %w", err)
	}
	return KeyImport{id, "added"}, nil
}

// writeNewPrivate creates path, which must not exist, holding data (mode
// 0600): written whole to a temporary file, synced, then linked into
// place, so the file is never seen half written and never replaces one.
func writeNewPrivate(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Link(tmp, path)
}
