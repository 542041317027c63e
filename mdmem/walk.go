package mdmem

import (
	"context"
	"errors"
	"io/fs"
	"strings"
)

// Walk parses the memory files of dir one at a time, MEMORY.md first and
// then the topic files in slug order (the order of Memory.Docs), and
// calls fn with each. A reader that walks holds one file's parse at a
// time, whatever the size of the memory, as long as fn keeps nothing that
// points into the Doc (an entry's strings are slices of its file's text;
// Detach copies one out). A missing MEMORY.md is an empty one.
//
// It reads through a ReadView, as Load does: never a half-applied write.
// Every file is checked (regular, within MaxFileBytes) before fn sees the
// first, so a refused file stops a streamed output before it starts. It
// stops at fn's first error, or when ctx is done.
func Walk(ctx context.Context, dir string, fn func(*Doc) error) error {
	v, err := OpenReadView(dir)
	if err != nil {
		return err
	}
	defer v.Close()
	if err := v.check(MainFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	slugs, err := v.TopicSlugs()
	if err != nil {
		return err
	}
	for _, slug := range slugs {
		if err := v.check(TopicPath(slug)); err != nil {
			return err
		}
	}
	src, err := v.ReadFile(MainFile)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := fn(ParseDoc(MainFile, src)); err != nil {
		return err
	}
	for _, slug := range slugs {
		if err := ctx.Err(); err != nil {
			return err
		}
		p := TopicPath(slug)
		src, err := v.ReadFile(p)
		if err != nil {
			return err
		}
		if err := fn(ParseDoc(p, src)); err != nil {
			return err
		}
	}
	return nil
}

// Detach returns a copy of e that shares no memory with the file it was
// parsed from, so a reader may keep it after the file's Doc is dropped.
func (e *Entry) Detach() *Entry {
	c := *e
	for _, s := range []*string{&c.ID, &c.Category, &c.Content, &c.Source, &c.SupersededBy,
		&c.File, &c.Topic, &c.Section, &c.Raw, &c.Marker} {
		*s = strings.Clone(*s)
	}
	for _, l := range []*[]string{&c.Scope, &c.Refs, &c.Tags, &c.See, &c.Notes} {
		if *l != nil {
			cl := make([]string, len(*l))
			for i, s := range *l {
				cl[i] = strings.Clone(s)
			}
			*l = cl
		}
	}
	return &c
}
