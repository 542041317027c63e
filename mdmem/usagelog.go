package mdmem

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// The kinds of UsageRecord.
const (
	// UsageInject records an inject: the ids of the block it printed.
	UsageInject = "inject"
	// UsageUsed records ids an agent reported as used.
	UsageUsed = "used"
)

// maxUsageLogBytes is the size at which the usage log is rotated: the
// full log becomes inject.log.1 (replacing the previous one) and a new
// log starts, so the log stays bounded while readers still see the
// recent history across the rotation.
var maxUsageLogBytes int64 = 16 << 20

// UsageRecord is one line of the opt-in usage log (InjectLogPath),
// written by inject and used, read by stats and consolidate: an inject
// (UsageInject) or ids an agent reported as used (UsageUsed).
type UsageRecord struct {
	Kind    string    `json:"kind"`
	Time    time.Time `json:"time"`
	Budget  int       `json:"budget,omitempty"`
	Tokens  int       `json:"tokens,omitempty"`
	IDs     []string  `json:"ids"`
	Omitted int       `json:"omitted,omitempty"`
}

// AppendUsageLog appends one record to the usage log of the memory in
// dir as a single write to a file opened with O_APPEND, so concurrent
// writers never interleave lines.
func AppendUsageLog(dir string, rec UsageRecord) error {
	if _, err := SafeDir(dir, CacheDir); err != nil {
		return err
	}
	p := filepath.Join(dir, filepath.FromSlash(InjectLogPath))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	if fi, err := os.Lstat(p); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (a symbolic link?); memctl does not write through it: remove it", InjectLogPath)
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, PrivateFileMode)
	if err != nil {
		return err
	}
	if fi, err := f.Stat(); err == nil && fi.Size() >= maxUsageLogBytes {
		// Rotate only if the file is still the log (another writer may
		// have rotated it since we opened it), then append to a new one.
		if cur, err := os.Stat(p); err == nil && os.SameFile(fi, cur) {
			_ = os.Rename(p, p+".1")
		}
		f.Close()
		if f, err = os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, PrivateFileMode); err != nil {
			return err
		}
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ReadUsageLog reads the usage log of the memory in dir, the rotated
// inject.log.1 first; a missing log is empty. Unreadable lines (a torn
// last line after a crash, an unknown kind) are skipped and counted.
func ReadUsageLog(dir string) (recs []UsageRecord, bad int, err error) {
	p := filepath.Join(dir, filepath.FromSlash(InjectLogPath))
	for _, name := range []string{p + ".1", p} {
		r, b, err := readUsageLogFile(name)
		if err != nil {
			return nil, 0, err
		}
		recs, bad = append(recs, r...), bad+b
	}
	return recs, bad, nil
}

// readUsageLogFile reads one log file; a missing file has no records.
func readUsageLogFile(name string) (recs []UsageRecord, bad int, err error) {
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
		var r UsageRecord
		if json.Unmarshal(sc.Bytes(), &r) != nil || (r.Kind != UsageInject && r.Kind != UsageUsed) {
			bad++
			continue
		}
		recs = append(recs, r)
	}
	return recs, bad, sc.Err()
}
