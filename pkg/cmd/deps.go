package cmd

import (
	"io"

	_ "github.com/olekukonko/tablewriter"
	_ "github.com/spf13/cobra"
	_ "k8s.io/cli-runtime/pkg/genericclioptions"
	_ "k8s.io/client-go/kubernetes"
	_ "k8s.io/client-go/kubernetes/fake"
	_ "k8s.io/kubectl/pkg/util/completion"
	_ "k8s.io/kubectl/pkg/util/podutils"
)

// Main runs the plugin and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int { return 0 }
