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
	o := NewOptions(genericiooptions.NewTestIOStreamsDiscard())
	c := NewCommand(o)
	var b strings.Builder
	b.WriteString("# Flags\n\n<!-- Generated from the command by `go test ./pkg/cmd -run TestFlagDoc -update`; do not edit. -->\n\n")
	b.WriteString("Usage: `kubectl scale-preview TYPE/NAME [flags]` (or `TYPE NAME`), which runs the mode of the object's kind, or `kubectl scale-preview MODE ...`. ")
	b.WriteString("A flag of another mode is refused (exit 2). See [usage.md](usage.md#modes).\n\n")
	b.WriteString("## Flags of every mode\n\n")
	flagTable(&b, c.LocalNonPersistentFlags(), func(f *pflag.Flag) bool { return o.shared[f.Name] && f.Name != "version" })
	b.WriteString("\n## The root: `kubectl scale-preview TYPE/NAME`\n\nIts own flags, besides those of every mode: a scale-in's and `--desired`, and `--version`. ")
	b.WriteString("The other modes' flags work there too, for their kind (`node/NAME --assume ...`).\n\n")
	flagTable(&b, c.LocalNonPersistentFlags(), func(f *pflag.Flag) bool { return !o.shared[f.Name] || f.Name == "version" })
	for _, m := range modeCommands(c) {
		fmt.Fprintf(&b, "\n## `%s`\n\n%s. Usage: `%s`.\n\n", m.Name(), m.Short, strings.TrimSuffix(m.UseLine(), " [flags]"))
		flagTable(&b, m.LocalNonPersistentFlags(), func(f *pflag.Flag) bool { return !o.shared[f.Name] })
	}
	b.WriteString("\n## kubectl's connection flags\n\nThe same as kubectl's, in every mode. With `-f`, only `-n`/`--namespace` matters (the namespace of objects that name none, and of the target).\n\n")
	flagTable(&b, c.PersistentFlags(), func(*pflag.Flag) bool { return true })
	return b.String()
}

// flagTable lists the visible flags of fs that keep selects.
func flagTable(b *strings.Builder, fs *pflag.FlagSet, keep func(*pflag.Flag) bool) {
	n := 0
	fs.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && f.Name != "help" && keep(f) {
			n++
		}
	})
	if n == 0 {
		b.WriteString("No flags of its own.\n")
		return
	}
	b.WriteString("| Flag | Type | Default | Description |\n|---|---|---|---|\n")
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" || !keep(f) {
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
