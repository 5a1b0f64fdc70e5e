// Command kubectl_complete-scale_preview is the shell-completion helper that
// kubectl (1.26+) runs to complete "kubectl scale-preview ...": kubectl execs
// it with the words after the plugin name, and it answers with cobra's
// __complete protocol (one candidate a line, then ":<directive>").
//
// It ships next to kubectl-scale_preview in every release archive and is
// linked onto PATH by krew.
package main

import (
	"os"

	"github.com/scale-preview/scale-preview/pkg/cmd"
)

func main() {
	os.Exit(cmd.Main(append([]string{"__complete"}, os.Args[1:]...), os.Stdin, os.Stdout, os.Stderr))
}
