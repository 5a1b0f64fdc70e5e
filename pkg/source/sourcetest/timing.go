package sourcetest

import (
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

var (
	reUser = regexp.MustCompile(`User time \(seconds\): ([0-9.]+)`)
	reSys  = regexp.MustCompile(`System time \(seconds\): ([0-9.]+)`)
	reRSS  = regexp.MustCompile(`Maximum resident set size \(kbytes\): ([0-9]+)`)
)

// TimeV runs argv under /usr/bin/time -v with its standard output to out:
// wall seconds, user+system seconds, peak RSS in MB. A failure (any exit
// code but 0) is an error ending with the command's last words.
func TimeV(argv []string, out io.Writer) (wall, cpu, rssMB float64, err error) {
	cmd := exec.Command("/usr/bin/time", append([]string{"-v"}, argv...)...)
	cmd.Stdout = out
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	if err = cmd.Run(); err != nil {
		s := stderr.String()
		return 0, 0, 0, fmt.Errorf("%v: %s", err, s[max(0, len(s)-600):])
	}
	wall = time.Since(start).Seconds()
	num := func(re *regexp.Regexp) float64 {
		m := re.FindStringSubmatch(stderr.String())
		if m == nil {
			return 0
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		return v
	}
	return wall, num(reUser) + num(reSys), num(reRSS) / 1024, nil
}

// Median is the middle of v (the upper one of an even count).
func Median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
