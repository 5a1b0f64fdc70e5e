package source

import (
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"
)

// yamlItemToJSON converts one YAML item, as kubectl prints it, to JSON
// without building the YAML library's node tree and generic maps (which
// cost about 10 s of CPU for 20,000 pods). It handles a subset: block
// mappings and sequences, plain scalars that yaml.v2 resolves to a string,
// a decimal int, a bool or null, plain and single-quoted scalars broken
// over lines (the emitter breaks them past 80 columns), single-line
// double-quoted scalars with common escapes, literal block scalars (| and
// |-), {} and [], and printable non-ASCII text. Anything else (flow
// collections, anchors, tags, comments, folded block scalars, blank lines
// outside literal blocks, floats, timestamps, line-break characters past
// ASCII, duplicate, long or non-string keys) makes it decline (ok false),
// and the caller converts the item with
// sigs.k8s.io/yaml as before. Where it accepts, the JSON decodes to the same
// value as sigs.k8s.io/yaml's (only key order and escaping differ).
func yamlItemToJSON(item []byte) (out []byte, ok bool) {
	return yamlItemToJSONIn(item, &yamlScratch{})
}

// yamlScratch is the space one conversion works in; the reader's workers
// reuse it from item to item (yamlScratchPool), since what it holds is
// garbage once the item's JSON is decoded.
type yamlScratch struct {
	out   []byte
	lines []fastLine
}

var yamlScratchPool = sync.Pool{New: func() any { return &yamlScratch{} }}

// yamlItemToJSONIn is yamlItemToJSON writing into sc: the JSON returned is
// sc's, valid until sc is used again.
func yamlItemToJSONIn(item []byte, sc *yamlScratch) (out []byte, ok bool) {
	for i := 0; i < len(item); {
		c := item[i]
		if c < utf8.RuneSelf {
			if (c < ' ' && c != '\n') || c == 0x7f {
				return nil, false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(item[i:])
		if !yamlPrintable(r) || size == 1 {
			return nil, false
		}
		i += size
	}
	if len(item) == 0 {
		return nil, false
	}
	// The lines are slices of item itself, read only, and nothing made of
	// them outlives the call (keys and values are copied into the JSON).
	text := unsafe.String(unsafe.SliceData(item), len(item))
	p := &yamlFast{out: sc.out[:0], lines: sc.lines[:0]}
	defer func() { sc.out, sc.lines = p.out, p.lines[:0] }()
	for len(text) > 0 {
		i := strings.IndexByte(text, '\n')
		var line string
		if i < 0 {
			line, text = text, ""
		} else {
			line, text = text[:i], text[i+1:]
		}
		p.lines = append(p.lines, fastLine{raw: line})
	}
	for i := range p.lines {
		l := &p.lines[i]
		t := strings.TrimLeft(l.raw, " ")
		l.indent, l.text = len(l.raw)-len(t), strings.TrimRight(t, " ")
	}
	// Blank lines count only inside block scalars; the item's own trailing
	// blank lines are dropped.
	for len(p.lines) > 0 && p.lines[len(p.lines)-1].text == "" {
		p.lines = p.lines[:len(p.lines)-1]
	}
	if len(p.lines) == 0 || !p.node(-1) || p.i != len(p.lines) {
		return nil, false
	}
	return p.out, true
}

type fastLine struct {
	raw    string
	indent int
	text   string // without indentation and trailing spaces
}

type yamlFast struct {
	lines []fastLine
	i     int // the next line
	out   []byte
}

// node writes the block node that starts at the current line, which must
// be indented more than parent (a sequence may sit at the parent's
// indentation when it is a mapping value: compact).
func (p *yamlFast) node(parent int) bool {
	if p.i >= len(p.lines) {
		return false
	}
	l := p.lines[p.i]
	if l.text == "" || l.text[0] == '#' {
		return false
	}
	if isDashText(l.text) {
		if l.indent < parent {
			return false
		}
		return p.sequence(l.indent)
	}
	if l.indent <= parent {
		return false
	}
	if _, _, ok := splitKey(l.text); ok {
		return p.mapping(l.indent)
	}
	return false // a scalar on a line of its own: multi-line forms are declined
}

func isDashText(t string) bool { return t == "-" || strings.HasPrefix(t, "- ") }

// mapping writes the block mapping whose keys sit at column indent.
func (p *yamlFast) mapping(indent int) bool {
	p.out = append(p.out, '{')
	var buf [16]string
	keys := buf[:0]
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		if l.indent < indent {
			break
		}
		if l.indent > indent || l.text == "" || l.text[0] == '#' || isDashText(l.text) {
			return false
		}
		k, rest, ok := splitKey(l.text)
		if !ok {
			return false
		}
		key, ok := keyString(k)
		if !ok {
			return false
		}
		for _, seen := range keys {
			if seen == key {
				return false // duplicates: yaml.v2 keeps the last, JSON would merge
			}
		}
		keys = append(keys, key)
		if len(keys) > 1 {
			p.out = append(p.out, ',')
		}
		p.out = appendJSONString(p.out, key)
		p.out = append(p.out, ':')
		p.i++
		if !p.value(indent, rest, true) {
			return false
		}
	}
	p.out = append(p.out, '}')
	return true
}

// sequence writes the block sequence whose dashes sit at column indent.
func (p *yamlFast) sequence(indent int) bool {
	p.out = append(p.out, '[')
	n := 0
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		if l.indent < indent {
			break
		}
		if l.indent > indent {
			return false
		}
		if !isDashText(l.text) {
			break // the next key of the mapping this compact sequence is in
		}
		if n > 0 {
			p.out = append(p.out, ',')
		}
		n++
		rest := strings.TrimLeft(l.text[1:], " ")
		if rest == "" {
			p.i++
			if !p.value(indent, "", false) {
				return false
			}
			continue
		}
		if _, _, ok := splitKey(rest); ok {
			// "- key: v": a mapping whose keys sit where "key" starts.
			col := indent + len(l.text) - len(rest)
			p.lines[p.i] = fastLine{raw: l.raw, indent: col, text: rest}
			if !p.mapping(col) {
				return false
			}
			continue
		}
		if isDashText(rest) {
			return false // "- - x"
		}
		p.i++
		if !p.value(indent, rest, false) {
			return false
		}
	}
	p.out = append(p.out, ']')
	return true
}

