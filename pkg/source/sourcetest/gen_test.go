package sourcetest

import (
	"os"
	"testing"
)

// TestWrite writes the files the side-by-side measurement uses when
// SCALE_PREVIEW_GEN_DIR names a directory.
func TestWrite(t *testing.T) {
	dir := os.Getenv("SCALE_PREVIEW_GEN_DIR")
	if dir == "" {
		t.Skip("set SCALE_PREVIEW_GEN_DIR to write the 20,000-pod files")
	}
	for name, write := range map[string]func(*os.File, int) error{
		"pods.json": func(f *os.File, n int) error { return WriteJSON(f, n) },
		"pods.yaml": func(f *os.File, n int) error { return WriteYAML(f, n) },
	} {
		f, err := os.Create(dir + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if err := write(f, 20000); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
}
