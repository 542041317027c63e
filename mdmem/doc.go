// Package mdmem is memctl's memory repository: the Markdown entry format, the
// parser and surgical editor built on goldmark source positions, the candidate
// queue, configuration, id allocation and the safe git layer (sub-package
// gitstore). It is the only package that imports goldmark and go-git.
package mdmem