// value writes the value that follows a key or a dash at column indent:
// rest on the same line, or a block node on the next lines.
func (p *yamlFast) value(indent int, rest string, ofKey bool) bool {
	if rest == "" {
		if p.i < len(p.lines) {
			next := p.lines[p.i]
			if next.indent > indent || (ofKey && next.indent == indent && isDashText(next.text)) {
				parent := indent
				if ofKey && next.indent == indent {
					parent = indent - 1 // a compact sequence under its key
				}
				return p.node(parent)
			}
		}
		p.out = append(p.out, "null"...)
		return true
	}
	switch rest {
	case "|", "|-":
		return p.literal(indent, rest == "|-")
	case "{}":
		p.out = append(p.out, "{}"...)
		return p.noMore(indent)
	case "[]":
		p.out = append(p.out, "[]"...)
		return p.noMore(indent)
	}
	var s string
	var ok bool
	switch rest[0] {
	case '"':
		s, ok = doubleQuoted(rest)
	case '\'':
		if quotedEnd(rest) < 0 {
			rest = p.folded(indent, rest) // a long scalar the emitter broke
		}
		s, ok = singleQuoted(rest)
	default:
		multi := !p.noMore(indent)
		if multi {
			rest = p.folded(indent, rest)
		}
		v, ok := plainValue(rest)
		if !ok || (multi && v != "") || !p.noMore(indent) {
			return false
		}
		if v == "" {
			p.out = appendJSONString(p.out, rest)
		} else {
			p.out = append(p.out, v...)
		}
		return true
	}
	if !ok {
		return false
	}
	p.out = appendJSONString(p.out, s)
	return p.noMore(indent)
}

