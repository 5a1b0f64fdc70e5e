package cmd

import (
	"io"
	"os"
	"strconv"

	"golang.org/x/term"
)

// terminalWidth is the width the table may use: 0 (the standard layout)
// unless out is a terminal; then $COLUMNS if set, else the terminal's.
// Output to a file or a pipe never depends on the terminal.
func terminalWidth(out io.Writer) int {
	f, ok := out.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return 0
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
		return w
	}
	return 0
}
