package mdmem

import (
	"fmt"
	"sort"
	"strings"
)

// Category describes one kind of memory entry: its name (as in the JSON
// schema), the id prefix, and, for core categories, the heading of its
// subsection of "# Core profile" in MEMORY.md.
type Category struct {
	Name    string // "preference"
	Prefix  string // "pref"
	Heading string // "User preferences"; empty for categories kept in topic files
	Core    bool   // core categories live in MEMORY.md's core profile
}

// Categories lists the known categories in the order their sections appear.
var Categories = []Category{
	{Name: "preference", Prefix: "pref", Heading: "User preferences", Core: true},
	{Name: "constraint", Prefix: "cons", Heading: "Project constraints", Core: true},
	{Name: "decision", Prefix: "dec", Heading: "Key decisions", Core: true},
	{Name: "fact", Prefix: "fact"},
	{Name: "incident", Prefix: "inc"},
	{Name: "lesson", Prefix: "lesson"},
	{Name: "note", Prefix: "note"},
	{Name: "todo", Prefix: "todo"},
}

// CategoryByName returns the category with the given name (case-insensitive).
func CategoryByName(name string) (Category, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	for _, c := range Categories {
		if c.Name == name {
			return c, true
		}
	}
	return Category{}, false
}

// CategoryByPrefix returns the category whose id prefix is prefix.
func CategoryByPrefix(prefix string) (Category, bool) {
	for _, c := range Categories {
		if c.Prefix == prefix {
			return c, true
		}
	}
	return Category{}, false
}

// CategoryOfID returns the category named by an id's prefix ("dec-014",
// "dec-kqxzbt" → decision).
func CategoryOfID(id string) (Category, bool) {
	prefix, ok := IDPrefix(id)
	if !ok {
		return Category{}, false
	}
	return CategoryByPrefix(prefix)
}

// CategoryNames returns the known category names, sorted, for messages.
func CategoryNames() []string {
	names := make([]string, len(Categories))
	for i, c := range Categories {
		names[i] = c.Name
	}
	sort.Strings(names)
	return names
}

func unknownCategoryError(name string) error {
	return fmt.Errorf("unknown category %q (known: %s)", name, strings.Join(CategoryNames(), ", "))
}
