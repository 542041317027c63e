package inject

import (
	"github.com/memctl/memctl/mdmem"
)

// CacheDir is the memory-relative directory of derived, git-ignored data.
const CacheDir = mdmem.CacheDir