// folded joins first with its continuation lines, the lines below it
// indented more than indent, as YAML folds a plain or single-quoted
// scalar: leading and trailing spaces dropped, each line break a space.
// yaml.v2's emitter breaks scalars longer than 80 columns this way.
// Blank lines (line breaks kept) and comments are left for noMore to
// refuse; the caller checks the joined text as a whole (": " or " #"
// where lines meet, a closing quote before the end).
func (p *yamlFast) folded(indent int, first string) string {
	joined := []byte(first)
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		if l.indent <= indent || l.text == "" || l.text[0] == '#' {
			break
		}
		joined = append(append(joined, ' '), l.text...)
		p.i++
	}
	return string(joined)
}

// yamlPrintable is libyaml's is_printable for characters past ASCII, less
// the ones YAML 1.1 reads as line breaks (U+0085, U+2028, U+2029) and the
// byte order mark.
func yamlPrintable(r rune) bool {
	switch {
	case r == 0x85 || r == 0x2028 || r == 0x2029 || r == 0xFEFF:
		return false
	case r >= 0xA0 && r <= 0xD7FF, r >= 0xE000 && r <= 0xFFFD, r >= 0x10000 && r <= 0x10FFFF:
		return true
	}
	return false
}

// noMore: a value on the key's line is not continued on deeper lines.
func (p *yamlFast) noMore(indent int) bool {
	return p.i >= len(p.lines) || p.lines[p.i].indent <= indent || p.lines[p.i].text == ""
}

// literal writes a literal block scalar (| keeps one final line break, |-
// none) whose content is indented more than indent.
func (p *yamlFast) literal(indent int, strip bool) bool {
	if p.i >= len(p.lines) || p.lines[p.i].text == "" {
		return false // leading blank lines decide the indentation: declined
	}
	col := p.lines[p.i].indent
	if col <= indent {
		return false
	}
	var b strings.Builder
	blanks := 0
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		if l.text == "" {
			if l.indent != 0 {
				return false // spaces on a blank line may be content
			}
			blanks++
			p.i++
			continue
		}
		if l.indent < col {
			break
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		for range blanks {
			b.WriteByte('\n')
		}
		blanks = 0
		b.WriteString(l.raw[col:]) // trailing spaces are content
		p.i++
	}
	if p.i < len(p.lines) && blanks > 0 {
		return false // blank lines before the next key: declined, rare
	}
	s := b.String()
	if !strip {
		s += "\n"
	}
	p.out = appendJSONString(p.out, s)
	return true
}

// splitKey splits "key: rest" or "key:"; the key may be quoted.
func splitKey(t string) (key, rest string, ok bool) {
	i := 0
	if t[0] == '"' || t[0] == '\'' {
		end := quotedEnd(t)
		if end < 0 {
			return "", "", false
		}
		i = end
		if i >= len(t) || t[i] != ':' {
			return "", "", false
		}
	} else {
		i = strings.Index(t, ": ")
		if i < 0 {
			if !strings.HasSuffix(t, ":") {
				return "", "", false
			}
			i = len(t) - 1
		}
	}
	if i+1 < len(t) && t[i+1] != ' ' {
		return "", "", false
	}
	return strings.TrimRight(t[:i], " "), strings.TrimLeft(t[i+1:], " "), i > 0
}

// quotedEnd is the index after the closing quote of the scalar t starts
// with, or -1.
func quotedEnd(t string) int {
	q := t[0]
	for i := 1; i < len(t); i++ {
		switch {
		case q == '"' && t[i] == '\\':
			i++
		case t[i] == q && q == '\'' && i+1 < len(t) && t[i+1] == '\'':
			i++
		case t[i] == q:
			return i + 1
		}
	}
	return -1
}

// keyString is a key as sigs.k8s.io/yaml writes it in JSON; keys that
// yaml.v2 resolves to anything but a string or a canonical int are
// declined.
func keyString(k string) (string, bool) {
	switch k[0] {
	case '"':
		return doubleQuoted(k)
	case '\'':
		return singleQuoted(k)
	}
	if len(k) > 128 {
		return "", false // the emitter writes these as "? key"; libyaml limits simple keys
	}
	v, ok := plainValue(k)
	if !ok {
		return "", false
	}
	if v == "" {
		return k, true // resolved to the string k
	}
	if v == k && v[0] != 'n' && v[0] != 't' && v[0] != 'f' {
		return k, true // a canonical int: written back the same
	}
	return "", false
}

