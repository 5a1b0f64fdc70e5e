package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scale-preview/scale-preview/pkg/printer"
	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
	"github.com/scale-preview/scale-preview/pkg/source"
)

// fileExtensions are the files kubectl reads from a directory given to -f.
var fileExtensions = []string{".json", ".yaml", ".yml"}

// expandFiles turns -f's values into files the way kubectl does: a file is
// taken as is, a directory gives its .json, .yaml and .yml files (all the
// way down with -R), "-" is standard input (once).
func expandFiles(paths []string, recursive bool) ([]string, error) {
	var files []string
	for _, p := range paths {
		if p == "-" {
			if slices.Contains(files, "-") {
				return nil, withCode(ExitUsage, "-f - (standard input) can be given only once")
			}
			files = append(files, p)
			continue
		}
		if strings.HasPrefix(p, "http://") || strings.HasPrefix(p, "https://") {
			return nil, withCode(ExitUsage, "-f %s: URLs are not read; download the file first", p)
		}
		found, err := walk(p, recursive)
		if err != nil {
			return nil, &source.FileError{Name: p, Err: err}
		}
		files = append(files, found...)
	}
	return files, nil
}

func walk(root string, recursive bool) ([]string, error) {
	info, err := os.Stat(root)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, pe.Err // the name is in the message already
		}
		return nil, err
	}
	if !info.IsDir() {
		return []string{root}, nil
	}
	var files []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != root && !recursive:
			return filepath.SkipDir
		case !d.IsDir() && slices.Contains(fileExtensions, filepath.Ext(path)):
			files = append(files, path)
		}
		return nil
	})
	if err == nil && len(files) == 0 {
		err = fmt.Errorf("the directory holds no .json, .yaml or .yml file (use -R for subdirectories)")
	}
	return files, err
}

// registerCompletions completes the object (from the -f files when given,
// else from the cluster) and the flags' values.
func registerCompletions(c *cobra.Command, o *Options) {
	live := o.completeTypeAndName([]string{"deployment", "replicaset", "replicationcontroller", "statefulset", "horizontalpodautoscaler"})
	c.ValidArgsFunction = func(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(o.Filenames) == 0 {
			return live(c, args, toComplete)
		}
		return o.completeFromFiles(args, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
	fixed := func(values []string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return values, cobra.ShellCompDirectiveNoFileComp
		}
	}
	for _, cmd := range append([]*cobra.Command{c}, c.Commands()...) { // each mode command has its own flags
		_ = cmd.RegisterFlagCompletionFunc("output", fixed(printer.Formats))
		_ = cmd.RegisterFlagCompletionFunc("kube-version", fixed(rules.Supported()))
	}
	_ = c.RegisterFlagCompletionFunc("namespace", o.completeNamespace)
	_ = c.RegisterFlagCompletionFunc("context", o.completeContext)
}

// completeFromFiles offers the workloads in the -f files: TYPE/NAME for the
// first word, NAME after a separate TYPE.
func (o *Options) completeFromFiles(args []string, toComplete string) []string {
	// cobra's __complete parses the flags twice, so -f's values repeat.
	var paths []string
	for _, p := range o.Filenames {
		if !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	files, err := expandFiles(paths, o.Recursive)
	if err != nil || slices.Contains(files, "-") {
		return nil // standard input cannot be read twice
	}
	snap, err := source.ReadFiles(files, o.In, "")
	if err != nil {
		return nil
	}
	names := objectNames(snap)
	var out []string
	switch len(args) {
	case 0:
		for _, kind := range sortedKinds(names) {
			for _, n := range names[kind] {
				if s := strings.ToLower(kind) + "/" + n; strings.HasPrefix(s, toComplete) {
					out = append(out, s)
				}
			}
		}
	case 1:
		ref, err := resolve(newOfflineMapper(), objectArg{typ: args[0], name: "x"})
		if err != nil {
			return nil
		}
		for _, n := range names[ref.Kind] {
			if strings.HasPrefix(n, toComplete) {
				out = append(out, n)
			}
		}
	}
	return out
}

func objectNames(s *snapshot.Snapshot) map[string][]string {
	m := map[string][]string{}
	for _, d := range s.Deployments {
		m[snapshot.Deployment] = append(m[snapshot.Deployment], d.Name)
	}
	for _, r := range s.ReplicaSets {
		m[snapshot.ReplicaSet] = append(m[snapshot.ReplicaSet], r.Name)
	}
	for _, r := range s.ReplicationControllers {
		m[snapshot.ReplicationController] = append(m[snapshot.ReplicationController], r.Name)
	}
	for _, st := range s.StatefulSets {
		m[snapshot.StatefulSet] = append(m[snapshot.StatefulSet], st.Name)
	}
	for _, h := range s.HPAs {
		m[kindHPA] = append(m[kindHPA], h.Name)
	}
	return m
}

func sortedKinds(m map[string][]string) []string {
	var kinds []string
	for k := range m {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	return kinds
}
