package cmd

import (
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

const flagDocPath = "../../docs/flags.md"

// docs/flags.md is generated from the command's flags; this test fails when
// it drifts. Regenerate: go test ./pkg/cmd -run TestFlagDoc -update
func TestFlagDoc(t *testing.T) {
	goldenFile(t, flagDocPath, flagDoc())
}

func flagDoc() string {
	c := NewCommand(NewOptions(genericiooptions.NewTestIOStreamsDiscard()))
	var b strings.Builder
	b.WriteString("# Flags\n\n<!-- Generated from the command by `go test ./pkg/cmd -run TestFlagDoc -update`; do not edit. -->\n\n")
	b.WriteString("Usage: `kubectl scale-preview TYPE/NAME --replicas=N [flags]` (or `TYPE NAME`).\n\n")
	b.WriteString("## scale-preview's flags\n\n")
	flagTable(&b, c.LocalNonPersistentFlags())
	b.WriteString("\n## kubectl's connection flags\n\nThe same as kubectl's. With `-f`, only `-n`/`--namespace` matters (the namespace of objects that name none, and of the target).\n\n")
	flagTable(&b, c.PersistentFlags())
	return b.String()
}

func flagTable(b *strings.Builder, fs *pflag.FlagSet) {
	b.WriteString("| Flag | Type | Default | Description |\n|---|---|---|---|\n")
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		name := "`--" + f.Name + "`"
		if f.Shorthand != "" {
			name = "`-" + f.Shorthand + "`, " + name
		}
		typ, _ := pflag.UnquoteUsage(f)
		if typ == "" {
			typ = "bool"
		}
		def := f.DefValue
		if def == "" || def == "[]" {
			def = " "
		} else {
			def = "`" + def + "`"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", name, typ, def, strings.ReplaceAll(f.Usage, "|", `\|`))
	})
}
