package mdmem

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// LedgerDir holds the committed ledger of consumed candidates: one file per
// month of the candidates' queue time (.memctl/consumed/2026-01.log), one
// line per candidate: "<candidate id> <date> <outcome>". It is written in
// the same commit as the memory it changed, so "consumed" and "applied"
// cannot disagree; reconciling a queue reads only the months of the
// candidates in it (LedgerDir).

// LedgerPath returns the ledger file of a candidate id.
func LedgerPath(candID string) string {
	// c20260105T101112.000000-abcd1234 → 2026-01
	if len(candID) >= 7 && candID[0] == 'c' {
		y, m := candID[1:5], candID[5:7]
		if isDigits(y) && isDigits(m) {
			return LedgerDir + "/" + y + "-" + m + ".log"
		}
	}
	return LedgerDir + "/other.log"
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func readFileIfExists(p string) ([]byte, error) {
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// ReadLedger returns which of the given candidate ids the ledger records
// as consumed.
func ReadLedger(dir string, ids []string) (map[string]bool, error) {
	files := map[string]bool{}
	want := map[string]bool{}
	for _, id := range ids {
		files[LedgerPath(id)] = true
		want[id] = true
	}
	done := map[string]bool{}
	for rel := range files {
		b, err := readFileIfExists(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			id, _, _ := strings.Cut(sc.Text(), " ")
			if want[id] {
				done[id] = true
			}
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	return done, nil
}

// appendLedger returns base with one ledger line per consumed candidate.
func appendLedger(base []byte, recs []consumeRec, now time.Time) []byte {
	out := append([]byte(nil), base...)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	for _, r := range recs {
		line := r.id + " " + now.UTC().Format("2006-01-02")
		if r.outcome != "" {
			line += " " + OneLine(r.outcome)
		}
		out = append(out, line+"\n"...)
	}
	return out
}
