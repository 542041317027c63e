package inject

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/memctl/memctl/mdmem"
)

// CacheDir is the memory-relative directory of derived, git-ignored data.
const CacheDir = mdmem.CacheDir

// LogFile is the memory-relative path of the opt-in inject log.
const LogFile = CacheDir + "/inject.log"

// maxLogBytes is the size at which the inject log is rotated: the full
// log becomes inject.log.1 (replacing the previous one) and a new log
// starts, so the log stays bounded while readers still see the recent
// history across the rotation.
var maxLogBytes int64 = 16 << 20

// LogRecord is one line of the inject log: an inject ("inject") or ids an
// agent reported as used ("used").
type LogRecord struct {
	Kind    string    `json:"kind"`
	Time    time.Time `json:"time"`
	Budget  int       `json:"budget,omitempty"`
	Tokens  int       `json:"tokens,omitempty"`
	IDs     []string  `json:"ids"`
	Omitted int       `json:"omitted,omitempty"`
}

// AppendLog appends one record to the inject log as a single write to a
// file opened with O_APPEND, so concurrent writers never interleave lines.
func AppendLog(dir string, rec LogRecord) error {
	if _, err := mdmem.SafeDir(dir, CacheDir); err != nil {
		return err
	}
	p := filepath.Join(dir, filepath.FromSlash(LogFile))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	if fi, err := os.Lstat(p); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (a symbolic link?); memctl does not write through it: remove it", LogFile)
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, mdmem.PrivateFileMode)
	if err != nil {
		return err
	}
	if fi, err := f.Stat(); err == nil && fi.Size() >= maxLogBytes {
		// Rotate only if the file is still the log (another writer may
		// have rotated it since we opened it), then append to a new one.
		if cur, err := os.Stat(p); err == nil && os.SameFile(fi, cur) {
			_ = os.Rename(p, p+".1")
		}
		f.Close()
		if f, err = os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, mdmem.PrivateFileMode); err != nil {
			return err
		}
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ReadLog reads the inject log, the rotated inject.log.1 first; a missing
// log is empty. Unreadable lines (a torn last line after a crash) are
// skipped and counted.
func ReadLog(dir string) (recs []LogRecord, bad int, err error) {
	p := filepath.Join(dir, filepath.FromSlash(LogFile))
	for _, name := range []string{p + ".1", p} {
		r, b, err := readLogFile(name)
		if err != nil {
			return nil, 0, err
		}
		recs, bad = append(recs, r...), bad+b
	}
	return recs, bad, nil
}

// readLogFile reads one log file; a missing file has no records.
func readLogFile(name string) (recs []LogRecord, bad int, err error) {
	f, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var r LogRecord
		if json.Unmarshal(sc.Bytes(), &r) != nil || (r.Kind != "inject" && r.Kind != "used") {
			bad++
			continue
		}
		recs = append(recs, r)
	}
	return recs, bad, sc.Err()
}
