// Command memctl gives long-running LLM agents a durable, budgeted memory.
package main

import (
	"os"

	"github.com/memctl/memctl/cmd"
)

func main() { os.Exit(cmd.Main(os.Args[1:])) }