// plainValue resolves a plain scalar as yaml.v2 does (resolve.go) and
// returns its JSON, or "" when it is the string s itself; floats,
// timestamps, non-canonical ints, and scalars with indicators are
// declined.
func plainValue(s string) (string, bool) {
	switch s[0] {
	case ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return "", false
	case '-', '?', ':':
		if len(s) == 1 || s[1] == ' ' {
			return "", false
		}
	}
	if strings.Contains(s, " #") || strings.Contains(s, ": ") || strings.HasSuffix(s, ":") {
		return "", false
	}
	switch s {
	case "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON":
		return "true", true
	case "n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF":
		return "false", true
	case "~", "null", "Null", "NULL":
		return "null", true
	case ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", "<<":
		return "", false
	}
	switch c := s[0]; {
	case c == '.':
		if _, err := strconv.ParseFloat(s, 64); err == nil {
			return "", false
		}
	case c == '+' || c == '-' || (c >= '0' && c <= '9'):
		if looksLikeDate(s) {
			return "", false
		}
		plain := strings.ReplaceAll(s, "_", "")
		// Only these characters can make an int (any base): others are
		// not tried, which saves an error allocation for 250m or 10.0.0.1.
		if intChars(plain) {
			if n, err := strconv.ParseInt(plain, 0, 64); err == nil {
				if v := strconv.FormatInt(n, 10); v == s {
					return v, true
				}
				return "", false // octal, hex, signs, underscores: declined
			}
			if _, err := strconv.ParseUint(plain, 0, 64); err == nil {
				return "", false
			}
		}
		if yamlFloat(plain) || strings.HasPrefix(plain, "0b") || strings.HasPrefix(plain, "-0b") {
			return "", false
		}
	}
	return "", true
}

// intChars: s has only signs, hex digits and base prefixes' letters.
func intChars(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f', c >= 'A' && c <= 'F',
			c == 'x', c == 'X', c == 'o', c == 'O', c == '+', c == '-':
		default:
			return false
		}
	}
	return true
}

// looksLikeDate: yaml.v2 tries timestamps on scalars starting "NNNN-".
func looksLikeDate(s string) bool {
	if len(s) < 5 || s[4] != '-' {
		return false
	}
	for i := range 4 {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// yamlFloat is yaml.v2's yamlStyleFloat:
// ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$
func yamlFloat(s string) bool {
	i := 0
	digits := func() int {
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - j
	}
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	} else {
		if digits() == 0 {
			return false
		}
		if i < len(s) && s[i] == '.' {
			i++
			digits()
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// doubleQuoted unquotes a whole-line double-quoted scalar with the escapes
// sigs.k8s.io/yaml writes; others are declined.
func doubleQuoted(t string) (string, bool) {
	if quotedEnd(t) != len(t) {
		return "", false
	}
	body := t[1 : len(t)-1]
	if !strings.Contains(body, `\`) {
		return body, true
	}
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		switch body[i] {
		case '"', '\\', '/':
			b.WriteByte(body[i])
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '0':
			b.WriteByte(0)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'e':
			b.WriteByte(0x1b)
		case 'a':
			b.WriteByte(0x07)
		case 'v':
			b.WriteByte(0x0b)
		default:
			return "", false
		}
	}
	return b.String(), true
}

// singleQuoted unquotes a whole-line single-quoted scalar.
func singleQuoted(t string) (string, bool) {
	if quotedEnd(t) != len(t) {
		return "", false
	}
	return strings.ReplaceAll(t[1:len(t)-1], "''", "'"), true
}

// appendJSONString quotes s (ASCII, control characters escaped) for JSON.
func appendJSONString(out []byte, s string) []byte {
	out = append(out, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			out = append(out, '\\', c)
		case c < ' ' || c == 0x7f:
			out = append(out, `\u00`...)
			out = append(out, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
		default:
			out = append(out, c)
		}
	}
	return append(out, '"')
}
