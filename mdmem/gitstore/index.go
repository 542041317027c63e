package gitstore

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
)

// This file implements git's index format (versions 2, 3 and 4) directly.
// go-git's plumbing/format/index is not used for writing because it drops
// the assume-unchanged bit, sorts unmerged entries non-deterministically and
// cannot tell a corrupt index from one using an unsupported feature. Each
// entry's on-disk flags are kept, so entries we do not touch are rewritten
// exactly; of the extensions only REUC (resolve-undo) is kept: TREE, UNTR,
// FSMN, EOIE and IEOT are optional caches that git rebuilds, and would be
// stale after our change.

// errIndexCorrupt wraps decoding failures that mean the file is damaged
// (truncated, bad checksum, garbage), as opposed to errIndexUnsupported.
var errIndexCorrupt = errors.New("index file is corrupt")

// errIndexUnsupported wraps valid indexes using features we cannot rewrite.
var errIndexUnsupported = fmt.Errorf("index uses an unsupported feature: %w", ErrUnsupported)

const (
	flagAssumeValid = 0x8000
	flagExtended    = 0x4000
	flagStageMask   = 0x3000
	flagNameMask    = 0x0fff
	xflagSkipWT     = 0x4000
	xflagITA        = 0x2000
)

// idxEntry is one index entry with its raw stat data.
type idxEntry struct {
	ctimeS, ctimeN, mtimeS, mtimeN uint32
	dev, ino, mode, uid, gid, size uint32
	hash                           [20]byte
	flags                          uint16 // assume-valid, extended, stage (name length recomputed)
	xflags                         uint16
	name                           string
}

func (e *idxEntry) stage() int { return int(e.flags&flagStageMask) >> 12 }

type idxExt struct {
	sig  string
	data []byte
}

type indexFile struct {
	version uint32
	entries []*idxEntry
	exts    []idxExt
}

func decodeIndex(b []byte) (*indexFile, error) {
	if len(b) < 12+20 {
		return nil, fmt.Errorf("%w: too short", errIndexCorrupt)
	}
	if string(b[:4]) != "DIRC" {
		return nil, fmt.Errorf("%w: bad signature", errIndexCorrupt)
	}
	ix := &indexFile{version: binary.BigEndian.Uint32(b[4:8])}
	if ix.version < 2 || ix.version > 4 {
		return nil, fmt.Errorf("index version %d: %w", ix.version, errIndexUnsupported)
	}
	body, trailer := b[:len(b)-20], b[len(b)-20:]
	sum := sha1.Sum(body)
	if !bytes.Equal(sum[:], trailer) {
		if bytes.Equal(trailer, make([]byte, 20)) {
			return nil, fmt.Errorf("index has no checksum (index.skipHash): %w", errIndexUnsupported)
		}
		return nil, fmt.Errorf("%w: checksum mismatch", errIndexCorrupt)
	}
	n := int(binary.BigEndian.Uint32(b[8:12]))
	off := 12
	prev := ""
	for i := 0; i < n; i++ {
		if off+62 > len(body) {
			return nil, fmt.Errorf("%w: truncated entry", errIndexCorrupt)
		}
		e := &idxEntry{}
		u := func(k int) uint32 { return binary.BigEndian.Uint32(body[off+4*k:]) }
		e.ctimeS, e.ctimeN, e.mtimeS, e.mtimeN = u(0), u(1), u(2), u(3)
		e.dev, e.ino, e.mode, e.uid, e.gid, e.size = u(4), u(5), u(6), u(7), u(8), u(9)
		copy(e.hash[:], body[off+40:off+60])
		flags := binary.BigEndian.Uint16(body[off+60:])
		p := off + 62
		if flags&flagExtended != 0 {
			if ix.version < 3 || p+2 > len(body) {
				return nil, fmt.Errorf("%w: bad extended flags", errIndexCorrupt)
			}
			e.xflags = binary.BigEndian.Uint16(body[p:])
			p += 2
		}
		e.flags = flags &^ flagNameMask
		if ix.version == 4 {
			strip, k := decodeVarint(body[p:])
			if k == 0 || strip > uint64(len(prev)) {
				return nil, fmt.Errorf("%w: bad path prefix", errIndexCorrupt)
			}
			p += k
			end := bytes.IndexByte(body[p:], 0)
			if end < 0 {
				return nil, fmt.Errorf("%w: unterminated path", errIndexCorrupt)
			}
			e.name = prev[:len(prev)-int(strip)] + string(body[p:p+end])
			off = p + end + 1
		} else {
			end := bytes.IndexByte(body[p:], 0)
			if end < 0 {
				return nil, fmt.Errorf("%w: unterminated path", errIndexCorrupt)
			}
			e.name = string(body[p : p+end])
			entLen := (p - off + end + 8) &^ 7
			off += entLen
			if off > len(body) {
				return nil, fmt.Errorf("%w: truncated entry", errIndexCorrupt)
			}
		}
		prev = e.name
		ix.entries = append(ix.entries, e)
	}
	for off < len(body) {
		if off+8 > len(body) {
			return nil, fmt.Errorf("%w: truncated extension", errIndexCorrupt)
		}
		sig := string(body[off : off+4])
		sz := int(binary.BigEndian.Uint32(body[off+4:]))
		if off+8+sz > len(body) || sz < 0 {
			return nil, fmt.Errorf("%w: truncated extension %q", errIndexCorrupt, sig)
		}
		if sig[0] < 'A' || sig[0] > 'Z' {
			what := sig
			switch sig {
			case "link":
				what = "split index (core.splitIndex)"
			case "sdir":
				what = "sparse index (index.sparse)"
			}
			return nil, fmt.Errorf("index extension %s: %w", what, errIndexUnsupported)
		}
		ix.exts = append(ix.exts, idxExt{sig: sig, data: body[off+8 : off+8+sz]})
		off += 8 + sz
	}
	return ix, nil
}

