// Command kubectl-scale_preview is the kubectl plugin "kubectl scale-preview".
package main

import (
	"os"

	"github.com/scale-preview/scale-preview/pkg/cmd"
)

func main() {
	os.Exit(cmd.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
