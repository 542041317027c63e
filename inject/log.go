package inject

import (
	"github.com/memctl/memctl/mdmem"
)

// CacheDir is the memory-relative directory of derived, git-ignored data.
const CacheDir = mdmem.CacheDir

// LogFile is the memory-relative path of the opt-in inject log, kept by
// mdmem (mdmem.InjectLogPath).
const LogFile = mdmem.InjectLogPath

// LogRecord is one line of the inject log (see mdmem.UsageRecord).
type LogRecord = mdmem.UsageRecord

// AppendLog appends one record to the inject log (mdmem.AppendUsageLog).
func AppendLog(dir string, rec LogRecord) error { return mdmem.AppendUsageLog(dir, rec) }

// ReadLog reads the inject log, the rotated file first
// (mdmem.ReadUsageLog).
func ReadLog(dir string) (recs []LogRecord, bad int, err error) { return mdmem.ReadUsageLog(dir) }