// decodeVarint is git's offset varint (varint.c).
func decodeVarint(b []byte) (uint64, int) {
	if len(b) == 0 {
		return 0, 0
	}
	i := 0
	c := b[i]
	i++
	val := uint64(c & 127)
	for c&128 != 0 {
		if i >= len(b) {
			return 0, 0
		}
		val++
		if val == 0 || val&(uint64(0xfe)<<56) != 0 {
			return 0, 0
		}
		c = b[i]
		i++
		val = (val << 7) + uint64(c&127)
	}
	return val, i
}

func encodeVarint(v uint64) []byte {
	var buf [16]byte
	pos := len(buf) - 1
	buf[pos] = byte(v & 127)
	for v >>= 7; v != 0; v >>= 7 {
		v--
		pos--
		buf[pos] = 128 | byte(v&127)
	}
	return buf[pos:]
}

func (ix *indexFile) sort() {
	sort.SliceStable(ix.entries, func(i, j int) bool {
		a, b := ix.entries[i], ix.entries[j]
		if a.name != b.name {
			return a.name < b.name
		}
		return a.stage() < b.stage()
	})
}

func (ix *indexFile) encode() []byte {
	ix.sort()
	version := ix.version
	if version == 2 {
		for _, e := range ix.entries {
			if e.xflags != 0 {
				version = 3
				break
			}
		}
	}
	var buf bytes.Buffer
	buf.WriteString("DIRC")
	var tmp [4]byte
	put32 := func(v uint32) {
		binary.BigEndian.PutUint32(tmp[:], v)
		buf.Write(tmp[:])
	}
	put32(version)
	put32(uint32(len(ix.entries)))
	prev := ""
	for _, e := range ix.entries {
		start := buf.Len()
		for _, v := range []uint32{e.ctimeS, e.ctimeN, e.mtimeS, e.mtimeN, e.dev, e.ino, e.mode, e.uid, e.gid, e.size} {
			put32(v)
		}
		buf.Write(e.hash[:])
		flags := e.flags &^ (flagNameMask | flagExtended)
		if l := len(e.name); l < flagNameMask {
			flags |= uint16(l)
		} else {
			flags |= flagNameMask
		}
		if e.xflags != 0 && version >= 3 {
			flags |= flagExtended
		}
		buf.WriteByte(byte(flags >> 8))
		buf.WriteByte(byte(flags))
		if flags&flagExtended != 0 {
			buf.WriteByte(byte(e.xflags >> 8))
			buf.WriteByte(byte(e.xflags))
		}
		if version == 4 {
			common := 0
			for common < len(prev) && common < len(e.name) && prev[common] == e.name[common] {
				common++
			}
			buf.Write(encodeVarint(uint64(len(prev) - common)))
			buf.WriteString(e.name[common:])
			buf.WriteByte(0)
		} else {
			buf.WriteString(e.name)
			n := buf.Len() - start
			pad := 8 - n%8 // 1..8 NULs
			buf.Write(make([]byte, pad))
		}
		prev = e.name
	}
	for _, x := range ix.exts {
		if x.sig != "REUC" {
			continue
		}
		buf.WriteString(x.sig)
		put32(uint32(len(x.data)))
		buf.Write(x.data)
	}
	sum := sha1.Sum(buf.Bytes())
	buf.Write(sum[:])
	return buf.Bytes()
}

// readIndex reads and decodes <gitdir>/index; a missing index is empty.
func (r *Repo) readIndex() (*indexFile, error) {
	b, err := os.ReadFile(r.indexPath())
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return &indexFile{version: 2}, nil
		}
		return nil, err
	}
	ix, err := decodeIndex(b)
	if err != nil {
		return nil, fmt.Errorf("git: %s: %w", r.indexPath(), err)
	}
	return ix, nil
}

func (r *Repo) indexPath() string { return r.gitDir + string(os.PathSeparator) + "index" }

// setEntry replaces the entry for name (and anything conflicting with it as
// a file/directory) by e.
func (ix *indexFile) setEntry(e *idxEntry) {
	ix.removeEntry(e.name)
	ix.entries = append(ix.entries, e)
}

// removeEntry drops name, entries below name/ and entries for name's
// parent directories (directory/file conflicts).
func (ix *indexFile) removeEntry(name string) {
	parents := map[string]bool{}
	for d := name; ; {
		i := strings.LastIndexByte(d, '/')
		if i < 0 {
			break
		}
		d = d[:i]
		parents[d] = true
	}
	out := ix.entries[:0]
	for _, x := range ix.entries {
		if x.name == name || strings.HasPrefix(x.name, name+"/") || parents[x.name] {
			continue
		}
		out = append(out, x)
	}
	ix.entries = out
}

func (ix *indexFile) find(name string) *idxEntry {
	i := sort.Search(len(ix.entries), func(i int) bool { return ix.entries[i].name >= name })
	if i < len(ix.entries) && ix.entries[i].name == name {
		return ix.entries[i]
	}
	return nil
}

func (ix *indexFile) unmerged() []string {
	var out []string
	for _, e := range ix.entries {
		if e.stage() != 0 && (len(out) == 0 || out[len(out)-1] != e.name) {
			out = append(out, e.name)
		}
	}
	return out
}
